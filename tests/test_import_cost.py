"""Heavy modules are imported only where they are used (issue 19: small jobs must be fast).

A ``libtopomap map --strategy all --refine ta`` run whose first construction reaches the lower bound
(greedy on a scrambled torus stencil) runs no other strategy, so it must not pay for their imports:
scipy.optimize (multisection's assignment, ~0.25 s idle), scotchpy (scotch), networkx, matplotlib, and
mpi4py outside mpiexec.  Checked in a fresh interpreter.
"""

import json
import subprocess
import sys

HEAVY = ("scipy.optimize", "scotchpy", "networkx", "matplotlib", "mpi4py")


def _modules_after(code):
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                          f"print(json.dumps([m for m in {list(HEAVY)!r} if m in sys.modules]))"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_the_library_and_its_mappers_imports_no_heavy_module():
    assert _modules_after("import libtopomap, libtopomap.mappers, libtopomap.portfolio, libtopomap.patterns, "
                          "libtopomap.cli._map") == []


def test_a_race_ended_by_greedy_at_the_bound_imports_no_other_strategys_modules(tmp_path):
    topo = tmp_path / "t.json"
    code = (f"import libtopomap as ltm\nltm.save({str(topo)!r}, ltm.torus('4x4x4'))\n"
            "import io, contextlib\nfrom libtopomap.cli import main\nbuf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n"
            f"    rc = main(['map', '--topology', {str(topo)!r}, '--graph', 'torus-scrambled:4x4x4:1', '--strategy',"
            " 'all', '--refine', 'ta', '--quiet', '--json'])\n"
            "assert rc == 0\n"
            "recs = __import__('json').loads(buf.getvalue())\n"
            "assert next(r for r in recs if r['chosen'])['strategy'] == 'greedy', recs\n"
            "assert all('skipped' in r for r in recs[2:]), recs\n")
    assert _modules_after(code) == []
