"""The import graph of the library has no cycle, counting imports made inside functions too.

Every ``import``/``from ... import`` statement of every module of ``libtopomap`` (and of ``adapters/``, installed
as ``libtopomap.adapters``) is an edge, wherever it stands; ``from PKG import NAME`` points at ``PKG.NAME`` when that
is a module, else at ``PKG`` (the package face).  A strongly connected component of more than one module is a circle.
"""

from __future__ import annotations

import ast
import pathlib

from scipy.sparse import csr_array
from scipy.sparse.csgraph import connected_components

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCES = {"libtopomap": ROOT / "libtopomap", "libtopomap.adapters": ROOT / "adapters"}


def _modules():
    """Map each module name to its file (packages by their ``__init__.py``)."""
    found = {}
    for prefix, folder in SOURCES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([prefix, *parts])] = path
    return found


def _edges(name, path, modules):
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            targets = []
            for alias in node.names:
                sub = f"{origin}.{alias.name}"
                targets.append(sub if sub in modules else origin)
        else:
            continue
        for target in targets:
            # "import libtopomap.a.b" runs libtopomap.a.b; keep the longest known prefix
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def import_cycles():
    """Return the circles of the import graph, each as a sorted list of module names."""
    modules = _modules()
    names = sorted(modules)
    index = {n: i for i, n in enumerate(names)}
    rows, cols = [], []
    for name in names:
        for target in set(_edges(name, modules[name], modules)):
            rows.append(index[name])
            cols.append(index[target])
    graph = csr_array(([1] * len(rows), (rows, cols)), shape=(len(names), len(names)))
    count, labels = connected_components(graph, directed=True, connection="strong")
    groups = {}
    for name, label in zip(names, labels):
        groups.setdefault(label, []).append(name)
    return sorted(group for group in groups.values() if len(group) > 1)


def test_no_import_cycle():
    cycles = import_cycles()
    assert not cycles, "import circles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_graph_sees_function_level_imports(tmp_path, monkeypatch):
    pkg = tmp_path / "libtopomap"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .a import g\n")
    monkeypatch.setitem(SOURCES, "libtopomap", pkg)
    monkeypatch.delitem(SOURCES, "libtopomap.adapters")
    assert import_cycles() == [["libtopomap.a", "libtopomap.b"]]


def test_no_test_module_imports_another():
    # shared test code lives in tests/_helpers.py (tests/mpi/_helpers.py under mpiexec): importing a test
    # module runs its collection-time code again and ties two topics' files together
    # (conftest.py is the MPI harness, which tests/test_mpi_suite.py tests: importing it is fine)
    tests = pathlib.Path(__file__).resolve().parent
    stems = {p.stem for p in tests.rglob("test_*.py")}
    found = []
    for path in sorted(tests.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            found += [f"{path.relative_to(tests)}: {n}" for n in names if n.split(".")[0] in stems]
    assert found == [], "test modules import test modules: " + "; ".join(found)
