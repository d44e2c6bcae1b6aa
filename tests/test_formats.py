"""Topology file formats: LibTopoMap text (ltm), JSON, registry and sniffing."""

import io
import json

import numpy as np
import pytest

from libtopomap import FormatError, Topology, dragonfly, fattree, load, percs, read_buffer, save, torus, write_buffer
from libtopomap.formats import sniff

from _helpers import one_line_cli_error

WEIGHTED = """num: 4 w
0 host0
1 host1
2 sw-a
3 host2
0 2(4)
1 2(4)
2 0(4) 1(4) 3(2.5)
3 2(2.5)
"""


def test_ltm_weighted_file_reads_with_switch_rule():
    t = read_buffer(WEIGHTED, "ltm")
    assert t.names == ("host0", "host1", "sw-a", "host2")
    assert t.slots.tolist() == [1, 1, 0, 1]
    assert sorted(t.capacity.tolist()) == [2.5, 4.0, 4.0]
    assert t.name is None


def test_ltm_unweighted_any_order_and_blank_lines():
    text = "num: 3\n\n2 c\n0 a\n1 b\n1 0 2\n0 1\n2 1\n"
    t = read_buffer(text, "ltm")
    assert t.names == ("a", "b", "c") and t.n_links == 2


def test_ltm_w_glued_to_count_like_the_original():
    t = read_buffer(WEIGHTED.replace("num: 4 w", "num: 4w"), "ltm")
    assert t.n_links == 3


def test_ltm_switch_rule_options():
    text = "num: 3\n0 a\n1 b\n2 hub\n0 2\n1 2\n2 0 1\n"
    assert read_buffer(text, "ltm").slots.tolist() == [1, 1, 1]
    assert read_buffer(text, "ltm", switches=["hub"]).slots.tolist() == [1, 1, 0]
    assert read_buffer(text, "ltm", switches=r"^hu").slots.tolist() == [1, 1, 0]
    assert read_buffer(text, "ltm", switches=lambda name, deg: deg > 1, slots=4).slots.tolist() == [4, 4, 0]


@pytest.mark.parametrize("text, line, match", [
    ("", 1, "empty file"),
    ("nodes: 2\n0 a\n1 b\n0 1\n1 0\n", 1, "bad header"),
    ("num: two\n0 a\n1 b\n0 1\n1 0\n", 1, "bad vertex count"),
    ("num: 0\n", 1, "must be positive"),
    ("num: 3\n0 a\n1 b\n2 c\n0 1\n1 0\n", 7, "expected 6 lines.*found 5"),
    ("num: 2\n0 a\n1 b\n0 1\n1 0\nextra stuff\n", 6, "trailing garbage"),
    ("num: 2\n0 a\n2 b\n0 1\n1 0\n", 3, "vertex id 2 out of range 0..1"),
    ("num: 2\n0 a\n0 b\n0 1\n1 0\n", 3, "vertex 0 named twice"),
    ("num: 2\n0 a\n1 b c\n0 1\n1 0\n", 3, "expected '<id> <hostname>'"),
    ("num: 2\n0 a\n1 b\n0 5\n1 0\n", 4, "vertex id 5 out of range"),
    ("num: 2\n0 a\n1 b\n0 x\n1 0\n", 4, "bad adjacency entry 'x'"),
    ("num: 2\n0 a\n1 b\n0 0\n1\n", 4, "lists itself"),
    ("num: 2\n0 a\n1 b\n0 1\n1\n", 4, "listed by vertex 0 but not by vertex 1"),
    ("num: 2\n0 a\n1 b\n0 1\n0 1\n", 5, "adjacency of vertex 0 given twice"),
    ("num: 2 w\n0 a\n1 b\n0 1(abc)\n1 0(1)\n", 4, "bad capacity"),
    ("num: 2 w\n0 a\n1 b\n0 1(0)\n1 0(0)\n", 4, "must be positive"),
    ("num: 2 w\n0 a\n1 b\n0 1(-3)\n1 0(-3)\n", 4, "must be positive"),
    ("num: 2 w\n0 a\n1 b\n0 1(2)\n1 0(3)\n", None, "capacity 2 here but 3"),
    ("num: 2 w\n0 a\n1 b\n0 1\n1 0\n", 4, "no capacity"),
    ("num: 2\n0 a\n1 b\n0 1(2)\n1 0(2)\n", 4, "header has no 'w'"),
    ("num: 3\n0 a\n1 b\n2 c\n0 1\n1 0\n2\n", None, "not all connected"),
    ("num: 2\n0 a\n1 b\n0 1\n1 0\n# libtopomap: {\"dims\": [2,\n", 6, "attributes .* are not JSON"),
    ("num: 2\n0 a\n1 b\n0 1\n1 0\n# libtopomap: [2, 1]\n", 6, "must be a JSON object"),
    ("num: 2\n0 a\n1 b\n# libtopomap: {}\n0 1\n1 0\n#libtopomap: {}\n", 7, "given twice .first on line 4"),
])
def test_ltm_errors_report_file_and_line(tmp_path, text, line, match):
    p = tmp_path / "bad.ltm"
    p.write_text(text)
    with pytest.raises(FormatError, match=match) as ei:
        load(p, format="ltm")
    msg = str(ei.value)
    assert msg.startswith(str(p) + (f":{line}: " if line is not None else ""))
    assert ei.value.path == str(p)
    if line is not None:
        assert ei.value.line == line


