"""The documentation builds warning-free (``sphinx-build -W``), and what it reads from the README is there.

The build needs the ``docs`` extra (Sphinx, numpydoc, sphinx-argparse) and, for the gallery, the
``plot`` extra; without them the build test skips with the reason.  ``.ci/run`` installs both.
"""

from __future__ import annotations

import html
import importlib.util
import os
import pathlib
import re
import runpy
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
# the docs extension imports docutils and Sphinx at module level: without the ``docs`` extra, skip
pytest.importorskip("docutils", reason="the docs extra is not installed (pip install -e '.[docs]')")
pytest.importorskip("sphinx", reason="the docs extra is not installed (pip install -e '.[docs]')")
_EXT = runpy.run_path(str(DOCS / "_ext" / "ltm_docs.py"))


def _missing(*modules):
    return [m for m in modules if importlib.util.find_spec(m) is None]


def test_glossary_defines_the_project_words():
    text = (DOCS / "glossary.rst").read_text(encoding="utf-8")
    entries = dict(re.findall(r"^   (\S[^\n]*)\n      (\S[^\n]*)$", text, re.M))
    for term in ("host", "switch", "vertex", "slot", "allocation", "placement", "mapping", "communication graph"):
        assert term in entries, term
    assert entries["host"].startswith("a vertex with at least one slot")


def test_readme_is_a_short_start():
    """About 150 lines, the one-line mpi4py change before line 40, the reference in docs/."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 160
    assert next(i for i, ln in enumerate(lines, 1) if "ltm.Create_dist_graph_adjacent(comm" in ln) < 40
    for page in re.findall(r"`docs/(\w+)\.rst`", "\n".join(lines)):
        assert (DOCS / f"{page}.rst").is_file(), page


def test_readme_sections_and_code_blocks():
    text = "# A\nintro\n```bash\n# not a heading\nx\n```\n## B two\n```python\ny = 1\n```\ntext\n```\nz\n```\n"
    sec = _EXT["readme_sections"](text)
    assert list(sec) == ["A", "B two"]
    assert _EXT["code_blocks"](sec["A"]) == [("bash", ["# not a heading", "x"])]
    assert _EXT["code_blocks"](sec["B two"]) == [("python", ["y = 1"]), ("", ["z"])]


def test_tour_names_readme_sections_that_exist():
    sections = _EXT["readme_sections"]((ROOT / "README.md").read_text(encoding="utf-8"))
    for line in (DOCS / "tour.rst").read_text(encoding="utf-8").splitlines():
        if line.startswith(".. readme-code::"):
            heading = line.split("::", 1)[1].strip()
            assert heading in sections, heading
            assert _EXT["code_blocks"](sections[heading]), heading


@pytest.mark.slow
@pytest.mark.timeout(600)  # a first build on a cold numba cache compiles the plotted strategies' kernels
def test_sphinx_build_is_warning_free(tmp_path):
    missing = _missing("sphinx", "numpydoc", "sphinxarg", "matplotlib")
    if missing:
        pytest.skip(f"the documentation needs {', '.join(missing)}: pip install -e '.[docs,plot]'")
    out = tmp_path / "html"
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore::DeprecationWarning")
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
                           "-d", str(tmp_path / "doctrees"), str(DOCS), str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=560)
    assert proc.returncode == 0, proc.stderr[-4000:]
    cli = html.unescape(re.sub(r"<[^>]+>", "", (out / "cli.html").read_text(encoding="utf-8")))
    from libtopomap.cli import COMMANDS

    for command in COMMANDS:  # the CLI reference is generated from the parser: every command is there
        assert f"libtopomap {command}" in cli, command
    assert "--quiet" in cli
    images = {p.name for p in (out / "_images").iterdir()}
    assert {"adjacency.png", "loads.png", "hops.png", "times.png"} <= images
    # nothing committed or built into the site is a blob over 200 KB
    assert max(p.stat().st_size for p in (out / "_images").iterdir()) < 200_000
    glossary = (out / "glossary.html").read_text(encoding="utf-8")
    assert 'id="term-communication-graph"' in glossary
