"""Task mapping in rectangular twisted tori (Camarero, Vallejo, Martinez, Moreto, Beivide).

A logical 2D torus of processes is placed on RT(a) or RTT(a) by the paper's coordinate functions (the
identity, the diagonal shift, the horizontal, vertical and twisted unions); the module also holds the
paper's performance model (sections 3.2-3.4).  Coordinates, numbering and concentration specs:
docs/internals.rst, "Task mapping in rectangular twisted tori".

References
----------
C. Camarero, E. Vallejo, C. Martinez, M. Moreto, R. Beivide, "Task Mapping in Rectangular Twisted
Tori", sections 2-3.
"""

from __future__ import annotations

import re

import numpy as np

from ..errors import MappingError
from ._common import finish, validated

__all__ = ["diagonal_shift", "horizontal_union", "vertical_union", "twisted_union", "parse_concentration",
           "logical_grid", "twisted_nodes", "map_twisted_identity", "map_diagonal_shift", "link_classes",
           "arc_classes", "table1", "model", "MODEL_CASES"]


# ------------------------------------------------------------------------------ coordinate functions
def diagonal_shift(x, y, m):
    """The diagonal shift ``f^d(x, y) = ((x + y) mod m, y)`` of an ``m``-wide grid (section 3).

    It adds an incremental twist inside the mesh that compensates the twisted vertical wraparound
    links of RTT(a): a logical vertical neighbour lands one step diagonally away (2 hops), the
    wraparound as well.
    """
    x, y = np.asarray(x, np.int64), np.asarray(y, np.int64)
    return (x + y) % int(m), y


def horizontal_union(x, y, c=2):
    """The horizontal union ``f_c^h(x, y) = (floor(x / c), y)``: ``c`` horizontal neighbours per node."""
    return np.asarray(x, np.int64) // int(c), np.asarray(y, np.int64)


def vertical_union(x, y, c=2):
    """The vertical union ``f_c^v(x, y) = (x, floor(y / c))``: ``c`` vertical neighbours per node."""
    return np.asarray(x, np.int64), np.asarray(y, np.int64) // int(c)