def test_ltm_round_trip_and_name_from_basename(tmp_path):
    t = fattree(2, 3)
    p = tmp_path / "my-fat-tree.topo"
    save(p, t)
    assert p.read_text().startswith("num: 20\n")
    t2 = load(p)
    assert t2 == t
    assert t2.name == "my-fat-tree"


def test_ltm_keeps_generator_attributes(tmp_path):
    """A generated torus written as .ltm reads back with its generator and dims (a last comment line,
    after the lines LibTopoMap reads), so it is routed as a grid, not by table; other comments are
    skipped, and attributes JSON cannot hold are left out."""
    t = torus("4x3")
    p = tmp_path / "t.ltm"
    save(p, t)
    lines = p.read_text().splitlines()
    assert len(lines) == 1 + 2 * 12 + 1 and lines[-1] == '# libtopomap: {"generator": "torus", "dims": [4, 3]}'
    t2 = load(p)
    assert t2 == t and t2.attrs == {"generator": "torus", "dims": [4, 3], "source": str(p)}
    assert t2.distances.kind == "grid" and t2.distances.grid_shape == t.distances.grid_shape
    p.write_text("# a comment\n" + "\n".join(lines[:-1]) + "\n")  # no attributes: a table-routed graph
    t3 = load(p)
    assert t3 == t and t3.attrs == {"source": str(p)} and t3.distances.kind != "grid"
    t.attrs.update(array=np.arange(3), thing=object(), nan=float("nan"))
    buf = io.StringIO()
    write_buffer(buf, t, "ltm")
    assert buf.getvalue().splitlines()[-1] == ('# libtopomap: {"generator": "torus", "dims": [4, 3], '
                                               '"array": [0, 1, 2]}')


def test_ltm_weighted_round_trip(tmp_path):
    t = percs(2, 1, seed=3)
    buf = io.StringIO()
    write_buffer(buf, t, "ltm")
    assert buf.getvalue().startswith("num: 64 w\n")
    t2 = read_buffer(buf.getvalue(), "ltm")
    assert t2 == t


@pytest.mark.parametrize("topo", [dragonfly(5, 2, 1, 2), percs(2, 1, seed=0), torus("3x3")])
def test_json_round_trip_everything(tmp_path, topo):
    p = tmp_path / "t.json"
    save(p, topo)
    t2 = load(p)
    assert t2 == topo
    assert t2.name == topo.name and t2.attrs == topo.attrs and t2.kinds == topo.kinds
    assert np.array_equal(t2.capacity, topo.capacity)


def test_json_keeps_slots_and_custom_kinds(tmp_path):
    t = Topology(["a", "b", "c"], [(0, 1), (1, 2)], slots=[4, 0, 2], kinds=["host", "gpu-switch", "host"],
                 name="x", attrs={"k": [1, 2]})
    buf = io.StringIO()
    write_buffer(buf, t, "json")
    doc = json.loads(buf.getvalue())
    assert doc["format"] == "libtopomap-topology" and doc["version"] == 1
    t2 = read_buffer(buf.getvalue(), "json")
    assert t2.slots.tolist() == [4, 0, 2] and t2.kinds == t.kinds and t2.attrs == {"k": [1, 2]}


