"""Fuzz the fabric adapters with mutations of real dumps: only FormatError may escape.

Inputs are windows of the real dumps in ``tests/data/fabrics/`` (plus the GPL-only ones of the shared
folder when it is there) and of ``topology_files/`` mutated by truncation, line swaps,
line deletion/duplication and random bytes; each is read with every adapter (strict and not) and by
sniffing.  A bounded budget keeps this in CI; ``benchmarks/fuzz_ingest.py`` runs the long version.

Mutated dumps make the readers warn (:class:`~libtopomap.LibTopoMapWarning`, about 2,500 per run): the
warnings are recorded per input and checked to be of that class only, so they neither flood the suite's
output nor hide another warning (a RuntimeWarning from numpy, say) that would be a failure.
"""

import pathlib
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from libtopomap.errors import FormatError, LibTopoMapWarning
from libtopomap.formats import read_buffer, sniff
from libtopomap.topology import Topology

from _helpers import FABRICS, SHARED_ONLY

# a fuzzer: the full lane runs it, the everyday one (-m "not slow") does not
pytestmark = pytest.mark.slow

FILES = pathlib.Path(__file__).resolve().parents[1] / "topology_files"
TOPO = FABRICS
FORMATS = ("ibnetdiscover", "ibnetdiscover-ports", "slurm", "ibdiagnet-lst")


def _corpus():
    paths = sorted(FILES.glob("small_fabric*"))
    paths += sorted(TOPO.glob("*.txt")) + sorted(TOPO.glob("extras/*.txt"))
    if SHARED_ONLY.is_dir():  # the GPL-only dumps not copied into tests/data/fabrics
        copied = {p.relative_to(TOPO) for p in paths if p.is_relative_to(TOPO)}
        paths += [p for p in sorted(SHARED_ONLY.glob("*.txt")) + sorted(SHARED_ONLY.glob("extras/*.txt"))
                  if p.relative_to(SHARED_ONLY) not in copied]
    return [p.read_text(encoding="utf-8", errors="replace") for p in paths]


CORPUS = _corpus()


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(CORPUS))
    lines = text.splitlines(keepends=True)
    # a window keeps inputs small (the big dumps have thousands of lines)
    start = draw(st.integers(0, max(0, len(lines) - 1)))
    lines = lines[start:start + draw(st.integers(1, 120))]
    for _ in range(draw(st.integers(0, 4))):
        op = draw(st.sampled_from(["swap", "delete", "dup", "bytes", "truncate", "insert"]))
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        if op == "swap":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "delete":
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "bytes":
            s = lines[i]
            k = draw(st.integers(0, len(s)))
            junk = draw(st.binary(min_size=1, max_size=8)).decode("latin-1")
            lines[i] = s[:k] + junk + s[k + draw(st.integers(0, 3)):]
        elif op == "truncate":
            lines[i] = lines[i][:draw(st.integers(0, len(lines[i])))]
            del lines[i + 1:]
        else:
            lines.insert(i, draw(st.text(max_size=40)) + "\n")
    return "".join(lines)


def _check(text):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _read_all(text)
    others = [f"{w.category.__name__}: {w.message}" for w in caught if not issubclass(w.category, LibTopoMapWarning)]
    assert not others, others


def _read_all(text):
    try:
        fmt = sniff(text[:65536])
    except FormatError:
        fmt = None
    for name in FORMATS + ((fmt,) if fmt and fmt not in FORMATS else ()):
        for strict in (False, True):
            try:
                opts = {"strict": strict} if name in FORMATS else {}
                t = read_buffer(text, name, path="fuzz", **opts)
            except FormatError as e:
                assert str(e)  # documented error type, with a message
            else:
                assert isinstance(t, Topology) and t.hosts.size >= 1
                if name in FORMATS:
                    assert isinstance(t.attrs["warnings"], list) and isinstance(t.attrs["excluded"], list)


@pytest.mark.skipif(not CORPUS, reason="no corpus")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated())
def test_only_format_error_escapes(text):
    _check(text)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_random_text_only_format_error(text):
    _check(text)