def twisted_union(x, y, m, n):
    """The twisted union ``f_c^t(x, y) = ((x + floor(y / n) m / 2) mod m, y - floor(y / n) n)`` onto ``R(m, n)``.

    The ``c`` horizontal bands of height ``n`` of the process grid ``R(m, c n)`` are stacked onto
    ``R(m, n)``, every other band shifted by ``m / 2``: no two neighbours share a node, but with the
    identity mapping on RTT(a) (``m = 2a, n = a``, ``c = 2``) every logical link, wraparounds
    included, becomes one network link -- the band boundary ``(x, n - 1) - (x, n)`` lands on
    ``(x, n - 1) - (x + m/2, 0)``, a twisted link.  Section 3.4.4 heads this case "f_2^l" (and
    section 5.2.2 repeats the name); the function is the twisted union ``f_2^t`` defined in
    section 3, a misprint.  ``m`` must be even.
    """
    m, n = int(m), int(n)
    if m % 2:
        raise MappingError(f"the twisted union needs an even width m, got m={m}")
    x, y = np.asarray(x, np.int64), np.asarray(y, np.int64)
    band = y // n
    return (x + band * (m // 2)) % m, y - band * n


_UNION = re.compile(r"^([hvt])(\d*)$")


def parse_concentration(spec):
    """``"t+h"`` -> ``[("t", 2), ("h", 2)]``: union functions, outermost first.

    Parameters
    ----------
    spec : str, sequence of str, or None
        ``+``-separated letters ``h`` (horizontal), ``v`` (vertical) or ``t`` (twisted union), each
        with an optional factor ``>= 2`` (default 2); ``None`` or ``""`` is no concentration.

    Returns
    -------
    list of (str, int)

    Raises
    ------
    MappingError
        An unknown letter or a factor below 2.
    """
    if spec is None:
        return []
    parts = spec.split("+") if isinstance(spec, str) else list(spec)
    out = []
    for part in parts:
        part = str(part).strip().lower()
        if not part:
            continue
        mt = _UNION.match(part)
        if not mt:
            raise MappingError(f"concentration {spec!r}: {part!r} is not h, v or t with an optional factor "
                               "(e.g. 'v', 't+h', 'h4')")
        c = int(mt.group(2) or 2)
        if c < 2:
            raise MappingError(f"concentration {spec!r}: factor {c} of {part!r} must be >= 2")
        out.append((mt.group(1), c))
    return out


def logical_grid(a, concentration=None):
    """Size ``(M, N)`` of the process grid ``R(M, N)`` that ``concentration`` maps onto ``R(2a, a)``.

    Examples
    --------
    >>> logical_grid(4, "v"), logical_grid(4, "t+h"), logical_grid(4, "v+h")
    ((8, 8), (16, 8), (16, 8))
    """
    m, n = 2 * int(a), int(a)
    for kind, c in parse_concentration(concentration):
        if kind == "h":
            m *= c
        else:
            n *= c
    return m, n


def twisted_nodes(a, *, shift=False, concentration=None):
    """Network node of every process of the logical torus: the paper's ``f o f_c o ...`` composition.

    Parameters
    ----------
    a : int
        RT(a)/RTT(a) parameter (``2a x a`` nodes).
    shift : bool
        Apply the diagonal shift ``f^d`` after the concentration (``False``: the identity ``id``).
    concentration : str, optional
        See :func:`parse_concentration`.

    Returns
    -------
    numpy.ndarray of int64
        Node ``y * 2a + x`` of process ``p`` (at ``(p mod M, p // M)`` of :func:`logical_grid`);
        every node receives the product of the factors in processes.

    Examples
    --------
    >>> twisted_nodes(2, shift=True).tolist()  # f^d on RTT(2): row y shifted right by y
    [0, 1, 2, 3, 5, 6, 7, 4]
    """
    a = int(a)
    if a < 2:
        raise MappingError(f"RT(a)/RTT(a) need a >= 2, got {a}")
    factors = parse_concentration(concentration)
    shapes = []  # target shape of each factor, outermost first
    m, n = 2 * a, a
    for kind, c in factors:
        shapes.append((m, n))
        if kind == "h":
            m *= c
        else:
            n *= c
    p = np.arange(m * n, dtype=np.int64)
    x, y = p % m, p // m
    for (kind, c), (tm, tn) in zip(reversed(factors), reversed(shapes)):
        if kind == "h":
            x, y = horizontal_union(x, y, c)
        elif kind == "v":
            x, y = vertical_union(x, y, c)
        else:
            x, y = twisted_union(x, y, tm, tn)
    if shift:
        x, y = diagonal_shift(x, y, 2 * a)
    return y * (2 * a) + x


# ------------------------------------------------------------------------------------- strategies
def _twisted_target(topology):
    """``(a, host vertices of every node)`` of RT(a)/RTT(a), plain or :func:`~libtopomap.concentrate`-d."""
    attrs = topology.attrs
    if attrs.get("generator") not in ("rt", "rtt") or "a" not in attrs:
        raise MappingError("twisted-torus mappings need an RT(a) or RTT(a) topology (libtopomap.rt / rtt, "
                           f"optionally concentrated); {topology.name or '<unnamed>'} is not one (in a file: JSON, as "
                           "'libtopomap generate rt|rtt -o FILE.json' writes, keeps what it is; ltm text does not)")
    a = int(attrs["a"])
    nodes = 2 * a * a
    conc = int(attrs.get("concentration", 0) or 0)
    if topology.n_vertices == nodes:
        return a, None
    if conc and topology.n_vertices == nodes * (1 + conc):
        return a, nodes + np.arange(nodes * conc, dtype=np.int64).reshape(nodes, conc)
    raise MappingError(f"topology {topology.name or '<unnamed>'} has {topology.n_vertices} vertices; expected "
                       f"RT({a})/RTT({a}) with {nodes} nodes, or {nodes} routers with the same number of hosts each")


def _place(topology, g, slots, shift, concentration, name):
    a, hosts = _twisted_target(topology)
    node = twisted_nodes(a, shift=shift, concentration=concentration)
    if node.size != g.n:
        m, n = logical_grid(a, concentration)
        raise MappingError(f"{name}: concentration {concentration or 'none'!r} on RT({a})/RTT({a}) places a "
                           f"{m} x {n} process grid ({node.size} processes), but the graph has {g.n}")
    if hosts is None:
        vertices = node
    else:  # the k-th process of a router goes to its k-th host
        order = np.argsort(node, kind="stable")
        rank = np.empty_like(node)
        first = np.searchsorted(node[order], node[order])
        rank[order] = np.arange(node.size) - first
        if rank.max() >= hosts.shape[1]:
            raise MappingError(f"{name}: {int(rank.max()) + 1} processes per router but only {hosts.shape[1]} hosts")
        vertices = hosts[node, rank]
    label = name + (f"+{concentration}" if concentration else "")
    return finish(topology, vertices, slots, label)


@validated
def map_twisted_identity(topology, graph, *, concentration=None, slots=None, seed=None):
    """The identity mapping ``id`` after a concentration, on RT(a)/RTT(a) (Camarero et al., section 3).

    Parameters
    ----------
    topology : Topology
        ``rt(a)`` or ``rtt(a)`` with enough slots per node (``slots=``, e.g. 2 for ``c = 2``), or
        ``concentrate(rtt(a), c)``, whose hosts then receive a router's processes in order.
    graph : CommGraph
        The logical torus; only its number of processes is used: process ``p`` is the grid point
        ``(p mod M, p // M)`` of :func:`logical_grid`.
    concentration : str, optional
        Union functions, outermost first (``"v"``, ``"t"``, ``"t+h"``, ...).
    slots, seed
        As for :func:`~libtopomap.mappers.map_processes` (``seed`` is not used).

    Returns
    -------
    Mapping
        Strategy ``"identity+<concentration>"``.

    Raises
    ------
    MappingError
        Not an RT/RTT topology, a process count other than the grid's, or too few slots.

    Examples
    --------
    >>> import numpy as np
    >>> from libtopomap import rtt, stencil, average_dilation, max_dilation
    >>> t, g = rtt(4), stencil("8x8")  # a 8 x 8 process torus, c = 2
    >>> m = map_twisted_identity(t, g, concentration="t", slots=np.full(32, 2))
    >>> average_dilation(t, g, m), max_dilation(t, g, m)  # f_2^t: every neighbour one hop away
    (1.0, 1)
    """
    return _place(topology, graph, slots, False, concentration, "identity")


@validated
def map_diagonal_shift(topology, graph, *, concentration=None, slots=None, seed=None):
    """The diagonal shift ``f^d`` (after an optional concentration) on RT(a)/RTT(a) (Camarero et al., section 3).

    ``f^d(x, y) = ((x + y) mod 2a, y)``: on RTT(a) a process torus of the network's size gets
    average dilation 3/2 and maximum 2 (the identity: ``3/2 - 1/a`` and ``a - 1``); after the
    vertical union ``f_2^v`` the average is 1 (section 3.4.3).

    Parameters and returns as for :func:`map_twisted_identity`; strategy ``"diagonal-shift[+conc]"``.
    """
    return _place(topology, graph, slots, True, concentration, "diagonal-shift")


# ----------------------------------------------------------------------- the performance model
def link_classes(a):
    """Sizes of the link classes of RT(a) and RTT(a) (section 3.2.2).

    Returns
    -------
    dict
        ``hi`` (horizontal internal) ``2a^2 - a``, ``vi`` (vertical internal) ``2a^2 - 2a``, ``hp``
        (horizontal peripheral) ``a`` and ``vp`` (vertical peripheral) ``2a``: ``4a^2 = 2N`` links.
    """
    a = int(a)
    return {"hi": 2 * a * a - a, "vi": 2 * a * a - 2 * a, "hp": a, "vp": 2 * a}


def arc_classes(topology):
    """Class (``"hi"``, ``"vi"``, ``"hp"``, ``"vp"``) of every arc of RT(a)/RTT(a), for link loads.

    Returns
    -------
    numpy.ndarray of str, one entry per arc (CSR order, as :func:`~libtopomap.link_traffic`).
    Arcs to a concentrated topology's hosts are ``"host"``.
    """
    a, _ = _twisted_target(topology)
    w, nodes = 2 * a, 2 * a * a
    u = topology.arc_source.astype(np.int64)
    v = topology.indices.astype(np.int64)
    out = np.full(u.size, "host", dtype="<U4")
    net = (u < nodes) & (v < nodes)
    yu, xu = np.divmod(u[net], w)
    yv, xv = np.divmod(v[net], w)
    horiz = yu == yv
    dx = np.abs(xu - xv)
    dy = np.abs(yu - yv)
    cls = np.where(horiz, np.where(dx == 1, "hi", "hp"), np.where((dy == 1) & (dx == 0), "vi", "vp"))
    if a == 2:  # RT(2): the 2-ring's single link per column is internal
        cls = np.where(~horiz & (dx == 0), "vi", cls)
    out[net] = cls
    return out


def table1(a, kind):
    """Table 1 of Camarero et al.: diameter ``k`` and average distances of RT(a) or RTT(a) (approximations).

    Returns
    -------
    dict
        ``k``, ``kbar`` and the per-dimension ``kbar_x`` (horizontal, along the ``2a`` side) and
        ``kbar_y`` (vertical).  RT: ``3a/2``, ``3a/4``, ``a/2``, ``a/4``; RTT: ``a``, ``2a/3``,
        ``a/3``, ``a/3``.

    Notes
    -----
    The table's columns are headed ``kbar_v = a/2`` and ``kbar_h = a/4`` for RT(a), but section
    3.3.1 uses ``kbar_x = a/2`` for the horizontal links (the ``2a``-long rings, which indeed
    average ``a/2``) and ``kbar_y = a/4``: the headers are swapped; this function follows section
    3.3.1 and the geometry.  All values average over the ``N`` destinations, the source included;
    they are exact for RT(a) with even ``a`` and rounded for RTT(a), whose exact average is
    ``(4a^2 - 1) / (6a)`` (see :func:`~libtopomap.rtt`).
    """
    a = float(a)
    if kind == "rt":
        return {"k": 3 * a / 2, "kbar": 3 * a / 4, "kbar_x": a / 2, "kbar_y": a / 4}
    if kind == "rtt":
        return {"k": a, "kbar": 2 * a / 3, "kbar_x": a / 3, "kbar_y": a / 3}
    raise MappingError(f"kind must be 'rt' or 'rtt', got {kind!r}")


#: The cases of sections 3.3-3.4: (topology kind, mapping, concentration) -> section.
MODEL_CASES = {
    ("rt", "identity", None): "3.3.1",
    ("rtt", "identity", None): "3.3.2",
    ("rtt", "diagonal-shift", None): "3.3.3",
    ("rt", "identity", "v"): "3.4.1",
    ("rtt", "identity", "v"): "3.4.2",
    ("rtt", "diagonal-shift", "v"): "3.4.3",
    ("rtt", "identity", "t"): "3.4.4",
}


def model(a, kind, mapping, concentration, alpha):
    """The paper's closed forms for one case of sections 3.3-3.4 (latency and maximum throughput).

    Parameters
    ----------
    a : int
    kind : {"rt", "rtt"}
    mapping : {"identity", "diagonal-shift"}
    concentration : {None, "v", "t"}
        ``c = 2`` cases onto a ``2a x 2a`` process torus.
    alpha : float or array_like
        Proportion of local messages.

    Returns
    -------
    dict
        ``d`` (average dilation of the local messages), ``tau = alpha d + (1 - alpha) kbar`` with
        Table 1's ``kbar``, ``tau_j`` per link class ``j`` that the section derives (``h``, ``v``,
        ``vi``), ``max_th = (2/N) min_j |E_j| / tau_j`` over those classes (phits per node and
        cycle) and ``section``.

    Raises
    ------
    MappingError
        A case the paper does not derive (see :data:`MODEL_CASES`).

    Notes
    -----
    Local traffic is the logical torus: each message to one of 4 neighbours; the dimension
    averages ``tau_h^l, tau_v^l`` are those of the sections.  Global traffic is uniform with
    Table 1's rounded averages, spread over a dimension's links in proportion to their number
    (``kbar_vi = kbar_y |E_vi| / |E_v|``).  The horizontal class is the whole dimension ``E_h``
    (``|E_h| = 2a^2``); section 3.3.2 splits the vertical one into ``E_vi`` (all local traffic)
    and ``E_vp`` (none).
    """
    key = (kind, mapping, concentration)
    if key not in MODEL_CASES:
        raise MappingError(f"the paper derives no model for {key}; cases: {sorted(MODEL_CASES, key=str)}")
    a = float(a)
    al = np.asarray(alpha, dtype=np.float64)
    t1 = table1(a, kind)
    kx, ky = t1["kbar_x"], t1["kbar_y"]
    N = 2 * a * a
    E_h, E_v, E_vi = 2 * a * a, 2 * a * a, 2 * a * a - 2 * a
    # local average hops per message on the horizontal and vertical dimensions, section by section
    if key == ("rt", "identity", None):
        lh, lv = 0.5, 0.5
    elif key == ("rtt", "identity", None):
        lh, lv = 0.5, 1 - 1 / a  # vertical: 1/a of the vertical messages travel a - 1 hops
    elif key == ("rtt", "diagonal-shift", None):
        lh, lv = 1.0, 0.5
    elif key == ("rt", "identity", "v"):
        lh, lv = 0.5, 0.25
    elif key == ("rtt", "identity", "v"):
        lh, lv = 0.5, (a - 1) / (2 * a)
    elif key == ("rtt", "diagonal-shift", "v"):
        lh, lv = 0.75, 0.25
    else:  # ("rtt", "identity", "t")
        lh, lv = 0.5, 0.5
    d = lh + lv
    tau = al * d + (1 - al) * t1["kbar"]
    tau_h = al * lh + (1 - al) * kx
    tau_v = al * lv + (1 - al) * ky
    classes = {"h": (E_h, tau_h), "v": (E_v, tau_v)}
    if kind == "rtt" and concentration is None and mapping == "identity":
        classes["vi"] = (E_vi, al * lv + (1 - al) * ky * E_vi / E_v)  # all local vertical traffic is internal
    th = {j: 2 / N * e / t for j, (e, t) in classes.items()}
    max_th = np.minimum.reduce(list(th.values()))
    return {"section": MODEL_CASES[key], "d": d, "tau": tau, "tau_j": {j: t for j, (_, t) in classes.items()},
            "th_j": th, "max_th": max_th}
