"""Progress of long commands on a terminal: one status line on standard error, rewritten in place.

:class:`Progress` draws after ``delay`` seconds, at most 4 times a second, only on a terminal and never
with ``--quiet``; under ``mpiexec`` only rank 0 draws, when it or its launcher has a terminal
(:func:`launcher_terminal`).  The details: docs/internals.rst, "The progress line".
"""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time

__all__ = ["Progress", "add_quiet", "for_command", "launcher_terminal", "progress_delay", "LAUNCHERS", "DELAY",
           "INTERVAL"]

#: Seconds of work before a command's first progress line, and least seconds between two lines.
DELAY = 2.0
INTERVAL = 0.25


class Progress:
    """A status line on a terminal, throttled, erased at the end.

    Parameters
    ----------
    command : str
        What the line starts with (e.g. ``"libtopomap map"``).
    stream : file, optional
        Where to draw (default ``sys.stderr``).
    enabled : bool, optional
        Draw at all (default: whether ``stream`` is a terminal).
    delay : float
        Seconds of work before the first line (default 2).
    interval : float
        Least seconds between two draws (default 0.25, i.e. 4 Hz).
    objective : str, optional
        Name of the portfolio's objective, shown with the best result so far.
    thread : bool
        Redraw from a background thread while the work runs (default True; tests pass False and
        call :meth:`tick`).
    clock : callable
        Seconds, monotonic (default :func:`time.monotonic`).
    width : int, optional
        Longest line drawn (default: the terminal's width minus one).

    Examples
    --------
    >>> import io
    >>> with Progress("libtopomap map", stream=io.StringIO()) as p:   # not a terminal: silent
    ...     p.stage("greedy")
    >>> p.drawn
    0
    """

    def __init__(self, command, *, stream=None, enabled=None, delay=2.0, interval=0.25, objective=None,
                 thread=True, clock=time.monotonic, width=None):
        self.command = command
        self.stream = sys.stderr if stream is None else stream
        if enabled is None:
            isatty = getattr(self.stream, "isatty", None)
            try:
                enabled = bool(isatty()) if isatty is not None else False
            except (ValueError, OSError):  # a closed stream
                enabled = False
        self.enabled = enabled
        self.delay = float(delay)
        self.interval = float(interval)
        self.objective = objective
        self.clock = clock
        self.width = width
        self.drawn = 0  # lines drawn (each a rewrite of the one line)
        self._what = ""
        self._best = None  # (key, value, label)
        self._start = None
        self._last_draw = None
        self._shown = 0  # length of the line on the terminal now
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = None
        self._use_thread = thread

    # ------------------------------------------------------------------ state
    def stage(self, what):
        """Say what runs now (a strategy, a stage) and redraw when due."""
        with self._lock:
            self._what = str(what)
        self.tick()

    def best(self, value, label, key=None):
        """Offer a result: it becomes the best so far when its ``key`` (default ``value``) is lower."""
        key = value if key is None else key
        with self._lock:
            if self._best is None or key < self._best[0]:
                self._best = (key, value, label)
        self.tick()

    def portfolio(self, phase, candidate, outcome=None):
        """The ``progress=`` callback of :func:`~libtopomap.portfolio.run_portfolio`.

        Called with ``outcome=None`` when ``candidate``'s ``phase`` (``"construct"`` or ``"refine"``)
        starts, and with its :class:`~libtopomap.portfolio.Outcome` when it ends.
        """
        if outcome is None:
            verb = "" if phase == "construct" else "refining "
            self.stage(f"{verb}{candidate.label} #{candidate.index}")
            return
        value = outcome.metrics.get("objective", outcome.key[0] if outcome.key else None)
        if value is not None:
            self.best(value, outcome.label, key=tuple(outcome.key))

    # ------------------------------------------------------------------ drawing
    def line(self, now=None):
        """The status line at ``now`` (default: the clock)."""
        now = self.clock() if now is None else now
        elapsed = 0.0 if self._start is None else now - self._start
        with self._lock:
            what, best = self._what, self._best
        parts = [f"{self.command}:"]
        if what:
            parts.append(what)
        parts.append(f"{elapsed:.0f} s" if elapsed >= 10 else f"{elapsed:.1f} s")
        if best is not None:
            _, value, label = best
            name = f"best {self.objective}" if self.objective else "best"
            parts.append(f"{name} {value:.4g} ({label})" if isinstance(value, float) else f"{name} {value} ({label})")
        return "  ".join(parts)

    def tick(self, now=None):
        """Redraw the line if it is due: past ``delay`` since the start and ``interval`` since the last draw."""
        if not self.enabled or self._start is None:
            return False
        now = self.clock() if now is None else now
        if now - self._start < self.delay:
            return False
        if self._last_draw is not None and now - self._last_draw < self.interval:
            return False
        text = self.line(now)
        width = self.width if self.width is not None else max(shutil.get_terminal_size((80, 24)).columns - 1, 20)
        if len(text) > width:
            text = text[:width - 3] + "..."
        with self._lock:
            pad = " " * max(self._shown - len(text), 0)
            self._write("\r" + text + pad)
            self._shown = len(text)
            self._last_draw = now
            self.drawn += 1
        return True

    def _write(self, text):
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: stop drawing, never fail the command
            self.enabled = False

    # ------------------------------------------------------------------ lifetime
    def start(self):
        """Start the clock (and the redrawing thread)."""
        self._start = self.clock()
        if self.enabled and self._use_thread:
            self._thread = threading.Thread(target=self._run, name="libtopomap-progress", daemon=True)
            self._thread.start()
        return self

    def _run(self):
        while not self._stop.wait(self.interval):
            self.tick()

    def close(self):
        """Stop the thread and erase the line, if one was drawn."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        with self._lock:
            if self._shown and self.enabled:
                self._write("\r" + " " * self._shown + "\r")
            self._shown = 0

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()
        return False


def add_quiet(parser):
    """Add ``--quiet`` (no progress line) to a command's parser."""
    parser.add_argument("--quiet", action="store_true",
                        help="show no progress line (it is shown on a terminal, on standard error, for work "
                             "longer than about 2 s)")


