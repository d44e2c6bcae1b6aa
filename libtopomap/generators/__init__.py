"""Topology generators; each is deterministic for a given ``seed``."""

from .grid import concentrate, hypercube, mesh, parse_dims, torus

__all__ = ["torus", "mesh", "hypercube", "concentrate", "parse_dims"]
