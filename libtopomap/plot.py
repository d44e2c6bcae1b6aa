"""Pictures of mappings: adjacency matrices, link loads, hop counts, simulated times.

Every function returns a :class:`matplotlib.figure.Figure` built without pyplot, and :func:`save` writes
it as PNG and SVG; needs the ``plot`` extra (matplotlib).  What each picture shows: docs/simulation.rst,
"Plots".
"""

from __future__ import annotations

import math
import os

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from .commgraph import as_commgraph
from .errors import ArgumentError, LibTopoMapError

__all__ = ["plot_adjacency", "plot_link_loads", "plot_hops", "plot_times", "layout", "save", "hop_counts",
           "format_bytes", "require_matplotlib"]

_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b")


def require_matplotlib():
    """Raise a one-line error naming the extra to install when matplotlib cannot be imported.

    Raises
    ------
    LibTopoMapError
        ``plots need matplotlib: pip install 'libtopomap[plot]'``.
    """
    try:
        import matplotlib  # noqa: F401
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: F401
        from matplotlib.figure import Figure  # noqa: F401
    except ImportError:
        raise LibTopoMapError("plots need matplotlib: pip install 'libtopomap[plot]'") from None


def _figure(figsize):
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save(fig, path, *, formats=("png", "svg"), dpi=150):
    """Write ``fig`` once per format; ``path`` is a file stem (an extension ``.png``/``.svg`` is dropped).

    Returns
    -------
    list of str
        The files written.
    """
    stem, ext = os.path.splitext(str(path))
    if ext.lower() not in (".png", ".svg", ".pdf"):
        stem = str(path)
    d = os.path.dirname(stem)
    if d and not os.path.isdir(d):  # not created: a typo in the folder would scatter files
        raise ArgumentError(f"cannot write {stem}.*: folder {d!r} does not exist")
    out = []
    for fmt in formats:
        p = f"{stem}.{fmt}"
        fig.savefig(p, format=fmt, dpi=dpi)
        out.append(p)
    return out


