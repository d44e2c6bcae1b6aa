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


def _scan(modules):
    """One walk of every module's syntax tree: ``{name: (imports, private attributes)}``, ``imports`` as
    ``(node, origin)`` (``origin``: the absolute module a ``from`` import names, None for ``import X``),
    the attributes those of a private name (``x._name``), for :func:`private_name_uses`."""
    scanned = {}
    for name, path in sorted(modules.items()):
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        imports, attributes = [], []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                imports.append((node, None))
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    imports.append((node, ".".join(base + ([node.module] if node.module else []))))
                else:
                    imports.append((node, node.module or ""))
            elif isinstance(node, ast.Attribute) and _is_private(node.attr):
                attributes.append(node)
        scanned[name] = (imports, attributes)
    return scanned


def _edges(name, imports, modules):
    for node, origin in imports:
        if origin is None:
            targets = [alias.name for alias in node.names]
        else:
            targets = []
            for alias in node.names:
                sub = f"{origin}.{alias.name}"
                targets.append(sub if sub in modules else origin)
        for target in targets:
            # "import libtopomap.a.b" runs libtopomap.a.b; keep the longest known prefix
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                yield target


def import_cycles():
    """Return the circles of the import graph, each as a sorted list of module names."""
    modules = _modules()
    scanned = _scan(modules)
    names = sorted(modules)
    index = {n: i for i, n in enumerate(names)}
    rows, cols = [], []
    for name in names:
        for target in set(_edges(name, scanned[name][0], modules)):
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


def _is_private(name):
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_name_uses():
    """Return ``module:line: target._name`` for each use of another module's private name.

    Flagged: ``from X import _name`` where ``X._name`` is not a module, and ``alias._name`` where ``alias``
    is bound by an import to a module of the library (``alias.sub._name`` follows submodules).  Importing a
    private *module* (``from .. import _kernels``) is package-internal and allowed, as are dunder names.
    """
    modules = _modules()
    found = []
    for name, (imports, attributes) in _scan(modules).items():
        bound = {}  # local name -> module it is bound to
        for node, origin in imports:
            if origin is None:
                for alias in node.names:
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        head = alias.name.partition(".")[0]
                        bound[head] = head
                continue
            for alias in node.names:
                sub = f"{origin}.{alias.name}"
                if sub in modules:
                    bound[alias.asname or alias.name] = sub
                elif origin in modules and origin != name and _is_private(alias.name):
                    found.append(f"{name}:{node.lineno}: from {origin} import {alias.name}")
        for node in attributes:
            chain, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                chain.insert(0, value.attr)
                value = value.value
            if not isinstance(value, ast.Name) or value.id not in bound:
                continue
            target = bound[value.id]
            for part in chain:
                if f"{target}.{part}" in modules:
                    target = f"{target}.{part}"
                    continue
                if target in modules and target != name and _is_private(part):
                    found.append(f"{name}:{node.lineno}: {target}.{part}")
                break
    return found


def test_no_module_uses_another_modules_private_name():
    uses = private_name_uses()
    assert not uses, f"{len(uses)} private names used across modules:\n" + "\n".join(uses)


def test_the_private_name_check_sees_imports_and_attributes(tmp_path, monkeypatch):
    pkg = tmp_path / "libtopomap"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "_k.py").write_text("def _g():\n    pass\n\ndef h():\n    _g()\n")
    (pkg / "a.py").write_text("from ._k import _g, h\nfrom . import _k\n\n"
                              "def f():\n    return _k._g, _k.h, _k.__name__\n")
    monkeypatch.setitem(SOURCES, "libtopomap", pkg)
    monkeypatch.delitem(SOURCES, "libtopomap.adapters")
    assert private_name_uses() == ["libtopomap.a:1: from libtopomap._k import _g", "libtopomap.a:5: libtopomap._k._g"]


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
