"""Progress lines of long commands (``libtopomap.cli._progress``): drawn on a terminal only, throttled,
erased at the end, silent with ``--quiet``, never on standard output."""

import io
import json

import pytest

import libtopomap as ltm
from libtopomap.cli import _progress, main
from libtopomap.cli._progress import Progress
from libtopomap.portfolio import MappingProblem, make_candidates, run_portfolio


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_renderer_on_a_terminal_draws_throttled_lines_and_erases_them():
    tty, clock = FakeTTY(), Clock()
    p = Progress("libtopomap map", stream=tty, delay=2.0, interval=0.25, objective="congestion", thread=False,
                 clock=clock, width=200)
    with p:
        p.stage("greedy+ta (candidate 1)")
        assert tty.getvalue() == ""                      # nothing in the first 2 s
        clock.t += 1.9
        assert not p.tick() and tty.getvalue() == ""
        clock.t += 0.6                                   # 2.5 s
        assert p.tick()
        assert tty.getvalue() == "\rlibtopomap map:  greedy+ta (candidate 1)  2.5 s"
        clock.t += 0.1                                   # throttled: 0.1 s < 0.25 s since the last line
        assert not p.tick()
        clock.t += 0.2
        p.best(1.5, "rcm", key=(1.5, 0.4))
        assert tty.getvalue().endswith("\rlibtopomap map:  greedy+ta (candidate 1)  2.8 s  best congestion 1.5 (rcm)")
        clock.t += 0.3
        p.best(2.0, "random", key=(2.0, 0.1))             # worse: the best stays
        clock.t += 0.3
        p.stage("x")                                     # shorter line: padded over the longer one
        last = tty.getvalue().rsplit("\r", 1)[1]
        assert last.startswith("libtopomap map:  x  3.4 s  best congestion 1.5 (rcm)")
        shown = len("libtopomap map:  greedy+ta (candidate 1)  2.8 s  best congestion 1.5 (rcm)")
        assert len(last) == shown and last.endswith(" ")
        clock.t += 8.0
        p.tick()
        assert tty.getvalue().rsplit("\r", 1)[1].startswith("libtopomap map:  x  11 s  best")
        n = len(tty.getvalue().rsplit("\r", 1)[1].rstrip())
    assert tty.getvalue().endswith("\r" + " " * n + "\r")  # erased at the end
    assert p.drawn == 5  # 2.5, 2.8, 3.1 (a worse result: the line still ticks), 3.4, 11.4 s


def test_renderer_cuts_lines_to_the_terminal_width():
    tty, clock = FakeTTY(), Clock()
    with Progress("libtopomap simulate", stream=tty, delay=0, thread=False, clock=clock, width=30) as p:
        p.stage("a very long stage description that does not fit")
    first = tty.getvalue().split("\r")[1]
    assert len(first) == 30 and first.endswith("...")


def test_renderer_writes_nothing_when_not_a_terminal_or_disabled():
    for stream, enabled in ((io.StringIO(), None), (FakeTTY(), False)):
        clock = Clock()
        with Progress("libtopomap map", stream=stream, enabled=enabled, delay=0, interval=0, clock=clock,
                      thread=True) as p:
            for k in range(5):
                clock.t += 1
                p.stage(f"step {k}")
                p.best(float(k), "s")
        assert stream.getvalue() == "" and p.drawn == 0


def test_thread_redraws_while_the_work_runs():
    import time

    tty = FakeTTY()
    with Progress("libtopomap collective", stream=tty, delay=0, interval=0.01, width=200) as p:
        p.stage("two-opt")
        # no call into the renderer from here on: only its thread draws (10 s at most on a loaded machine)
        deadline = time.monotonic() + 10
        while p.drawn < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert p.drawn >= 3
    assert tty.getvalue().count("\rlibtopomap collective:  two-opt") >= 3