def format_bytes(n):
    """``1024 -> "1 KiB"``, ``1048576 -> "1 MiB"``, ``300 -> "300 B"``."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:g} {unit}" if n == int(n) else f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:g} GiB"  # pragma: no cover


# ------------------------------------------------------------------------------------------ adjacency
def _pattern(matrix):
    a = sp.csr_matrix(matrix)
    a = (a + a.T).tocsr()
    a.data[:] = 1
    a.setdiag(0)
    a.eliminate_zeros()
    return a


def _bandwidth(a):
    c = a.tocoo()
    return int(np.abs(c.row - c.col).max()) if c.nnz else 0


def _spy(ax, a, title, label):
    n = a.shape[0]
    ms = float(np.clip(220.0 / max(n, 1), 0.3, 6.0))
    ax.spy(a, marker="s", markersize=ms, color="#1f3b73", markeredgewidth=0)
    ax.set_title(f"{title}\nbandwidth {_bandwidth(a)}", fontsize=10)
    ax.set_xlabel(label)
    ax.set_ylabel(label)
    ax.xaxis.set_ticks_position("bottom")


def plot_adjacency(topology=None, graph=None, *, title=None):
    """Adjacency matrices before and after Reverse Cuthill-McKee ordering (ICS'11, Figure 3).

    Parameters
    ----------
    topology : Topology, optional
        Its vertex adjacency (second row, or the only row without ``graph``).
    graph : CommGraph or anything :func:`~libtopomap.as_commgraph` accepts, optional
        The communication graph (first row), symmetrised.
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
        Left column the original numbering, right column the RCM numbering; each panel's title gives the
        matrix bandwidth (largest ``|i - j|`` of a nonzero), which RCM reduces.

    References
    ----------
    T. Hoefler and M. Snir, ICS'11, section 3.3 and Figure 3.
    """
    rows = []
    if graph is not None:
        g = as_commgraph(graph)
        rows.append(("Communication graph", "process", _pattern(g.to_scipy())))
    if topology is not None:
        rows.append(("Network", "vertex", _pattern(topology.adjacency)))
    if not rows:
        raise ArgumentError("plot_adjacency needs a topology, a communication graph or both")
    fig = _figure((9.0, 4.4 * len(rows) + 0.4))
    axes = fig.subplots(len(rows), 2, squeeze=False)
    for (name, label, a), (ax0, ax1) in zip(rows, axes):
        order = csgraph.reverse_cuthill_mckee(a, symmetric_mode=True)
        _spy(ax0, a, f"{name}, original order", label)
        _spy(ax1, a[order][:, order], f"{name}, RCM order", f"{label} (RCM position)")
    fig.suptitle(title or "Adjacency matrices before and after Reverse Cuthill-McKee ordering", fontsize=12)
    return fig


# ------------------------------------------------------------------------------------------ layouts
def _grid_coords(dims):
    """Plot position of each grid point: 1-D on a circle/line, 2-D as is, 3-D as planes in a grid."""
    n = int(np.prod(dims))
    c = np.array(np.unravel_index(np.arange(n), dims)).T.astype(float)
    if len(dims) == 1:
        return np.column_stack([c[:, 0], np.zeros(n)])
    if len(dims) == 2:
        return np.column_stack([c[:, 1], -c[:, 0]])
    a, b, k = dims
    per_row = int(math.ceil(math.sqrt(a)))
    px, py = c[:, 0] % per_row, c[:, 0] // per_row
    return np.column_stack([px * (k + 1.5) + c[:, 2], -(py * (b + 1.5) + c[:, 1])])


def layout(topology, dims=None):
    """Plot positions ``(n_vertices, 2)`` and a description of how they were chosen.

    Grid networks (``attrs["dims"]`` with 1 to 3 dimensions, possibly concentrated) get their grid;
    ring-based networks (``random_shortcut_ring``, ``circulant``) a circle in vertex order; networks
    with switches layers by distance from the hosts; anything else networkx's force layout.  ``dims``
    (e.g. ``(8, 8)``) forces a grid layout for a grid network read from a file without its attributes.

    Returns
    -------
    (numpy.ndarray, str)
    """
    import networkx as nx

    n = topology.n_vertices
    attrs = topology.attrs or {}
    if dims is not None:
        from .generators.grid import parse_dims

        dims = list(parse_dims(dims))
    else:
        dims = attrs.get("dims")
    gen = attrs.get("generator")
    if dims and 1 <= len(dims) <= 3 and n >= int(np.prod(dims)):
        m = int(np.prod(dims))
        pos = np.zeros((n, 2))
        if len(dims) == 1:
            ang = 2 * np.pi * np.arange(m) / m
            r = m / (2 * np.pi)
            pos[:m] = np.column_stack([r * np.cos(ang), r * np.sin(ang)]) if gen == "torus" else _grid_coords(dims)
        else:
            pos[:m] = _grid_coords(dims)
        # concentrated hosts: a small circle around their router
        extra = np.arange(m, n)
        for v in extra.tolist():
            nb = [u for u in topology.neighbors(v) if u < m]
            centre = pos[nb[0]] if nb else np.zeros(2)
            sib = [w for w in (topology.neighbors(nb[0]) if nb else []) if w >= m]
            k = sib.index(v) if v in sib else 0
            ang = 2 * np.pi * (k + 0.5) / max(len(sib), 1) + np.pi / 4
            pos[v] = centre + 0.28 * np.array([np.cos(ang), np.sin(ang)])
        return pos, "grid"
    if gen in ("random_shortcut_ring", "circulant", "ldr"):
        ang = np.pi / 2 - 2 * np.pi * np.arange(n) / n
        return np.column_stack([np.cos(ang), np.sin(ang)]) * n / (2 * np.pi), "circle"
    g = topology.to_networkx()
    if np.any(topology.slots == 0):
        return _layered(topology), "layers"
    p = nx.kamada_kawai_layout(g) if n <= 150 else nx.spring_layout(g, seed=0)
    return np.array([p[v] for v in range(n)]) * max(4.0, math.sqrt(n)), "force"


def _layered(topology):
    """Hosts at the bottom, every switch one layer per hop above them; within a layer, vertices are
    ordered by the mean position of their neighbours one layer below (few crossings in trees)."""
    n = topology.n_vertices
    from ._kernels.bfs import multi_source_levels

    level = multi_source_levels(topology.indptr, topology.indices, n, topology.hosts)
    nlev = int(level.max()) + 1
    x = np.zeros(n)
    width = max(int(np.bincount(level).max()), 1)
    hosts = np.flatnonzero(level == 0)
    parent = np.array([min(topology.neighbors(v), default=v) for v in hosts.tolist()])
    order = hosts[np.lexsort((hosts, parent))]
    x[order] = (np.arange(order.size) + 0.5) * width / order.size
    for lev in range(1, nlev):
        members = np.flatnonzero(level == lev)
        key = np.array([np.mean([x[u] for u in topology.neighbors(v) if level[u] == lev - 1] or [0.0])
                        for v in members.tolist()])
        members = members[np.lexsort((members, key))]
        x[members] = (np.arange(members.size) + 0.5) * width / members.size
    y = level * max(1.5, width / (1.6 * nlev))
    return np.column_stack([x, y])


def _link_segments(topology, pos, how, dims):
    """Line segments of the links; grid wrap-around and between-plane links become short stubs."""
    u = topology.link_u.astype(np.int64)
    v = topology.link_v.astype(np.int64)
    pu, pv = pos[u], pos[v]
    segs = [np.stack([pu, pv], 1)]
    owner = [np.arange(u.size)]
    if how != "grid":
        return np.concatenate(segs), np.concatenate(owner), 0
    d = np.linalg.norm(pv - pu, axis=1)
    far = d > 1.05
    if len(dims) == 1 or not far.any():
        return np.concatenate(segs), np.concatenate(owner), 0
    near = ~far
    segs = [np.stack([pu[near], pv[near]], 1)]
    owner = [np.flatnonzero(near)]
    fu, fv = u[far], v[far]
    m = int(np.prod(dims))
    cu = np.array(np.unravel_index(np.minimum(fu, m - 1), dims)).T
    cv = np.array(np.unravel_index(np.minimum(fv, m - 1), dims)).T
    diff = cv - cu
    length = 0.34
    stubs_a, stubs_b = [], []
    for i in range(fu.size):
        a, b = pos[fu[i]], pos[fv[i]]
        axis = int(np.flatnonzero(diff[i])[0]) if diff[i].any() else 0
        if len(dims) == 3 and axis == 0:
            # between planes: a diagonal stub towards the next plane from the lower one and back
            lower_first = diff[i, 0] > 0 if abs(diff[i, 0]) == 1 else diff[i, 0] < 0
            s = np.array([length, length]) * 0.7
            da, db = (s, -s) if lower_first else (-s, s)
        else:
            # wrap-around in a plane: stubs leaving the grid outwards at both ends
            unit = (b - a) / (np.linalg.norm(b - a) or 1.0)
            da, db = -unit * length, unit * length
        stubs_a.append([a, a + da])
        stubs_b.append([b, b + db])
    far_idx = np.flatnonzero(far)
    segs += [np.array(stubs_a), np.array(stubs_b)]
    owner += [far_idx, far_idx]
    return np.concatenate(segs), np.concatenate(owner), int(far.sum())


def _per_link(topology, arc_values):
    """Per-arc values -> per-link maximum of the two directions."""
    arc_values = np.asarray(arc_values, dtype=np.float64)
    if arc_values.shape == (topology.n_links,):
        return arc_values
    if arc_values.shape != (topology.n_arcs,):
        raise ArgumentError(f"expected {topology.n_arcs} per-arc (or {topology.n_links} per-link) values, "
                         f"got shape {arc_values.shape}")
    out = np.zeros(topology.n_links)
    np.maximum.at(out, topology.arc_link, arc_values)
    return out


def plot_link_loads(topology, loads, *, titles=None, placements=None, label="link load", title=None, dims=None):
    """Per-link load of one or more placements drawn on the network, one colour scale for all.

    Parameters
    ----------
    topology : Topology
    loads : list of array_like
        Per-arc loads (``topology.n_arcs`` values, e.g. :func:`libtopomap.congestion` or a
        :class:`~libtopomap.simulate.SimulationResult`'s ``link_load``) or per-link loads; a link is
        coloured by the larger of its two directions.
    titles : list of str, optional
        Panel titles (default ``"placement 1"``, ...); the maximum load is appended.
    placements : list of array_like, optional
        Vertex of each process per panel: occupied hosts are drawn filled.
    label : str
        Colour bar label (say what the load is and its unit).
    title : str, optional
        Figure title.
    dims : str or sequence of int, optional
        Grid dimensions for the layout when ``topology.attrs`` has none (see :func:`layout`).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.collections import LineCollection
    from matplotlib.colors import Normalize
    from matplotlib import colormaps

    if isinstance(loads, np.ndarray) and loads.ndim == 1:
        loads = [loads]
    per_link = [_per_link(topology, x) for x in loads]
    k = len(per_link)
    titles = list(titles) if titles is not None else [f"placement {i + 1}" for i in range(k)]
    pos, how = layout(topology, dims)
    if how == "grid":
        from .generators.grid import parse_dims

        dims = list(parse_dims(dims)) if dims is not None else topology.attrs["dims"]
    segs, owner, n_stub = _link_segments(topology, pos, how, dims)
    vmax = max(float(x.max()) if x.size else 0.0 for x in per_link) or 1.0
    norm = Normalize(vmin=0.0, vmax=vmax)
    cmap = colormaps["YlOrRd"]
    span = pos.max(axis=0) - pos.min(axis=0) + 1.0
    aspect = float(span[0] / span[1]) if span[1] > 0 else 1.0
    panel_w = 5.2
    panel_h = float(np.clip(panel_w / aspect, 3.0, 6.5))
    fig = _figure((panel_w * k + 1.4, panel_h + 1.0))
    axes = fig.subplots(1, k, squeeze=False)[0]
    n = topology.n_vertices
    lw_base = float(np.clip(60.0 / math.sqrt(max(topology.n_links, 1)), 0.4, 3.0))
    is_host = np.asarray(topology.slots) > 0
    for i, (ax, val) in enumerate(zip(axes, per_link)):
        v = val[owner]
        zero = v <= 0
        if zero.any():
            ax.add_collection(LineCollection(segs[zero], colors="#d9d9d9", linewidths=lw_base * 0.6, zorder=1))
        order = np.argsort(v[~zero])  # heaviest drawn last, on top
        lc = LineCollection(segs[~zero][order], cmap=cmap, norm=norm, linewidths=lw_base * 1.6, zorder=2)
        lc.set_array(v[~zero][order])
        ax.add_collection(lc)
        used = np.zeros(n, bool)
        if placements is not None and placements[i] is not None:
            used[np.asarray(placements[i], dtype=np.int64)] = True
        else:
            used[:] = True
        ms = float(np.clip(400.0 / math.sqrt(max(n, 1)), 2.0, 40.0))
        sw = ~is_host
        if sw.any():
            ax.scatter(pos[sw, 0], pos[sw, 1], s=ms * 1.3, marker="s", c="#7f7f7f", zorder=3, linewidths=0)
        idle = is_host & ~used
        ax.scatter(pos[idle, 0], pos[idle, 1], s=ms, c="white", edgecolors="#555555", linewidths=0.5, zorder=3)
        ax.scatter(pos[used, 0], pos[used, 1], s=ms, c="#1f3b73", zorder=4, linewidths=0)
        ax.set_title(f"{titles[i]}\nmax {val.max():.4g}" if val.size else titles[i], fontsize=10)
        if how == "grid" and len(dims) == 3:
            for a in range(dims[0]):
                block = pos[a * dims[1] * dims[2]:(a + 1) * dims[1] * dims[2]]
                ax.text(block[:, 0].mean(), block[:, 1].max() + 0.55, f"plane {a} of {dims[0]}", ha="center",
                        va="bottom", fontsize=7, color="#444444")
        ax.set_aspect("equal")
        ax.autoscale_view()
        ax.margins(0.06)
        ax.set_xticks([])
        ax.set_yticks([])
        for s in ax.spines.values():
            s.set_visible(False)
    sm = lc if per_link else None
    cb = fig.colorbar(sm, ax=list(axes), shrink=0.85, pad=0.02)
    cb.set_label(label)
    notes = ["grey: unused link"] + (["filled dot: host with a process"] if placements is not None else [])
    if (~is_host).any():
        notes.append("square: switch")
    if n_stub:
        notes.append("stubs: wrap-around/between-plane links")
    fig.suptitle(title or f"Link load on {topology.name or 'the network'}", fontsize=12)
    fig.text(0.01, 0.005, "; ".join(notes), fontsize=7.5, color="#444444", ha="left", va="bottom")
    return fig


# ------------------------------------------------------------------------------------------ hops
def hop_counts(topology, messages, placement, *, routing=None):
    """Hops and weight of every message: ``messages`` is a list of ``(m, 2|3)`` step arrays (third
    column bytes), or a communication graph; returns ``(hops, weights)`` int64/float64 arrays.

    ``routing``: a model of :mod:`libtopomap.routing` (default ``ecmp``: hop distances); the
    dragonfly's ``minimal`` counts the links of its routes, ``valiant`` the expected links (float64).
    """
    from .metrics import pair_distances
    from .routing import get_routing, route_hops

    r = get_routing(routing, topology)
    r.check(topology)

    vert = np.asarray(placement, dtype=np.int64)
    if isinstance(messages, (list, tuple)) and messages and np.asarray(messages[0]).ndim == 2:
        parts = []
        for s in messages:
            a = np.asarray(s, dtype=np.float64).reshape(len(s), -1) if len(s) else np.zeros((0, 3))
            parts.append(a[:, :3] if a.shape[1] >= 3 else np.column_stack([a[:, :2], np.ones(len(a))]))
        allm = np.concatenate(parts) if parts else np.zeros((0, 3))
        src, dst = allm[:, 0].astype(np.int64), allm[:, 1].astype(np.int64)
        w = allm[:, 2]
    else:
        g = as_commgraph(messages)
        src, dst, w = g.src, g.dst, g.weights
    if not r.shortest:
        return route_hops(topology, vert[src], vert[dst], routing=r), w
    return pair_distances(topology, vert[src], vert[dst]), w


def plot_hops(topology, messages, placements, *, weighted=False, title=None, routing=None):
    """Histograms of the hops per message under several placements (grouped bars).

    Parameters
    ----------
    topology : Topology
    messages : schedule or communication graph
        As for :func:`hop_counts`.
    placements : dict of str -> array_like
        Label -> vertex of each process (e.g. ``{"original": ..., "mapped": ...}``).
    weighted : bool
        Count volume (weights/bytes) instead of messages.
    title : str, optional
    routing : str, optional
        Routing model of the hops (see :func:`hop_counts`; default ``ecmp``, the hop distance).  Not
        ``valiant``, whose hops are expectations, not a histogram's integers.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ArgumentError
        ``routing="valiant"`` (or a ``native`` routing that is valiant).
    """
    from .routing import get_routing

    r = get_routing(routing, topology)
    if r.name == "valiant":
        raise ArgumentError("a hop histogram needs whole hops; under valiant routing they are expectations over "
                            "the intermediate group: plot hops under minimal routing")
    data = {}
    for name, p in placements.items():
        h, w = hop_counts(topology, messages, p, routing=r)
        data[name] = (h, w if weighted else np.ones_like(w))
    hmax = max((int(h.max()) for h, _ in data.values() if h.size), default=0)
    bins = np.arange(hmax + 1)
    k = len(data)
    width = 0.8 / max(k, 1)
    fig = _figure((max(6.0, 0.55 * (hmax + 1) + 3), 4.2))
    ax = fig.subplots()
    for i, (name, (h, w)) in enumerate(data.items()):
        counts = np.bincount(h, weights=w, minlength=hmax + 1)
        mean = float(np.dot(h, w) / w.sum()) if w.sum() > 0 else 0.0
        ax.bar(bins + (i - (k - 1) / 2) * width, counts, width=width, color=_COLORS[i % len(_COLORS)],
               label=f"{name} (mean {mean:.2f} hops, max {int(h.max()) if h.size else 0})")
    ax.set_xticks(bins)
    ax.set_xlabel("hops (links travelled)")
    ax.set_ylabel("volume (weight)" if weighted else "messages")
    ax.legend(frameon=False)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(title or "Hops per message", fontsize=12)
    return fig


# ------------------------------------------------------------------------------------------ times
def plot_times(sizes, times, *, title=None, speedup_of=None, notes=None):
    """Simulated time against message size (log-log), one line per placement, and the speed-up.

    Parameters
    ----------
    sizes : sequence of int
        Message sizes in bytes.
    times : dict of str -> sequence of float
        Label -> simulated seconds per size (e.g. ``{"original": ..., "mapped": ...}``).
    title : str, optional
    speedup_of : (str, str), optional
        ``(baseline, improved)`` labels for the speed-up panel (default: the first two entries).
    notes : dict of str -> str, optional
        Longer descriptions of the series (how each placement was made), printed under the plot.

    Returns
    -------
    matplotlib.figure.Figure

    References
    ----------
    K. Cui, PhD thesis, 2024, Figures 3.10-3.12 (execution time against message size).
    """
    sizes = np.asarray(list(sizes), dtype=np.float64)
    names = list(times)
    if not names:
        raise ArgumentError("plot_times needs at least one series of times")
    pair = speedup_of if speedup_of is not None else (tuple(names[:2]) if len(names) >= 2 else None)
    fig = _figure((10.5 if pair else 6.0, 4.3))
    axes = fig.subplots(1, 2 if pair else 1, squeeze=False)[0]
    ax = axes[0]
    marks = "osD^v<>"
    for i, name in enumerate(names):
        t = np.asarray(times[name], dtype=np.float64)
        ax.plot(sizes, t, marker=marks[i % len(marks)], color=_COLORS[i % len(_COLORS)], label=name)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sizes)
    ax.set_xticklabels([format_bytes(s) for s in sizes], rotation=30 if len(sizes) > 5 else 0)
    ax.minorticks_off() if len(sizes) > 1 else None
    ax.set_xlabel("message size")
    ax.set_ylabel("simulated time (s)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(frameon=False)
    ax.set_title("Simulated time (lower is better)", fontsize=10)
    if pair:
        base, better = (np.asarray(times[p], dtype=np.float64) for p in pair)
        sp_ = base / better
        ax2 = axes[1]
        x = np.arange(len(sizes))
        ax2.bar(x, sp_, color=[_COLORS[2] if s >= 1 else _COLORS[1] for s in sp_])
        ax2.axhline(1.0, color="black", lw=0.8)
        for xi, s in zip(x, sp_):
            ax2.text(xi, s, f"{s:.2f}x", ha="center", va="bottom", fontsize=9)
        ax2.set_xticks(x)
        ax2.set_xticklabels([format_bytes(s) for s in sizes], rotation=30 if len(sizes) > 5 else 0)
        ax2.set_xlabel("message size")
        ax2.set_ylabel("speed-up (x)")
        ax2.set_ylim(0, max(1.2, float(np.nanmax(sp_)) * 1.18))
        ax2.set_title(_wrap(f"Speed-up = {pair[0]} time / {pair[1]} time", 60), fontsize=10)
    fig.suptitle(_wrap(title or "SimGrid-simulated time against message size", 90), fontsize=12)
    if notes:
        text = "\n".join(_wrap(f"{k}: {v}", 150) for k, v in notes.items())
        fig.text(0.01, 0.0, text, fontsize=8, color="#333333", ha="left", va="bottom")
        fig.get_layout_engine().set(rect=(0, 0.045 * (1 + text.count("\n")), 1, 1 - 0.045 * (1 + text.count("\n"))))
    return fig


def _wrap(text, width):
    import textwrap

    return "\n".join(textwrap.wrap(str(text), width)) or str(text)
