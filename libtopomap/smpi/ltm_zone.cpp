/* libtopomap's SimGrid 3.32 platform library: a netzone that routes by a next-hop table.
 *
 * Built once by libtopomap.smpi.platform (g++ -shared -fPIC ... -lsimgrid) and copied next to each platform's
 * table as P.so, with the table in P.so.table (written by libtopomap.smpi.platform, format below); SimGrid's
 * Engine::load_platform("P.so") (smpirun -platform P.so) dlopens it and calls load_platform(), which finds its own
 * file with dladdr and reads the table beside it.
 *
 * The zone holds the platform's hosts (netpoint i = host i) and links; the topology's other vertices (switches,
 * hosts outside the allocation) are only rows of the table.  get_local_route(src, dst) walks from src's vertex:
 * at vertex v toward destination host d the table gives the port p of v's outgoing arc (arc = indptr[v] + p), the
 * arc gives its link, its direction (UP: link_u -> link_v, as in the XML export) and the next vertex; the walk ends
 * at d's vertex.  Memory: the table is mmap'ed (hosts x vertices ports of 1, 2 or 4 bytes).  A host to itself takes
 * the network model's loopback link, as in a Full zone.
 *
 * Table (little endian, every section starts at a multiple of 8 bytes):
 *   char magic[8] = "LTMZONE1"
 *   int64 n_hosts, n_vertices, n_arcs, n_links, sharing (0 FATPIPE, 1 SHARED, 2 SPLITDUPLEX), port_bytes,
 *         names_bytes, speed_bytes
 *   int32 indptr[n_vertices + 1]; int32 arc_head[n_arcs]; int32 arc_link[n_arcs]; uint8 arc_up[n_arcs]
 *   float64 link_bw[n_links]; float64 link_lat[n_links]
 *   int32 host_vertex[n_hosts]; int32 host_cores[n_hosts]
 *   char names[names_bytes] (NUL-terminated host names); char speed[speed_bytes] (NUL-terminated, e.g. "100Gf")
 *   uintN port[n_hosts][n_vertices] (N = 8 x port_bytes; all ones: no route through this vertex)
 */
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>
#include <xbt/asserts.h>
#include <xbt/config.hpp>

#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace sg4 = simgrid::s4u;
namespace kr  = simgrid::kernel::routing;

extern "C" void load_platform(const sg4::Engine& e);

namespace {

struct Table {
  const char* base = nullptr;
  size_t size      = 0;
  size_t pos       = 0;
  std::string path;

  template <typename T> const T* take(int64_t count)
  {
    pos = (pos + 7) & ~size_t(7);
    size_t bytes = size_t(count) * sizeof(T);
    if (count < 0 || pos + bytes > size)
      xbt_die("libtopomap zone: table %s is truncated (need %zu bytes at offset %zu of %zu)", path.c_str(), bytes, pos,
              size);
    const T* out = reinterpret_cast<const T*>(base + pos);
    pos += bytes;
    return out;
  }
};

class LtmZone : public kr::NetZoneImpl {
public:
  explicit LtmZone(const std::string& name) : kr::NetZoneImpl(name) {}

  int64_t n_hosts = 0, n_vertices = 0, n_arcs = 0, n_links = 0, sharing = 2, port_bytes = 1;
  const int32_t* indptr      = nullptr;
  const int32_t* arc_head    = nullptr;
  const int32_t* arc_link    = nullptr;
  const uint8_t* arc_up      = nullptr;
  const int32_t* host_vertex = nullptr;
  const void* ports          = nullptr;
  std::vector<simgrid::kernel::resource::StandardLinkImpl*> arc_impl; // per arc: the link (its direction)
  std::vector<double> arc_lat;
  simgrid::kernel::resource::StandardLinkImpl* loopback = nullptr;
  double loopback_lat                                     = 0.0;

  int64_t port(int64_t d, int64_t v) const
  {
    size_t i = size_t(d) * size_t(n_vertices) + size_t(v);
    switch (port_bytes) {
      case 1: {
        uint8_t p = static_cast<const uint8_t*>(ports)[i];
        return p == UINT8_MAX ? -1 : p;
      }
      case 2: {
        uint16_t p = static_cast<const uint16_t*>(ports)[i];
        return p == UINT16_MAX ? -1 : p;
      }
      default: {
        uint32_t p = static_cast<const uint32_t*>(ports)[i];
        return p == UINT32_MAX ? -1 : int64_t(p);
      }
    }
  }

  void get_local_route(const kr::NetPoint* src, const kr::NetPoint* dst, kr::Route* into, double* latency) override
  {
    int64_t s = int64_t(src->id());
    int64_t d = int64_t(dst->id());
    xbt_assert(s < n_hosts && d < n_hosts, "libtopomap zone: %s or %s is not a host of the table", src->get_cname(),
               dst->get_cname());
    if (s == d) {
      if (loopback) {
        into->link_list_.push_back(loopback);
        if (latency)
          *latency += loopback_lat;
      }
      return;
    }
    int64_t v = host_vertex[s];
    int64_t t = host_vertex[d];
    for (int64_t step = 0; v != t; step++) {
      int64_t p = port(d, v);
      xbt_assert(p >= 0 && step < n_vertices, "libtopomap zone: no route from %s to %s (stranded at vertex %ld)",
                 src->get_cname(), dst->get_cname(), long(v));
      int64_t a = indptr[v] + p;
      into->link_list_.push_back(arc_impl[a]);
      if (latency)
        *latency += arc_lat[a];
      v = arc_head[a];
    }
  }
};

std::string table_path()
{
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&load_platform), &info) == 0 || info.dli_fname == nullptr)
    xbt_die("libtopomap zone: cannot find the path of this platform library (dladdr failed)");
  return std::string(info.dli_fname) + ".table";
}

} // namespace

