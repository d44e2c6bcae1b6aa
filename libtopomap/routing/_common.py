"""What every routing model shares: demand checks, leaf hosts, and the load updates of the kernels.

Every kernel adds a load through :func:`put`, which also logs the change when the log has room (the
local-search engine undoes a rejected move from the log); the batch walks pass an empty log
(:func:`no_log`).
"""

from __future__ import annotations

import weakref

import numpy as np

from .._jit import njit
from ..errors import ArgumentError, TopologyError

__all__ = ["label", "demand_arrays", "leaves", "strip_leaves", "put", "no_log", "find_arc", "load_link", "cached"]

_CACHE = weakref.WeakKeyDictionary()


def cached(topology, key, build):
    """``build()``, kept with ``topology`` under ``key`` for as long as the topology lives (the models'
    contexts that cost more than one pass over the links: tree levels, parsed forwarding tables)."""
    per = _CACHE.get(topology)
    if per is None:
        per = _CACHE[topology] = {}
    if key not in per:
        if len(per) >= 8:
            per.pop(next(iter(per)))
        per[key] = build()
    return per[key]


def label(topology):
    """`` 'name'`` of a named topology for error messages, else ``""``."""
    return f" {topology.name!r}" if getattr(topology, "name", None) else ""


def demand_arrays(topology, src, dst, weights):
    """``(s, t, w)``: the demands as ``int64``, ``int64`` and ``float64`` arrays, checked."""
    s = np.asarray(src, dtype=np.int64).reshape(-1)
    t = np.asarray(dst, dtype=np.int64).reshape(-1)
    if s.shape != t.shape:
        raise ArgumentError(f"{s.size} sources but {t.size} destinations")
    w = np.ones(s.size) if weights is None else np.asarray(weights, dtype=np.float64).reshape(-1)
    if w.shape != s.shape:
        raise ArgumentError(f"{w.size} weights for {s.size} demands")
    n = topology.n_vertices
    bad = (s < 0) | (s >= n) | (t < 0) | (t >= n)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise TopologyError(f"demand {i} ({s[i]} -> {t[i]}) names a vertex outside 0..{n - 1}")
    return s, t, w


def leaves(topology):
    """``(att, off)``: a vertex on a single link to a vertex of higher degree is a leaf (``off = 1``)
    reached through that neighbour ``att``; every other vertex is its own attachment (``off = 0``)."""
    deg = np.diff(topology.indptr)
    n = topology.n_vertices
    att = np.arange(n, dtype=np.int64)
    if topology.indices.size == 0:
        return att, np.zeros(n, np.int64)
    first = topology.indices[np.minimum(topology.indptr[:-1], topology.indices.size - 1)].astype(np.int64)
    leaf = (deg == 1) & (deg[first] > 1)
    att[leaf] = first[leaf]
    return att, leaf.astype(np.int64)


def strip_leaves(topology, s, t, w, traffic):
    """Charge the single link of leaf hosts and hand their demands to the attachment vertex."""
    att, off = leaves(topology)
    keep = s != t
    s, t, w = s[keep], t[keep], w[keep]
    ls = off[s] == 1
    if ls.any():
        traffic += np.bincount(topology.indptr[s[ls]], weights=w[ls], minlength=traffic.size)
        s = np.where(ls, att[s], s)
    lt = off[t] == 1
    if lt.any():
        traffic += np.bincount(topology.arc_reverse[topology.indptr[t[lt]]], weights=w[lt], minlength=traffic.size)
        t = np.where(lt, att[t], t)
    keep = s != t
    return s[keep], t[keep], w[keep]


@njit(cache=True, inline="always")
def put(traffic, a, f, log_arc, log_val, log_n):
    traffic[a] += f
    k = log_n[0]
    if k < log_arc.size:
        log_arc[k] = a
        log_val[k] = f
        log_n[0] = k + 1
    else:
        log_n[1] = 1


@njit(cache=True, inline="always")
def no_log():
    return np.empty(0, np.int64), np.empty(0), np.zeros(2, np.int64)


@njit(cache=True, inline="always")
def find_arc(indptr, indices, u, v):
    lo, hi = indptr[u], indptr[u + 1]
    while lo < hi:
        mid = (lo + hi) // 2
        if indices[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    if lo < indptr[u + 1] and indices[lo] == v:
        return lo
    return -1


@njit(cache=True, inline="always")
def load_link(indptr, indices, u, v, w, traffic, log_arc, log_val, log_n):
    """``w`` added to the link ``u -> v`` (:func:`put`); False when there is none."""
    arc = find_arc(indptr, indices, u, v)
    if arc < 0:
        return False
    put(traffic, arc, w, log_arc, log_val, log_n)
    return True
