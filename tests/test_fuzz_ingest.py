"""A short run of the long fuzzer (``benchmarks/fuzz_ingest.py``): every family, the ``bench`` one under
``mpiexec``, must end with zero failures, and the report must count what it ran."""

import json
import pathlib
import shutil
import subprocess
import sys

import pytest

# a fuzzer: the full lane runs it, the everyday one (-m "not slow") does not
pytestmark = pytest.mark.slow

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "fuzz_ingest.py"


def _run(tmp_path, *args):
    out = tmp_path / "fuzz"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--jobs", "1", "--memory", "3", "--hang", "60",
                           "--out", str(out), *args], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads((out.with_suffix(".json")).read_text())


def test_every_family_but_bench_without_a_failure(tmp_path):
    families = ["topology", "slurm-yaml", "graph", "hosts", "misc", "cli"]
    doc = _run(tmp_path, "-n", "120", "--seed", "7", *[a for f in families for a in ("--family", f)])
    assert doc["finished"] and doc["inputs"] == 120 and doc["failures"] == 0
    assert all(doc["families"][f].get("inputs", 0) > 0 for f in families), doc["families"]


@pytest.mark.skipif(shutil.which("mpiexec", path=str(pathlib.Path(sys.executable).parent)) is None,
                    reason="no mpiexec in the venv (the bench family runs each input under mpiexec)")
def test_the_bench_family_runs_under_mpiexec_without_a_failure(tmp_path):
    doc = _run(tmp_path, "-n", "3", "--seed", "2", "--family", "bench")
    fam = doc["families"]["bench"]
    assert doc["failures"] == 0 and fam["inputs"] == 3
    assert sum(v for k, v in fam.items() if k.startswith("exit ") or k.startswith("skipped")) == 3, fam
