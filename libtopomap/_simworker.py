"""Run one SimGrid simulation described by a JSON job; print the result as JSON.

SimGrid's engine can be created only once per process, so :mod:`libtopomap.simulate` starts this module
as ``python -m libtopomap._simworker`` for every simulation.  Nothing here is public API.  The job and
the result: docs/simulation.rst, "The simulation worker's job".
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

__all__ = []


def _platform_xml(job):
    """SimGrid platform (XML, DTD 4.1): one zone, a host per slot vertex, a router per other vertex."""
    routing = job["routing"]
    out = ["<?xml version='1.0'?>",
           '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
           '<platform version="4.1">',
           f'<zone id="net" routing="{routing}">']
    for v, h in enumerate(job["is_host"]):
        out.append(f'<host id="v{v}" speed="1e11"/>' if h else f'<router id="v{v}"/>')
    for j, (bw, lat) in enumerate(zip(job["bandwidth"], job["latency"])):
        out.append(f'<link id="l{j}" bandwidth="{float(bw)!r}Bps" latency="{float(lat)!r}s" '
                   'sharing_policy="SPLITDUPLEX"/>')
    if routing == "Full":
        for s, d, path in job["routes"]:
            ctn = "".join(f'<link_ctn id="l{abs(k) - 1}" direction="{"UP" if k > 0 else "DOWN"}"/>'
                          for k in path)
            out.append(f'<route src="v{s}" dst="v{d}" symmetrical="NO">{ctn}</route>')
    else:
        # One-hop routes; the zone computes shortest paths over them (hosts may be on the way: direct
        # networks such as tori have no routers).
        for j, (u, v) in enumerate(job["links"]):
            out.append(f'<route src="v{u}" dst="v{v}" symmetrical="YES"><link_ctn id="l{j}" direction="UP"/></route>')
    out.append("</zone></platform>")
    return "\n".join(out)


def run(job):
    """Simulate ``job`` (a dict, see the module docstring) and return the result dict."""
    import simgrid as sg

    t0 = time.perf_counter()
    cfg = [f"network/model:{job.get('model', 'CM02')}",
           "network/crosstraffic:0",   # full-duplex links: no ACK traffic against the data
           "network/TCP-gamma:0"]      # no TCP window bound: rates are set by bandwidth sharing only
    if job.get("loopback_bandwidth"):
        cfg.append(f"network/loopback-bw:{float(job['loopback_bandwidth'])!r}")
    if job.get("loopback_latency") is not None:
        cfg.append(f"network/loopback-lat:{float(job['loopback_latency'])!r}")
    engine = sg.Engine([sys.argv[0] if sys.argv else "simworker", "--log=root.thres:critical"]
                       + [f"--cfg={c}" for c in cfg])
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
        f.write(_platform_xml(job))
        xml_path = f.name
    try:
        engine.load_platform(xml_path)
    finally:
        os.unlink(xml_path)
    hosts = {h.name: h for h in engine.all_hosts}
    placement = job["placement"]
    rank_host = [hosts[f"v{v}"] for v in placement]
    nranks = len(placement)
    steps = job["steps"]
    repeat = int(job.get("repeat", 1))

    # Per rank and step: the messages it sends and the ranks it receives from.
    sends = [[[] for _ in steps] for _ in range(nranks)]
    recvs = [[[] for _ in steps] for _ in range(nranks)]
    n_messages = 0
    for k, step in enumerate(steps):
        for s, d, nbytes in step:
            sends[s][k].append((d, nbytes))
            recvs[d][k].append(s)
            n_messages += 1
    # One mailbox per ordered pair: messages of one pair match in step order even when a sender runs
    # ahead of its receiver.
    mailbox = {}
    for s in range(nranks):
        for k in range(len(steps)):
            for d, _ in sends[s][k]:
                if (s, d) not in mailbox:
                    mailbox[s, d] = sg.Mailbox.by_name(f"{s}>{d}")
    nsteps = len(steps)
    step_end = [0.0] * (nsteps * repeat)
    want_links = bool(job.get("link_bytes", False))
    nlinks = len(job["links"])
    link_up = [0.0] * nlinks
    link_down = [0.0] * nlinks

    def measure_links():
        # Routes are computed when the platform is sealed at the start of the run, so ask from an actor.
        seen = {}
        for k, step in enumerate(steps):
            for s, d, nbytes in step:
                a, b = placement[s], placement[d]
                if a == b:
                    continue
                path = seen.get((a, b))
                if path is None:
                    path = seen[a, b] = [lk.name for lk in rank_host[s].route_to(rank_host[d])[0]]
                for name in path:
                    base, _, direction = name.partition("_")
                    j = int(base[1:])
                    if direction == "DOWN":
                        link_down[j] += nbytes * repeat
                    else:
                        link_up[j] += nbytes * repeat

    def rank_actor(r):
        def body():
            if r == 0 and want_links:
                measure_links()
            for it in range(repeat):
                for k in range(nsteps):
                    comms, pending = [], []
                    for d, nbytes in sends[r][k]:
                        comms.append(mailbox[r, d].put_async(k, int(nbytes)))
                    for s in recvs[r][k]:
                        comm, data = mailbox[s, r].get_async()
                        comms.append(comm)
                        pending.append(data)  # the handle must outlive the wait (3.32 binding bug)
                    if comms:
                        sg.Comm.wait_all(comms)
                    del pending
                    idx = it * nsteps + k
                    now = sg.Engine.clock
                    if now > step_end[idx]:
                        step_end[idx] = now
        return body

    for r in range(nranks):
        sg.Actor.create(f"rank{r}", rank_host[r], rank_actor(r))
    t1 = time.perf_counter()
    engine.run()
    t2 = time.perf_counter()
    return {"time": float(engine.clock), "step_end": step_end, "n_messages": n_messages * repeat,
            "link_bytes_up": link_up if want_links else None,
            "link_bytes_down": link_down if want_links else None,
            "setup_s": t1 - t0, "run_s": t2 - t1, "simgrid_version": str(sg.simgrid_version)}


def main():
    job = json.load(sys.stdin)
    try:
        result = run(job)
    except Exception as exc:  # reported to the parent, which raises it as a LibTopoMapError
        result = {"error": f"{type(exc).__name__}: {exc}"}
    sys.stdout.write("\n" + "@@SIMWORKER@@" + json.dumps(result) + "\n")
    sys.stdout.flush()
    # SimGrid's exit handlers can be slow or noisy at this scale; the result is out already.
    os._exit(0)


if __name__ == "__main__":
    main()
