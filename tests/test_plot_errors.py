"""``libtopomap plot`` and :mod:`libtopomap.plot` on bad input: one-line errors naming the file, a missing
output folder, and no matplotlib (these run without the ``plot`` extra, unlike tests/test_plot.py)."""

import sys

import pytest

import libtopomap as ltm

from _helpers import one_line_cli_error


@pytest.mark.parametrize("data, needle", [
    (bytes(range(256)) * 4, r"b.json:2: not UTF-8 text \(byte 0x80\)"),  # byte 10 ends line 1
    (b'{"sizes": [1, 2]}\xff', r"b.json:1: not UTF-8 text \(byte 0xff\)"),
    (b"[" * 100_000, "b.json: invalid JSON: nested too deeply"),
    (b'{"sizes": [1], "original": {"times": [NaN]}, "mapped": {"times": [1]}}',
     "b.json: invalid JSON: NaN is not a JSON number"),
    (b'{"sizes": [1], "original": {"times": ["x"]}, "mapped": {"times": [1]}}',
     r'b.json: "original": \{"times"\} must be a non-empty list of non-negative numbers'),
    (b'{"sizes": [1, 2], "original": {"times": [1]}, "mapped": {"times": [1, 2]}}',
     r'b.json: "original" has 1 times for 2 sizes'),
    (b'{"sizes": "1K"}', r'b.json: "sizes" must be a non-empty list of positive numbers'),
    (b"[1, 2]", "b.json: expected an object"),
])
def test_plot_from_a_bad_file_is_one_line(tmp_path, capsys, data, needle):
    import re

    (tmp_path / "b.json").write_bytes(data)
    line = one_line_cli_error(capsys, ["plot", "times", "--from", str(tmp_path / "b.json"), "-o", str(tmp_path / "p")])
    assert re.search(needle, line), line
    assert not list(tmp_path.glob("p.*"))


def test_plot_paths_that_do_not_exist(tmp_path, capsys):
    t = str(tmp_path / "t.ltm")
    ltm.save(t, ltm.torus("2x2"))
    out = ["-o", str(tmp_path / "p")]
    assert one_line_cli_error(capsys, ["plot", "times", "--from", str(tmp_path / "no.json"), *out]).endswith(
        "no.json: no such file")
    assert one_line_cli_error(capsys, ["plot", "times", "--from", str(tmp_path), *out]).endswith(
        f"{tmp_path}: not a regular file")
    assert "no.ltm: cannot open: No such file or directory" in one_line_cli_error(
        capsys, ["plot", "adjacency", "--topology", str(tmp_path / "no.ltm"), *out])
    assert "no.txt no such file" in one_line_cli_error(capsys, ["plot", "adjacency", "--graph",
                                                                str(tmp_path / "no.txt"), *out])
    assert "no.map" in one_line_cli_error(capsys, ["plot", "hops", "--topology", t, "--graph", "stencil:2x2",
                                                "--mapping", str(tmp_path / "no.map"), *out])


def test_plot_without_matplotlib_names_the_extra(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    line = one_line_cli_error(capsys, ["plot", "adjacency", "--graph", "stencil:2x2", "-o", str(tmp_path / "p")])
    assert line == "libtopomap plot: error: plots need matplotlib: pip install 'libtopomap[plot]'"
    with pytest.raises(ltm.LibTopoMapError, match=r"pip install 'libtopomap\[plot\]'"):
        from libtopomap.plot import plot_adjacency

        plot_adjacency(None, ltm.load_graph("stencil:2x2"))


def test_plot_into_a_missing_folder_is_an_error_not_a_mkdir(tmp_path, capsys):
    from libtopomap.plot import plot_times, save

    line = one_line_cli_error(capsys, ["plot", "adjacency", "--graph", "stencil:2x2", "-o", str(tmp_path / "no/p")],
                           code=2)
    assert line == (f"libtopomap plot: error: -o {tmp_path}/no/p: folder '{tmp_path}/no' does not exist "
                    "(create it first)")
    fig = plot_times([1024], {"original": [1.0], "mapped": [0.5]})
    with pytest.raises(ltm.ArgumentError, match="folder '.*/no' does not exist"):
        save(fig, tmp_path / "no" / "p")
    assert not (tmp_path / "no").exists()
