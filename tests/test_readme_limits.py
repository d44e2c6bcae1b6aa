"""The README's "Limits" section names every ``LIBTOPOMAP_*`` environment variable the library reads and
every limit option of the command line, with the defaults the code uses."""

import pathlib
import re

from libtopomap._limits import MAX_EDGES, MAX_VERTICES
from libtopomap.mpi.bench import MAX_BUFFER_BYTES

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _section(text, heading):
    body = text.split(f"\n{heading}\n", 1)[1]
    return re.split(r"\n#{1,3} ", body, maxsplit=1)[0]


def test_every_environment_variable_is_in_the_limits_section():
    names = set()
    for path in list((ROOT / "libtopomap").rglob("*.py")) + list((ROOT / "adapters").rglob("*.py")):
        names.update(re.findall(r"LIBTOPOMAP_[A-Z_]+[A-Z]", path.read_text(encoding="utf-8")))
    assert {"LIBTOPOMAP_MAX_VERTICES", "LIBTOPOMAP_MAX_EDGES", "LIBTOPOMAP_BENCH_MAX_BYTES"} <= names
    limits = _section((ROOT / "README.md").read_text(encoding="utf-8"), "### Limits")
    missing = sorted(n for n in names if f"`{n}`" not in limits)
    assert not missing, f"README '### Limits' does not name {missing}"
    tour = (ROOT / "docs" / "tour.rst").read_text(encoding="utf-8")
    assert not [n for n in names if f"``{n}``" not in tour]


def test_the_defaults_in_the_table_are_the_code_s():
    limits = _section((ROOT / "README.md").read_text(encoding="utf-8"), "### Limits")
    assert f"{MAX_VERTICES:,}" in limits and f"{MAX_EDGES:,}" in limits
    assert MAX_BUFFER_BYTES == 1 << 30 and "1 GiB" in limits
    for option in ("--max-vertices N", "--max-edges N", "--max-memory BYTES"):
        assert f"`{option}`" in limits or f"map {option}" in limits