@pytest.mark.parametrize("doc, match", [
    ('{"format": "libtopomap-topology", "version": 1, "vertices": [], ', "invalid JSON"),
    ('{"format": "other"}', "not a libtopomap topology"),
    ('{"format": "libtopomap-topology", "version": 7, "vertices": [], "links": []}', "unsupported version 7"),
    ('{"format": "libtopomap-topology", "version": 1, "vertices": [1], "links": []}', "vertex 0"),
    ('{"format": "libtopomap-topology", "version": 1, "vertices": [{"name": "a"}], "links": [[0, 3]]}',
     "out of range"),
    ('{"format": "libtopomap-topology", "version": 1, "vertices": [{"name": "a"}, {"name": "b"}], '
     '"links": [[0, 1, -1]]}', "capacit"),
])
def test_json_errors(tmp_path, doc, match):
    p = tmp_path / "bad.json"
    p.write_text(doc)
    with pytest.raises(FormatError, match=match) as ei:
        load(p)
    assert str(ei.value).startswith(str(p))


def test_sniffing_and_unknown_format(tmp_path):
    assert sniff("num: 4\n") == "ltm"
    assert sniff('  {"format": "libtopomap-topology"}') == "json"
    p = tmp_path / "mystery.dat"
    p.write_text("hello\n")
    with pytest.raises(FormatError, match="cannot tell the format"):
        load(p)
    with pytest.raises(FormatError, match="unknown format 'nope'"):
        load(p, format="nope")
    with pytest.raises(FormatError, match="cannot open"):
        load(tmp_path / "missing.ltm")


def test_shipped_examples_match_their_generators():
    import pathlib

    import libtopomap as L

    root = pathlib.Path(__file__).resolve().parents[1] / "topology_files"
    expected = {"torus-4x4": L.torus("4x4"), "torus-8x8x8": L.torus("8x8x8"), "fattree-k4-n3": L.fattree(4, 3),
                "dragonfly-g9-a4-p2-h2": L.dragonfly(9, 4, 2, 2), "percs-s4-d3": L.percs(4, 3, seed=1),
                "rtt-8": L.rtt(8)}
    for name, topo in expected.items():
        for ext in ("ltm", "json"):
            t = load(root / f"{name}.{ext}")
            assert t == topo, f"{name}.{ext}"
            assert t.name == name


def test_ltm_keeps_non_round_capacities_exactly():
    t = Topology(["a", "b", "c"], [(0, 1), (1, 2)], capacities=[1 / 3, 24.0])
    buf = io.StringIO()
    write_buffer(buf, t, "ltm")
    assert "1(24)" in buf.getvalue()
    assert np.array_equal(read_buffer(buf.getvalue(), "ltm").capacity, t.capacity)


# ------------------------------------------------------------------------ the format table and plugins
import os  # noqa: E402
import pathlib  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402

from libtopomap import formats as F  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
SMALL_IBND = ROOT / "topology_files" / "small_fabric.ibnetdiscover"


@pytest.fixture
def fresh_table(monkeypatch):
    """A private copy of the format table (nothing resolved, entry points not listed yet)."""
    monkeypatch.setattr(F, "_FORMATS", F._builtin_table())
    monkeypatch.setattr(F, "_entry_points_listed", False)
    return F._FORMATS


def test_table_names_every_builtin_module_inside_the_library():
    assert list(F.BUILTIN_FORMATS)[:2] == ["ltm", "json"]
    for name, (module, reader, writer, sniffer, _ext, _desc) in F.BUILTIN_FORMATS.items():
        assert module.startswith("libtopomap."), name
        mod = __import__(module, fromlist=["_"])
        assert callable(getattr(mod, reader)) and callable(getattr(mod, sniffer))
        assert writer is None or callable(getattr(mod, writer))
    assert set(F.formats()) >= set(F.BUILTIN_FORMATS)


