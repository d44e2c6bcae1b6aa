"""Test configuration.

``tests/mpi/`` holds tests that run *inside* ``mpiexec`` (every rank runs pytest on the same file and
asserts on collective results, so all ranks fail together).  The normal pytest run does not collect
them directly; ``tests/test_mpi_suite.py`` launches each of them under ``mpiexec -n 4`` and ``-n 8``
with a timeout, so one ``python -m pytest`` runs everything.
"""

import os
import pathlib

SHARED = pathlib.Path(__file__).resolve().parents[1].parent / "shared"
# Real fabric dumps copied into the repository with their sources and licences (data/fabrics/SOURCES.md).
FABRICS = pathlib.Path(__file__).resolve().parent / "data" / "fabrics"
# The two GPL-only dumps that stay in the shared folder (read when it is there).
SHARED_ONLY = SHARED / "topologies"

_UNDER_MPI = any(k in os.environ for k in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"))

collect_ignore_glob = [] if _UNDER_MPI else ["mpi/*"]