void load_platform(const sg4::Engine& e)
{
  Table tb;
  tb.path = table_path();
  int fd  = open(tb.path.c_str(), O_RDONLY);
  if (fd < 0)
    xbt_die("libtopomap zone: cannot open the routing table %s: %s (write it with libtopomap smpi platform -o P.so)",
            tb.path.c_str(), strerror(errno));
  struct stat st;
  fstat(fd, &st);
  tb.size = size_t(st.st_size);
  void* map = tb.size ? mmap(nullptr, tb.size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  close(fd);
  if (map == MAP_FAILED)
    xbt_die("libtopomap zone: cannot map %s: %s", tb.path.c_str(), strerror(errno));
  tb.base = static_cast<const char*>(map); // kept mapped for the whole simulation

  const char* magic = tb.take<char>(8);
  if (std::memcmp(magic, "LTMZONE1", 8) != 0)
    xbt_die("libtopomap zone: %s is not a libtopomap routing table (version 1)", tb.path.c_str());
  const int64_t* head = tb.take<int64_t>(8);

  sg4::NetZone* root = e.get_netzone_root();
  auto* zone         = new LtmZone("libtopomap");
  if (root != nullptr)
    zone->get_iface()->set_parent(root);
  zone->n_hosts        = head[0];
  zone->n_vertices     = head[1];
  zone->n_arcs         = head[2];
  zone->n_links        = head[3];
  zone->sharing        = head[4];
  zone->port_bytes     = head[5];
  int64_t names_bytes  = head[6];
  int64_t speed_bytes  = head[7];
  xbt_assert(zone->port_bytes == 1 || zone->port_bytes == 2 || zone->port_bytes == 4,
             "libtopomap zone: bad port width %ld in %s", long(zone->port_bytes), tb.path.c_str());
  zone->indptr            = tb.take<int32_t>(zone->n_vertices + 1);
  zone->arc_head          = tb.take<int32_t>(zone->n_arcs);
  zone->arc_link          = tb.take<int32_t>(zone->n_arcs);
  zone->arc_up            = tb.take<uint8_t>(zone->n_arcs);
  const double* link_bw   = tb.take<double>(zone->n_links);
  const double* link_lat  = tb.take<double>(zone->n_links);
  zone->host_vertex       = tb.take<int32_t>(zone->n_hosts);
  const int32_t* cores    = tb.take<int32_t>(zone->n_hosts);
  const char* names       = tb.take<char>(names_bytes);
  const char* speed       = tb.take<char>(speed_bytes);
  zone->ports             = tb.take<char>(zone->n_hosts * zone->n_vertices * zone->port_bytes);
  xbt_assert(speed_bytes > 0 && speed[speed_bytes - 1] == '\0', "libtopomap zone: bad speed in %s", tb.path.c_str());

  // Hosts first, in table order: netpoint id i is host i.
  const char* name = names;
  const char* end  = names + names_bytes;
  for (int64_t i = 0; i < zone->n_hosts; i++) {
    size_t len = strnlen(name, size_t(end - name));
    xbt_assert(name + len < end, "libtopomap zone: host names of %s are truncated", tb.path.c_str());
    sg4::Host* h = zone->get_iface()->create_host(std::string(name, len), std::string(speed));
    h->set_core_count(cores[i]);
    h->seal();
    xbt_assert(h->get_netpoint()->id() == static_cast<unsigned long>(i),
               "libtopomap zone: host %s got netpoint %lu, not %ld", h->get_cname(), h->get_netpoint()->id(), long(i));
    name += len + 1;
  }

  // Links: lJ (SPLITDUPLEX: lJ_UP from link_u[J] to link_v[J], lJ_DOWN back), as the XML export names them.
  std::vector<simgrid::kernel::resource::StandardLinkImpl*> up(zone->n_links), down(zone->n_links);
  std::vector<double> lat(zone->n_links);
  for (int64_t j = 0; j < zone->n_links; j++) {
    std::string id = "l" + std::to_string(j);
    if (zone->sharing == 2) {
      sg4::SplitDuplexLink* l = zone->get_iface()->create_split_duplex_link(id, link_bw[j]);
      l->set_latency(link_lat[j]);
      l->seal();
      up[j]   = l->get_link_up()->get_impl();
      down[j] = l->get_link_down()->get_impl();
      lat[j]  = l->get_link_up()->get_latency();
    } else {
      sg4::Link* l = zone->get_iface()->create_link(id, link_bw[j]);
      l->set_sharing_policy(zone->sharing == 1 ? sg4::Link::SharingPolicy::SHARED : sg4::Link::SharingPolicy::FATPIPE);
      l->set_latency(link_lat[j]);
      l->seal();
      up[j] = down[j] = l->get_impl();
      lat[j]          = l->get_latency();
    }
  }
  zone->arc_impl.resize(zone->n_arcs);
  zone->arc_lat.resize(zone->n_arcs);
  for (int64_t a = 0; a < zone->n_arcs; a++) {
    int32_t j = zone->arc_link[a];
    xbt_assert(j >= 0 && j < zone->n_links, "libtopomap zone: arc %ld has no link in %s", long(a), tb.path.c_str());
    zone->arc_impl[a] = zone->arc_up[a] ? up[j] : down[j];
    zone->arc_lat[a]  = lat[j];
  }

  // A host to itself: the network model's loopback, as a Full zone's seal adds it.
  sg4::Link* lo = sg4::Link::by_name_or_null("__loopback__");
  if (lo != nullptr) {
    zone->loopback     = lo->get_impl();
    zone->loopback_lat = lo->get_latency();
  }
  zone->get_iface()->seal();
}
