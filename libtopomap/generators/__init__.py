"""Topology generators; each is deterministic for a given ``seed``."""

from .circulant import circulant, power_of_two_jumps
from .dragonfly import dragonfly
from .fattree import fattree
from .grid import concentrate, hypercube, mesh, parse_dims, torus
from .hybrid import hybrid, hybrid_route
from .ldr import ldr
from .percs import percs
from .shortcut import random_shortcut_ring
from .twisted_torus import rt, rtt

__all__ = ["torus", "mesh", "hypercube", "concentrate", "parse_dims", "fattree", "dragonfly", "percs", "ldr",
           "rt", "rtt", "random_shortcut_ring", "circulant", "power_of_two_jumps",
           "hybrid", "hybrid_route"]