def test_portfolio_calls_progress_before_and_after_each_phase():
    topo = ltm.torus("4x4")
    graph = ltm.load_graph("torus-scrambled:4x4:1")
    cands = make_candidates(["greedy", "rcm"], seed=0, refine="two-opt")
    calls = []
    result = run_portfolio(MappingProblem(topo, graph), cands,
                           progress=lambda phase, c, o: calls.append((phase, c.index, o)))
    starts = [(ph, i) for ph, i, o in calls if o is None]
    ends = [(ph, i) for ph, i, o in calls if o is not None]
    assert starts == ends  # every start has its end, in the same order
    for k in range(0, len(calls), 2):  # ... right after it
        assert calls[k][:2] == calls[k + 1][:2] and calls[k][2] is None and calls[k + 1][2] is not None
    assert [i for ph, i in starts if ph == "construct"][0] == 0
    assert {ph for ph, _ in starts} <= {"construct", "refine"}
    refined = [o for ph, i, o in calls if ph == "refine" and o is not None]
    assert all(o.candidate.refine for o in refined)
    # the best outcome reported is the winner
    best = min((o for _, _, o in calls if o is not None), key=lambda o: o.sort_key())
    assert best.key == result.winner.key


@pytest.fixture()
def torus_file(tmp_path):
    p = tmp_path / "t.ltm"
    ltm.save(str(p), ltm.torus("4x4"))
    return str(p)


@pytest.mark.parametrize("command", ["map", "collective"])
def test_cli_progress_on_stderr_only_and_quiet_silences(command, torus_file, monkeypatch, capsys):
    monkeypatch.setattr(_progress, "DELAY", 0.0)     # draw from the first call on
    monkeypatch.setattr(_progress, "INTERVAL", 0.0)
    argv = (["map", "--topology", torus_file, "--graph", "torus-scrambled:4x4:2", "--strategy", "all",
             "--refine", "two-opt", "--json"] if command == "map" else
            ["collective", "--topology", torus_file, "--procs", "8", "--iterations", "2000", "--json"])
    for quiet in (False, True):
        tty = FakeTTY()
        monkeypatch.setattr("sys.stderr", tty)
        assert main(argv + (["--quiet"] if quiet else [])) == 0
        out = capsys.readouterr().out
        json.loads(out)                                   # stdout stays one JSON document
        assert "\r" not in out
        if quiet:
            assert tty.getvalue() == ""
        else:
            assert tty.getvalue().startswith(f"\rlibtopomap {command}:  ")
            assert tty.getvalue().endswith("\r")          # erased before the result
            if command == "map":
                assert "best congestion" in tty.getvalue()


def test_cli_no_progress_when_stderr_is_not_a_terminal(torus_file, monkeypatch, capsys):
    monkeypatch.setattr(_progress, "DELAY", 0.0)
    monkeypatch.setattr(_progress, "INTERVAL", 0.0)
    assert main(["map", "--topology", torus_file, "--graph", "stencil:4x4", "--json"]) == 0
    captured = capsys.readouterr()
    json.loads(captured.out)
    assert captured.err == ""


# ----------------------------------------------------------------------------------- under mpiexec
def test_for_command_under_mpiexec_draws_on_rank_0_only(monkeypatch):
    monkeypatch.setattr("sys.stderr", FakeTTY())

    class Args:
        quiet = False
    assert _progress.for_command(Args, "map", rank=0).enabled
    assert not _progress.for_command(Args, "map", rank=1).enabled
    Args.quiet = True
    assert not _progress.for_command(Args, "map", rank=0).enabled
    # rank 0 on a pipe: it draws when its launcher writes to a terminal
    monkeypatch.setattr("sys.stderr", io.StringIO())
    Args.quiet = False
    for found in (True, False):
        monkeypatch.setattr(_progress, "launcher_terminal", lambda found=found: found)
        assert _progress.for_command(Args, "map", rank=0).enabled is found


def _fake_proc(root, chain):
    """A /proc of ``(pid, name, parent, stderr target)`` entries."""
    import os

    for pid, name, parent, err in chain:
        d = root / str(pid)
        (d / "fd").mkdir(parents=True)
        (d / "stat").write_text(f"{pid} ({name}) S {parent} {pid} {pid} 0 -1 4194560\n")
        os.symlink(err, d / "fd" / "2")


@pytest.mark.parametrize("launcher_err, expect", [("/dev/pts/3", True), ("pipe:[812]", False),
                                                  ("/tmp/job.err", False)])