def test_import_formats_loads_no_reader():
    code = ("import sys, libtopomap.formats as F\n"
            "assert not [m for m in sys.modules if m.startswith(('libtopomap.adapters', 'libtopomap.formats.'))], "
            "sorted(sys.modules)\n"
            "F.formats()\n"
            "assert 'libtopomap.adapters' not in sys.modules\n"
            )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_failing_reader_import_is_a_format_error_naming_the_format(fresh_table, monkeypatch):
    monkeypatch.setitem(sys.modules, "libtopomap.adapters.slurm", None)  # import raises ImportError
    with pytest.raises(FormatError, match=r"format 'slurm': cannot import its reader module "
                                          r"'libtopomap.adapters.slurm'"):
        read_buffer("SwitchName=s0 Nodes=n[1-2]\n", "slurm")
    # sniffing tries every sniffer: a broken one is an error too, never skipped
    with pytest.raises(FormatError, match="format 'slurm'"):
        sniff("nothing known\n")


def test_register_format_with_callables_and_module_strings(fresh_table):
    seen = []

    def reader(file, *, path, **options):
        seen.append((file.read(), path, options))
        return torus("2x2")

    F.register_format("mine", reader=reader, sniff=lambda head: head.startswith("MINE"), extensions=(".mine",))
    assert read_buffer("MINE 1\n", "mine", flag=1) == torus("2x2")
    assert seen == [("MINE 1\n", "<stream>", {"flag": 1})]
    assert sniff("MINE\n") == "mine"
    assert "mine" in F.formats()
    # lazily named by "module:attr", loaded on first use
    F.register_format("ltm2", reader="libtopomap.formats.ltm:read_ltm", writer="libtopomap.formats.ltm:write_ltm")
    buf = io.StringIO()
    write_buffer(buf, torus("3x3"), "ltm2")
    assert read_buffer(buf.getvalue(), "ltm2") == torus("3x3")
    F.register_format("gone", reader="no_such_module_for_libtopomap:read")
    with pytest.raises(FormatError, match="format 'gone': cannot import its reader module"):
        read_buffer("x", "gone")
    with pytest.raises(FormatError, match="cannot be written"):
        write_buffer(io.StringIO(), torus("2x2"), "gone")
    with pytest.raises(FormatError, match="must be a callable"):
        F.register_format("bad", reader=42)


def _fake_dist(root, name, entry_points):
    info = root / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[libtopomap.formats]\n" + entry_points)


def test_entry_point_formats(tmp_path):
    _fake_dist(tmp_path, "ltmplugin", "plugfmt = ltmplugin_mod:FORMAT\nbrokenfmt = ltmplugin_missing:FORMAT\n"
                                      "ltm = ltmplugin_mod:FORMAT\n")
    (tmp_path / "ltmplugin_mod.py").write_text(textwrap.dedent('''
        from libtopomap.formats.ltm import read_ltm
        def read(file, *, path, **options):
            return read_ltm(file, path=path, **options)
        FORMAT = {"reader": read, "sniff": lambda head: head.startswith("PLUG"), "extensions": (".plug",),
                  "description": "a plugin"}
    '''))
    code = textwrap.dedent('''
        import io, warnings, pytest
        import libtopomap.formats as F
        from libtopomap import FormatError, torus
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            names = F.formats()
        assert "plugfmt" in names and "brokenfmt" in names, names
        assert any("format 'ltm' is already defined" in str(x.message) for x in w)
        buf = io.StringIO(); F.write_buffer(buf, torus("2x2"), "ltm")
        assert F.read_buffer(buf.getvalue(), "plugfmt") == torus("2x2")
        with pytest.raises(FormatError, match="format 'brokenfmt': cannot load entry point"):
            F.read_buffer("x", "brokenfmt")
        assert F.read_buffer(buf.getvalue(), "ltm") == torus("2x2")  # the library's own ltm
        print("ok")
    ''')
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_nothing_is_imported_from_the_working_directory(tmp_path):
    # a module and a package named "adapters" in the working directory, first on sys.path and PYTHONPATH:
    # importing either leaves a marker file; libtopomap must use its own adapters and never touch them
    (tmp_path / "adapters.py").write_text("open('IMPORTED_adapters_py', 'w').close()\nraise SystemExit(3)\n")
    pkg = tmp_path / "sub" / "adapters"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("open('IMPORTED_adapters_pkg', 'w').close()\nraise SystemExit(4)\n")
    for mod in ("ibnetdiscover", "slurm", "ibnetdiscover_ports", "ibdiagnet_lst", "_fabric"):
        (pkg / f"{mod}.py").write_text("open('IMPORTED_adapters_sub', 'w').close()\nraise SystemExit(5)\n")
    code = textwrap.dedent(f'''
        import sys
        sys.path.insert(0, {str(tmp_path / "sub")!r})
        sys.path.insert(0, "")
        import libtopomap, libtopomap.formats as F
        t = libtopomap.load({str(SMALL_IBND)!r})
        assert t.hosts.size == 5, t
        assert F.sniff(open({str(SMALL_IBND)!r}).read()) == "ibnetdiscover"
        assert F._FORMATS["ibnetdiscover"].reader.__module__ == "libtopomap.adapters.ibnetdiscover"
        assert "adapters" not in sys.modules
        import libtopomap.adapters as A
        assert not A.__file__.startswith({str(tmp_path)!r}), A.__file__
        print("ok")
    ''')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(tmp_path / "sub")]))
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("IMPORTED")) == []


