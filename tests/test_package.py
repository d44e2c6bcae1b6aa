"""Package-level contracts: the core never imports mpi4py; every public name exists."""

import subprocess
import sys

import libtopomap


def test_core_does_not_import_mpi4py():
    code = ("import sys, libtopomap, libtopomap.cli, libtopomap.collectives, libtopomap.mappers, "
            "libtopomap.metrics, libtopomap.formats, adapters\n"
            "libtopomap.load_graph('stencil:4x4')\n"
            "assert 'mpi4py' not in sys.modules, sorted(m for m in sys.modules if 'mpi' in m)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_every_public_name_exists():
    missing = [n for n in libtopomap.__all__ if n not in libtopomap._MPI_NAMES and not hasattr(libtopomap, n)]
    assert missing == []


def test_mpi_names_load_lazily():
    assert callable(libtopomap.Create_dist_graph_adjacent)
    assert callable(libtopomap.reorder_for_collective)


def test_unknown_attribute_raises():
    try:
        libtopomap.no_such_name
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")