#: Process names of MPI launchers (``/proc/PID/stat``'s second field): hydra's and Open MPI's
#: ``mpiexec``/``mpirun``, PRRTE's ``prterun``, the older ``orterun``, and Slurm's ``srun``.
LAUNCHERS = ("mpiexec", "mpiexec.hydra", "mpirun", "prterun", "orterun", "srun")


def launcher_terminal(pid=None, *, levels=6, proc="/proc"):
    """Whether the MPI launcher that started process ``pid`` (default: this one) writes its standard error
    to a terminal.

    Walks up at most ``levels`` parents (through ``hydra_pmi_proxy``, ``prted``, ``setsid``...) to the
    first process named in :data:`LAUNCHERS`, and answers whether its ``fd/2`` is a terminal
    (``/dev/pts/*``, ``/dev/tty*``).  False when no launcher is found (a rank on another node than its
    launcher), when the launcher's standard error is a pipe or a file (a job script, a test), or where
    ``/proc`` is absent or unreadable (another OS, another user's process).

    Examples
    --------
    >>> launcher_terminal(proc="/nonexistent")
    False
    """
    pid = os.getpid() if pid is None else int(pid)
    try:
        for _ in range(levels + 1):
            with open(f"{proc}/{pid}/stat") as f:
                stat = f.read()
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            if name in LAUNCHERS:
                return os.readlink(f"{proc}/{pid}/fd/2").startswith(("/dev/pts/", "/dev/tty"))
            pid = int(stat[stat.rindex(")") + 1:].split()[1])  # the field after the state: the parent
            if pid <= 1:
                return False
    except (OSError, ValueError, IndexError):
        return False
    return False


def for_command(args, command, *, rank=None, **options):
    """The :class:`Progress` of a command: silent with ``--quiet``, else drawn when stderr is a terminal.

    ``rank`` (under ``mpiexec``): only rank 0 draws, when its standard error or its launcher's
    (:func:`launcher_terminal`) is a terminal.
    """
    enabled = False if getattr(args, "quiet", False) else None
    if rank is not None and enabled is None:
        if rank != 0:
            enabled = False
        else:
            try:
                enabled = sys.stderr.isatty() or launcher_terminal()
            except (OSError, ValueError):  # a closed stream
                enabled = False
    options.setdefault("delay", progress_delay())
    options.setdefault("interval", INTERVAL)
    return Progress(f"libtopomap {command}", enabled=enabled, **options)


def progress_delay():
    """Seconds before the progress line appears: ``$LIBTOPOMAP_PROGRESS_DELAY``, else :data:`DELAY`.

    Raises
    ------
    ArgumentError
        The variable is not a finite number >= 0.
    """
    from ..errors import ArgumentError

    text = os.environ.get("LIBTOPOMAP_PROGRESS_DELAY")
    if text is None or not text.strip():
        return DELAY
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (0.0 <= value < float("inf")):
        raise ArgumentError(f"LIBTOPOMAP_PROGRESS_DELAY must be a number of seconds >= 0, got {text!r}")
    return value
