"""Every exception the library raises comes from :mod:`libtopomap.errors`, and none is swallowed.

A property of the source: each ``raise X(...)`` in ``libtopomap/`` and ``adapters/`` names a class of
the errors module, or one of the few Python protocol exceptions listed below with the reason.
"""

import ast
import pathlib

import pytest

import libtopomap.errors as errors
from libtopomap.adapters.slurm import expand_hostlist
from libtopomap.cli._map import parse_bytes
from libtopomap.formats.json_format import write_json
from libtopomap.generators import torus

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCES = sorted([*ROOT.joinpath("libtopomap").rglob("*.py"), *ROOT.joinpath("adapters").rglob("*.py")])
OURS = set(errors.__all__)
# (file, exception) raised on purpose although not from errors.py, and why.
ALLOWED = {
    ("*", "AttributeError"),  # module __getattr__: Python's protocol for a missing attribute
    ("*", "SystemExit"),  # the command line ends with a message and an exit status
    ("*", "argparse.ArgumentTypeError"),  # argparse's protocol for type= callables, caught by argparse
    ("libtopomap/patterns.py", "FileNotFoundError"),  # a graph file that does not exist, like open()
    # an ArgumentError subclass that platform.py catches to fall back to explicit routes
    ("libtopomap/smpi/zone.py", "NotDestinationBased"),
}


def _name(node):
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return f"{node.value.id}.{node.attr}"
    return None


def _raised():
    for path in SOURCES:
        rel = path.relative_to(ROOT).as_posix()
        if rel == "libtopomap/errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), rel)):
            if isinstance(node, ast.Raise) and node.exc is not None:
                name = _name(node.exc)
                # a re-raise of a caught or built exception object (lower-case variable) is fine
                if name is not None and name[0].isupper() or (name or "").startswith("argparse."):
                    yield rel, node.lineno, name


def test_every_raise_names_a_libtopomap_error():
    bad = [f"{rel}:{line}: raise {name}" for rel, line, name in _raised()
           if name not in OURS and ("*", name) not in ALLOWED and (rel, name) not in ALLOWED]
    assert not bad, "\n".join(bad)


def test_no_exception_is_swallowed():
    """No handler whose whole body is ``pass`` (``except ...: pass``) and no bare ``except:``."""
    bad = []
    for path in SOURCES:
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), rel)):
            if isinstance(node, ast.ExceptHandler):
                if node.type is None:
                    bad.append(f"{rel}:{node.lineno}: bare except")
                elif len(node.body) == 1 and isinstance(node.body[0], ast.Pass):
                    bad.append(f"{rel}:{node.lineno}: except {ast.unparse(node.type)}: pass")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("call, cls", [
    (lambda: expand_hostlist("n[3-1]"), errors.FormatError),
    (lambda: parse_bytes("12Q"), errors.ArgumentError),
    (lambda: parse_bytes("0"), errors.ArgumentError),
])
def test_bad_values_raise_libtopomap_value_errors(call, cls):
    with pytest.raises(cls) as e:
        call()
    assert isinstance(e.value, errors.LibTopoMapError) and isinstance(e.value, ValueError)


def test_json_attrs_of_the_wrong_type(tmp_path):
    t = torus("2x2")
    t.attrs["bad"] = object()
    with open(tmp_path / "t.json", "w") as f, pytest.raises(errors.ArgumentTypeError, match="attrs value"):
        write_json(t, f)


def test_interrupted_is_an_interruption_not_an_error():
    """A signal during a simulation is not swallowed by ``except Exception`` and crosses ranks as it was."""
    import pickle
    import signal

    e = errors.Interrupted(signal.SIGTERM, "halo under smpirun")
    assert isinstance(e, KeyboardInterrupt) and not isinstance(e, Exception)
    assert str(e) == "SIGTERM received: halo under smpirun stopped" and e.signum == 15
    back = pickle.loads(pickle.dumps(e))
    assert (type(back), str(back), back.signum) == (errors.Interrupted, str(e), 15)