# ------------------------------------------------------------------ bad JSON topologies from the command line
_JSON_HEAD = '{"format": "libtopomap-topology", "version": 1, '


@pytest.mark.parametrize("text, needle", [
    ("[" * 100_000, "t.json: invalid JSON: nested too deeply"),
    (_JSON_HEAD + '"vertices": [{"name": "a"}, {"name": "b"}], "links": [[0, 1, NaN]]}',
     "t.json: invalid JSON: NaN is not a JSON number"),
    (_JSON_HEAD + '"vertices": [{"name": "a"}, {"name": "b"}], "links": [[0, 1, Infinity]]}',
     "t.json: invalid JSON: Infinity is not a JSON number"),
    (_JSON_HEAD + '"vertices": [{"name": "a"}, {"name": "b"}], "links": [[0, 1, 1e999]]}',
     "t.json: link 0: capacity must be a finite positive number, got inf"),
    (_JSON_HEAD + '"vertices": [{"name": "a", "slots": "2"}, {"name": "b"}], "links": [[0, 1]]}',
     "t.json: vertex 0: \"slots\" must be a non-negative integer, got '2'"),
    (_JSON_HEAD + '"vertices": [{"name": "a", "slots": 1.5}, {"name": "b"}], "links": [[0, 1]]}',
     "t.json: vertex 0: \"slots\" must be a non-negative integer, got 1.5"),
    (_JSON_HEAD + '"vertices": [{"name": "a", "slots": true}, {"name": "b"}], "links": [[0, 1]]}',
     "t.json: vertex 0: \"slots\" must be a non-negative integer, got True"),
    (_JSON_HEAD + '"vertices": [{"name": "a", "kind": 3}, {"name": "b"}], "links": [[0, 1]]}',
     "t.json: vertex 0: \"kind\" must be a string"),
    (_JSON_HEAD + '"vertices": [{"name": 7}, {"name": "b"}], "links": [[0, 1]]}',
     "t.json: vertex 0: expected an object with a string \"name\""),
    (_JSON_HEAD + '"vertices": [{"name": "a"}, {"name": "b"}], "links": [[0, 1, "2"]]}',
     "t.json: link 0: capacity must be a finite positive number, got '2'"),
    (_JSON_HEAD + '"vertices": [{"name": "a"}, {"name": "b"}], "links": [[0, true]]}',
     "t.json: link 0: endpoints must be vertex indices"),
    (_JSON_HEAD + '"name": 5, "vertices": [{"name": "a"}, {"name": "b"}], "links": [[0, 1]]}',
     "t.json: 'name' must be a string, got 5"),
    (_JSON_HEAD + '"attrs": [1], "vertices": [{"name": "a"}, {"name": "b"}], "links": [[0, 1]]}',
     "t.json: 'attrs' must be an object, got [1]"),
])
def test_bad_json_topologies_give_one_line_errors(tmp_path, capsys, text, needle):
    (tmp_path / "t.json").write_text(text)
    line = one_line_cli_error(capsys, ["info", str(tmp_path / "t.json"), "--format", "json"])
    assert line.startswith("libtopomap info: error: ") and line.endswith(needle) or needle in line, line