def test_launcher_terminal_reads_the_launchers_stderr(tmp_path, launcher_err, expect):
    # rank -> hydra proxy -> mpiexec -> a shell on a terminal: only mpiexec's own stderr counts
    _fake_proc(tmp_path, [(100, "python", 90, "pipe:[1]"), (90, "hydra_pmi_proxy", 80, "pipe:[2]"),
                          (80, "mpiexec", 70, launcher_err), (70, "bash", 1, "/dev/pts/3")])
    assert _progress.launcher_terminal(100, proc=str(tmp_path)) is expect


def test_launcher_terminal_without_a_launcher_or_proc(tmp_path):
    # a name with a parenthesis and spaces, no launcher up to init: False, even under a terminal shell
    _fake_proc(tmp_path, [(100, "py (x) y", 70, "pipe:[1]"), (70, "bash", 1, "/dev/pts/3")])
    assert _progress.launcher_terminal(100, proc=str(tmp_path)) is False
    _fake_proc(tmp_path, [(200, "python", 190, "pipe:[1]"), (190, "prted", 180, "pipe:[2]"),
                          (180, "mpirun", 1, "/dev/pts/0")])
    assert _progress.launcher_terminal(200, proc=str(tmp_path)) is True
    assert _progress.launcher_terminal(200, proc=str(tmp_path), levels=1) is False  # too far up
    assert _progress.launcher_terminal(5, proc=str(tmp_path)) is False             # no such process
    assert _progress.launcher_terminal(proc=str(tmp_path / "none")) is False


def _run_on_a_terminal(cmd, env, timeout=240):
    """Run ``cmd`` with its standard error on a pseudo-terminal and standard output on a pipe; the two as text."""
    import os
    import pty
    import select
    import subprocess
    import time

    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    err, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal's other side closed: every writer is gone
                break
            if not chunk:
                break
            err += chunk
        elif proc.poll() is not None:
            break
    else:
        proc.kill()
    out = proc.communicate(timeout=30)[0]
    os.close(master)
    return proc.returncode, out.decode(), err.decode(errors="replace")


def test_map_under_mpiexec_shows_progress_on_the_launchers_terminal(mpi, tmp_path):
    """``mpiexec -n 2 libtopomap map`` run from a terminal: rank 0 draws the line (its own stderr is a pipe
    to mpiexec), ``--json`` on standard output stays one JSON document, ``--quiet`` silences it."""
    import sys

    if mpi.problem:
        pytest.skip(mpi.problem)
    topo = tmp_path / "t.ltm"
    ltm.save(str(topo), ltm.torus("8x8x8"))
    argv = [sys.executable, "-m", "libtopomap", "map", "--topology", str(topo), "--graph", "torus-scrambled:6x6x6:3",
            "--strategy", "random", "--refine", "ta", "--time-budget", "3", "--json"]
    for quiet in (False, True):
        # draw from the start: on an idle machine the whole run can end before the default 2 s
        env = {**mpi.env(), "LIBTOPOMAP_PROGRESS_DELAY": "0"}
        rc, out, err = _run_on_a_terminal(mpi.command(2, *argv, *(["--quiet"] if quiet else [])), env)
        assert rc == 0, (out, err)
        recs = json.loads(out)
        assert "\r" not in out and any(r.get("chosen") for r in recs)
        if quiet:
            assert "libtopomap map:" not in err, err
        else:
            assert "\rlibtopomap map:  " in err and "best congestion" in err, err
            assert "on 2 ranks" in err or "random+ta" in err, err


def test_progress_delay_from_the_environment(monkeypatch):
    from libtopomap.cli._progress import DELAY, progress_delay
    from libtopomap.errors import ArgumentError

    monkeypatch.delenv("LIBTOPOMAP_PROGRESS_DELAY", raising=False)
    assert progress_delay() == DELAY == 2.0
    monkeypatch.setenv("LIBTOPOMAP_PROGRESS_DELAY", "0.5")
    assert progress_delay() == 0.5
    for bad in ("-1", "nan", "inf", "soon"):
        monkeypatch.setenv("LIBTOPOMAP_PROGRESS_DELAY", bad)
        with pytest.raises(ArgumentError, match="LIBTOPOMAP_PROGRESS_DELAY"):
            progress_delay()
