"""Package-level contracts: the core never imports mpi4py; ``import libtopomap`` and ``libtopomap --help``
stay light; every public name resolves; one version; the package data and the package list are complete."""

import importlib.metadata
import importlib.resources
import pathlib
import subprocess
import sys
import tomllib

import pytest

import libtopomap

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _run(code):
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_core_does_not_import_mpi4py():
    _run("import sys, libtopomap, libtopomap.cli, libtopomap.collectives, libtopomap.mappers, "
         "libtopomap.metrics, libtopomap.formats, libtopomap.adapters\n"
         "libtopomap.load_graph('stencil:4x4')\n"
         "assert 'mpi4py' not in sys.modules, sorted(m for m in sys.modules if 'mpi' in m)\n")


def test_import_libtopomap_is_light():
    out = _run("import sys, libtopomap\n"
               "print(sorted(m for m in ('numba', 'mpi4py', 'scipy') if m in sys.modules))\n")
    assert out.strip() == "[]"


def test_help_imports_no_heavy_module():
    out = _run("import sys\n"
               "from libtopomap.cli import main\n"
               "try:\n"
               "    main(['--help'])\n"
               "except SystemExit as e:\n"
               "    assert e.code == 0\n"
               "print('HEAVY', sorted(m for m in ('numba', 'scipy', 'mpi4py') if m in sys.modules))\n")
    assert "usage: libtopomap" in out and out.strip().endswith("HEAVY []")
    for name in libtopomap.cli.COMMANDS:
        assert name in out


def test_every_command_help_imports_no_heavy_module():
    """``libtopomap CMD --help`` builds its parser from :mod:`libtopomap.vocabulary`, not from the heavy
    modules (a property of the imports, not a timing)."""
    out = _run("import sys\n"
               "from libtopomap.cli import COMMANDS, main\n"
               "for argv in [[c, '--help'] for c in COMMANDS] + [['generate', 'torus', '--help']]:\n"
               "    try:\n"
               "        main(argv)\n"
               "    except SystemExit as e:\n"
               "        assert e.code == 0, argv\n"
               "    heavy = sorted(m for m in ('numba', 'scipy', 'mpi4py', 'networkx', 'matplotlib', 'pymetis')\n"
               "                   if m in sys.modules)\n"
               "    print('HEAVY', ' '.join(argv), heavy)\n")
    lines = [ln for ln in out.splitlines() if ln.startswith("HEAVY ")]
    assert len(lines) == len(libtopomap.cli.COMMANDS) + 1
    assert all(ln.endswith(" []") for ln in lines), "\n".join(lines)


def test_names_tables_are_defined_once():
    import libtopomap.adapters
    import libtopomap.collectives
    import libtopomap.mappers
    import libtopomap.simulate
    import libtopomap.vocabulary as v

    assert libtopomap.mappers.STRATEGIES is v.STRATEGIES and libtopomap.mappers.REFINEMENTS is v.REFINEMENTS
    assert libtopomap.mappers.OBJECTIVES is v.OBJECTIVES
    assert libtopomap.collectives.OBJECTIVES is v.COLLECTIVE_OBJECTIVES
    assert libtopomap.collectives.COLLECTIVES is v.COLLECTIVES and libtopomap.collectives.OPTIMIZERS is v.OPTIMIZERS
    assert libtopomap.collectives.ALLOCATIONS is v.ALLOCATIONS and libtopomap.simulate.ROUTINGS is v.ROUTINGS
    assert libtopomap.adapters.FORMATS is v.FABRIC_FORMATS
    from libtopomap.formats import _FORMATS

    assert set(v.FABRIC_FORMATS) <= set(_FORMATS)


