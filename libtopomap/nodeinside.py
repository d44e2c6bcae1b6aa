"""The inside of a compute node: packages, NUMA domains, L3 groups, cores, and where a process is bound.

A :class:`NodeInside` labels every processing unit (PU, a hardware thread: the CPU numbers of
``os.sched_getaffinity``) with its package, NUMA domain, L3 group and core.  It is read from hwloc's
XML (``lstopo --of xml``, hwloc 1.x or 2.x; :func:`parse_hwloc_xml`) when ``lstopo`` is installed,
else from Linux's ``/sys/devices/system/cpu`` and ``/sys/devices/system/node``
(:func:`read_sysfs`).  :func:`read_node` tries both, in that order.

Everything here is plain Python on a few hundred integers per node; :mod:`libtopomap.autotopo`
turns the tree into vertices below each host.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from ._textio import format_ranges
from .errors import FormatError

__all__ = ["LEVELS", "NodeInside", "parse_cpulist", "format_cpulist", "parse_hwloc_xml", "read_sysfs",
           "read_node", "binding"]

#: The levels below a host, outermost first (a node's :attr:`NodeInside.levels` is a subsequence).
LEVELS = ("package", "numa", "l3", "core")


@dataclass(frozen=True)
class NodeInside:
    """The hierarchy of one compute node, as one label per processing unit (PU).

    Parameters
    ----------
    cpus : tuple of int
        OS numbers of the PUs, ascending (the numbers of ``os.sched_getaffinity``).
    labels : dict of str -> tuple of int
        For each level of :data:`LEVELS` that is known, the group of every PU (same order as
        ``cpus``); group numbers are arbitrary integers (OS indices, core ids...).  ``"core"`` is
        required (the cores are the slot vertices).
    source : str
        ``"hwloc"`` or ``"sysfs"`` (or ``"recorded"``).

    Notes
    -----
    Groups nest by prefix: a core is identified by its (package, numa, l3, core) labels, so a NUMA
    domain that spans two packages becomes one group per package.  A level that is not known (no L3
    in the description, say) is left out of :attr:`levels`.
    """

    cpus: tuple
    labels: dict
    source: str = "recorded"

    def __post_init__(self):
        n = len(self.cpus)
        if n == 0:
            raise FormatError("a node description has no processing unit")
        if list(self.cpus) != sorted(set(self.cpus)):
            raise FormatError("a node description lists processing units out of order or twice")
        if "core" not in self.labels:
            raise FormatError("a node description needs the core of every processing unit")
        for level, lab in self.labels.items():
            if level not in LEVELS:
                raise FormatError(f"unknown node level {level!r}; expected some of {', '.join(LEVELS)}")
            if len(lab) != n:
                raise FormatError(f"node level {level!r} labels {len(lab)} processing units of {n}")

    @property
    def levels(self):
        """The known levels, outermost first (e.g. ``("package", "numa", "l3", "core")``)."""
        return tuple(lv for lv in LEVELS if lv in self.labels)

    def groups(self):
        """The tree of groups, level by level.

        Returns
        -------
        list of (level, keys, parent, cpus)
            One entry per known level, outermost first.  ``keys`` are the groups of that level (tuples
            of labels from the outermost level), numbered in order of their first PU; ``parent[i]`` is
            the index of group ``i``'s group at the previous level (-1 at the first level);
            ``cpus[i]`` is the tuple of PUs of group ``i``.
        """
        out = []
        prev_index = None
        chains = [()] * len(self.cpus)
        for level in self.levels:
            lab = self.labels[level]
            chains = [c + (lab[i],) for i, c in enumerate(chains)]
            index, cpus, parent = {}, [], []
            for i, key in enumerate(chains):
                k = index.get(key)
                if k is None:
                    k = index[key] = len(cpus)
                    cpus.append([])
                    parent.append(prev_index[key[:-1]] if prev_index is not None else -1)
                cpus[k].append(self.cpus[i])
            out.append((level, list(index), parent, [tuple(c) for c in cpus]))
            prev_index = index
        return out

    def to_dict(self):
        """A JSON-serialisable dict (read back by :meth:`from_dict`)."""
        return {"cpus": format_cpulist(self.cpus), "source": self.source,
                "labels": {k: list(v) for k, v in self.labels.items()}}

    @classmethod
    def from_dict(cls, d):
        return cls(tuple(parse_cpulist(d["cpus"])), {k: tuple(v) for k, v in d["labels"].items()},
                   d.get("source", "recorded"))


def parse_cpulist(text):
    """CPU numbers of a Linux CPU list (``"0-3,8,10-11"``; empty text is no CPU).

    Examples
    --------
    >>> parse_cpulist("0-2,5")
    [0, 1, 2, 5]
    """
    out = []
    for part in str(text).strip().split(","):
        part = part.strip()
        if not part:
            continue
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m or (m.group(2) is not None and int(m.group(2)) < int(m.group(1))):
            raise FormatError(f"bad CPU list {text!r} (expected e.g. 0-3,8)")
        lo = int(m.group(1))
        hi = int(m.group(2) or lo)
        from ._limits import check_vertex_count  # a range of 10**20 CPUs: refused before it is built

        check_vertex_count(len(out) + hi - lo + 1, f"the CPU list {str(text)[:40]!r}", error=FormatError, unit="CPUs")
        out.extend(range(lo, hi + 1))
    return sorted(set(out))


def format_cpulist(cpus):
    """The shortest Linux CPU list of ``cpus``.

    Examples
    --------
    >>> format_cpulist([0, 1, 2, 5, 7, 8])
    '0-2,5,7-8'
    """
    return format_ranges(sorted(set(int(c) for c in cpus)))


# --------------------------------------------------------------------------------------- hwloc XML
def _hwloc_cpuset(text):
    """PUs of an hwloc bitmap (``0x0000000f`` or ``0xffffffff,0x0000000f``, most significant word first)."""
    if not text:
        return None
    value = 0
    for word in text.split(","):
        word = word.strip()
        if (not word.lower().startswith("0x") or not all(c in "0123456789abcdefABCDEF" for c in word[2:])
                or len(word) < 3):
            return None
        value = (value << 32) | int(word, 16)
    return frozenset(i for i in range(value.bit_length()) if value >> i & 1)


def parse_hwloc_xml(text, *, path="<hwloc xml>"):
    """Read the output of ``lstopo --of xml`` (hwloc 1.x or 2.x).

    Packages, NUMA nodes (memory children in hwloc 2, parents in hwloc 1), L3 caches
    (``L3Cache``, or ``Cache`` with ``depth="3"``), cores and PUs are matched by their cpusets, so
    both layouts give the same labels.

    Parameters
    ----------
    text : str
    path : str
        For messages.

    Returns
    -------
    NodeInside

    Raises
    ------
    FormatError
        Not XML, or no PU object.
    """
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise FormatError(f"not an hwloc XML topology: {e}", path=path, line=getattr(e, "position", (None,))[0])
    groups = {lv: [] for lv in LEVELS}
    pus = []
    for obj in root.iter("object"):
        typ = obj.get("type", "")
        cs = _hwloc_cpuset(obj.get("cpuset"))
        if typ == "PU":
            pus.append(int(obj.get("os_index", len(pus))))
            continue
        if cs is None:
            continue
        if typ == "Package" or typ == "Socket":
            level = "package"
        elif typ == "NUMANode":
            level = "numa"
        elif typ == "L3Cache" or (typ == "Cache" and obj.get("depth") == "3"):
            level = "l3"
        elif typ == "Core":
            level = "core"
        else:
            continue
        groups[level].append((int(obj.get("os_index", len(groups[level]))), cs))
    if not pus:
        raise FormatError("no PU object in the hwloc XML", path=path)
    cpus = tuple(sorted(set(pus)))
    labels = {}
    for level, objs in groups.items():
        if not objs:
            continue
        lab = []
        for c in cpus:
            hit = [k for k, (_, cs) in enumerate(objs) if c in cs]
            lab.append(hit[0] if hit else -1)
        labels[level] = tuple(lab)
    if "core" not in labels:
        labels["core"] = cpus
    return NodeInside(cpus, labels, "hwloc")


# --------------------------------------------------------------------------------------- sysfs
def _read(path):
    with open(path, encoding="ascii") as f:
        return f.read().strip()


def read_sysfs(root="/sys/devices/system"):
    """Read the node from Linux's ``cpu/`` and ``node/`` directories under ``root``.

    Per online CPU: ``topology/physical_package_id`` (package), ``topology/core_cpus_list`` or
    ``thread_siblings_list`` (core), the ``cache/index*`` whose ``level`` is 3 (``shared_cpu_list``:
    the L3 group), and the ``node/node<k>/cpulist`` that holds it (NUMA).

    Parameters
    ----------
    root : str
        ``/sys/devices/system``, or a copy of it (tests).

    Returns
    -------
    NodeInside
        The online CPUs only.

    Raises
    ------
    FormatError
        The CPU directory is missing or unreadable.
    """
    cpu_dir = os.path.join(root, "cpu")
    try:
        online = parse_cpulist(_read(os.path.join(cpu_dir, "online")))
    except OSError:
        try:
            online = sorted(int(d[3:]) for d in os.listdir(cpu_dir) if re.fullmatch(r"cpu\d+", d))
        except OSError as e:
            raise FormatError(f"cannot read the CPUs: {e.strerror}", path=cpu_dir) from None
    if not online:
        raise FormatError("no online CPU", path=cpu_dir)
    numa_of = {}
    node_dir = os.path.join(root, "node")
    try:
        nodes = sorted(int(d[4:]) for d in os.listdir(node_dir) if re.fullmatch(r"node\d+", d))
    except OSError:
        nodes = []
    for k in nodes:
        try:
            for c in parse_cpulist(_read(os.path.join(node_dir, f"node{k}", "cpulist"))):
                numa_of[c] = k
        except OSError:
            continue
    pkg, core, l3 = [], [], []
    for c in online:
        top = os.path.join(cpu_dir, f"cpu{c}", "topology")
        try:
            pkg.append(int(_read(os.path.join(top, "physical_package_id"))))
        except (OSError, ValueError):
            pkg.append(0)
        sib = None
        for fname in ("core_cpus_list", "thread_siblings_list"):
            try:
                sib = min(parse_cpulist(_read(os.path.join(top, fname))))
                break
            except (OSError, ValueError, FormatError):
                continue
        core.append(c if sib is None else sib)
        group = None
        cache = os.path.join(cpu_dir, f"cpu{c}", "cache")
        try:
            entries = sorted(os.listdir(cache))
        except OSError:
            entries = []
        for idx in entries:
            try:
                if _read(os.path.join(cache, idx, "level")) == "3":
                    group = min(parse_cpulist(_read(os.path.join(cache, idx, "shared_cpu_list"))))
                    break
            except (OSError, ValueError, FormatError):
                continue
        l3.append(group)
    labels = {"package": tuple(pkg)}
    if numa_of:
        labels["numa"] = tuple(numa_of.get(c, -1) for c in online)
    if all(g is not None for g in l3):
        labels["l3"] = tuple(l3)
    labels["core"] = tuple(core)
    return NodeInside(tuple(online), labels, "sysfs")


def read_node(*, lstopo=None, sysfs="/sys/devices/system", timeout=20):
    """This node's hierarchy: hwloc's ``lstopo --of xml`` when installed, else sysfs, else None.

    Parameters
    ----------
    lstopo : str, optional
        The ``lstopo`` program (default: ``lstopo-no-graphics`` or ``lstopo`` on ``PATH``).
    sysfs : str
        Root of the sysfs CPU and node directories.
    timeout : float
        Seconds ``lstopo`` may run.

    Returns
    -------
    NodeInside or None
        None when neither source can be read (not Linux, no hwloc).  A failing ``lstopo`` is a
        ``RuntimeWarning`` and sysfs is read instead.
    """
    prog = lstopo or shutil.which("lstopo-no-graphics") or shutil.which("lstopo")
    if prog:
        try:
            out = subprocess.run([prog, "--of", "xml", "-"], capture_output=True, text=True, timeout=timeout,
                                 check=True).stdout
            return parse_hwloc_xml(out, path=f"{prog} --of xml")
        except (OSError, subprocess.SubprocessError, FormatError) as e:  # hwloc broken: sysfs still knows
            warnings.warn(f"{prog} --of xml failed ({type(e).__name__}: {e}); reading {sysfs} instead",
                          RuntimeWarning, stacklevel=2)
    try:
        return read_sysfs(sysfs)
    except FormatError:
        return None


def binding():
    """PUs this process may run on (``os.sched_getaffinity``), or None where the OS does not say."""
    try:
        return tuple(sorted(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return None