def test_console_script_help_and_version():
    exe = pathlib.Path(sys.executable).with_name("libtopomap")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "libtopomap"]
    r = subprocess.run(cmd + ["--version"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == f"libtopomap {libtopomap.__version__}"
    r = subprocess.run(cmd + ["--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "COMMAND" in r.stdout


def test_command_help_table_matches_the_modules():
    import libtopomap.cli as cli

    parser = cli.build_parser()  # every command built from its module
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert {a.dest: a.help for a in sub._choices_actions} == cli.COMMAND_HELP


def test_only_the_named_command_is_built(capsys):
    from libtopomap.cli import main

    with pytest.raises(SystemExit) as e:
        main(["info", "--help"])
    assert e.value.code == 0 and "--json" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        main(["no-such-command"])
    assert e.value.code == 2 and "invalid choice" in capsys.readouterr().err


def test_every_public_name_resolves():
    missing = [n for n in libtopomap.__all__ if getattr(libtopomap, n, None) is None]
    assert missing == []
    assert set(libtopomap.__all__) <= set(dir(libtopomap))
    assert len(set(libtopomap.__all__)) == len(libtopomap.__all__)
    # the objects are those of their submodules
    from libtopomap import formats, loading, mpi, topology

    assert libtopomap.load is loading.load and libtopomap.save is formats.write
    assert libtopomap.Topology is topology.Topology and libtopomap.topomap is mpi.topomap


def test_every_public_name_resolves_in_a_fresh_interpreter():
    _run("import libtopomap\n"
         "for n in libtopomap.__all__:\n"
         "    getattr(libtopomap, n)\n"
         "from libtopomap import *\n")


def test_submodules_as_attributes():
    _run("import libtopomap\n"
         "assert libtopomap.metrics.evaluate is libtopomap.evaluate\n"
         "assert libtopomap.adapters.ingest\n")


def test_mpi_names_load_lazily():
    assert callable(libtopomap.Create_dist_graph_adjacent)
    assert callable(libtopomap.reorder_for_collective)


def test_mpi_public_names_stay_functions_after_every_submodule_loads():
    # no submodule of libtopomap.mpi is named like a public name: loading it would rebind the name
    _run("import importlib, pkgutil, types, libtopomap.mpi as m\n"
         "subs = [i.name for i in pkgutil.iter_modules(m.__path__)]\n"
         "assert not set(subs) & set(m.__all__), set(subs) & set(m.__all__)\n"
         "names = {n: getattr(m, n) for n in m.__all__ if n != 'TopomapDistgraphcomm'}\n"
         "for s in subs:\n"
         "    importlib.import_module('libtopomap.mpi.' + s)\n"
         "assert all(getattr(m, n) is v and not isinstance(v, types.ModuleType) for n, v in names.items())\n")


def test_unknown_attribute_raises():
    try:
        libtopomap.no_such_name
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:  # pragma: no cover
        raise AssertionError("expected AttributeError")


def test_one_version():
    from libtopomap._version import __version__

    assert libtopomap.__version__ == __version__ == importlib.metadata.version("libtopomap")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "libtopomap._version.__version__"}


def test_pyproject_lists_every_package():
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "libtopomap").rglob("__init__.py")}
    found |= {"libtopomap.adapters"}
    assert set(conf["packages"]) == found
    assert conf["package-dir"] == {"libtopomap.adapters": "adapters"}


def test_no_top_level_adapters_package_installed(tmp_path):
    # run outside the repository, where its adapters/ folder is not on sys.path
    r = subprocess.run([sys.executable, "-c", "import importlib.util, libtopomap.adapters as A\n"
                        "print(importlib.util.find_spec('adapters'), A.__name__)"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.split() == ["None", "libtopomap.adapters"], r.stderr


def test_demo_data_is_package_data_and_matches_the_examples():
    data = importlib.resources.files("libtopomap.data")
    for name in ("demo_torus_4x2.topo", "demo_torus_4x2.names"):
        assert data.joinpath(name).is_file()
        assert data.joinpath(name).read_bytes() == (ROOT / "topology_files" / name).read_bytes()
    with importlib.resources.as_file(data.joinpath("demo_torus_4x2.topo")) as p:
        t = libtopomap.load(p)
    assert t == libtopomap.torus("4x2")


def test_license_file():
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("BSD 3-Clause License") and "Copyright (c) 2026, the libtopomap developers" in text


# -------------------------------------------------------------------------------------------- the numba cache
@pytest.mark.slow
def test_a_corrupt_numba_cache_is_recompiled_not_fatal(tmp_path):
    # a cached kernel's index (*.nbi) and entries (*.nbc) overwritten with garbage: the next run warns,
    # compiles again and rewrites them; the run after it is silent.  A one-line kernel in its own module
    # keeps the three compilations short.
    import os
    import subprocess
    import sys

    kernel = tmp_path / "kernel.py"
    kernel.write_text("import libtopomap._numba_cache\nimport numba\n\n"
                      "@numba.njit(cache=True)\ndef twice(x):\n    return 2 * x\n")
    code = ("import importlib.util, warnings; warnings.simplefilter('always'); "
            f"spec = importlib.util.spec_from_file_location('kernel', {str(kernel)!r}); "
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); print(m.twice(21))")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}

    def run():
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                              cwd=tmp_path)
    first = run()
    assert first.returncode == 0 and first.stdout == "42\n", first.stderr
    files = list((tmp_path / "cache").rglob("*.nb[ic]"))
    assert {f.suffix for f in files} == {".nbi", ".nbc"}
    for f in files:
        f.write_bytes(b"\x80\x04garbage")
    second = run()
    assert second.returncode == 0 and second.stdout == "42\n", second.stderr
    assert "numba cache index" in second.stderr and "compiling again" in second.stderr
    third = run()
    assert third.returncode == 0 and third.stdout == "42\n" and "numba cache" not in third.stderr, third.stderr
