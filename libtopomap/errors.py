"""The exception tree of libtopomap.

Every error the library raises on purpose derives from :class:`LibTopoMapError`, so an application
can catch one type.  Errors about user input also derive from :class:`ValueError`.
"""

__all__ = [
    "LibTopoMapError",
    "TopologyError",
    "FormatError",
    "CommGraphError",
    "MappingError",
    "CommError",
    "ArgumentError",
    "ChoiceError",
    "ArgumentTypeError",
    "SimulationError",
    "SimGridUnavailable",
    "SmpiUnavailable",
    "SmpiError",
    "Interrupted",
    "LibTopoMapWarning",
]


class LibTopoMapError(Exception):
    """Base class of all libtopomap errors."""


class TopologyError(LibTopoMapError, ValueError):
    """A topology is inconsistent (unknown vertex, self-link, bad capacity, disconnected hosts...)."""


class FormatError(LibTopoMapError, ValueError):
    """A file could not be read; the message starts with ``file:line:`` where known.

    Parameters
    ----------
    message : str
        What is wrong.
    path : str, optional
        The file (or ``<stream>``).
    line : int, optional
        1-based line number.
    """

    def __init__(self, message, *, path=None, line=None):
        self.path = None if path is None else str(path)
        self.line = line
        self.reason = message
        where = ""
        if self.path is not None:
            where = self.path + (f":{line}" if line is not None else "") + ": "
        elif line is not None:
            where = f"line {line}: "
        super().__init__(where + message)


class CommGraphError(LibTopoMapError, ValueError):
    """A communication graph is invalid (negative or NaN weight, process out of range...)."""


class MappingError(LibTopoMapError, ValueError):
    """A mapping cannot be computed or is invalid (more processes than slots, slot overflow...)."""


class CommError(LibTopoMapError, RuntimeError):
    """An error in the MPI layer; raised on every rank, naming the rank that failed and why."""


class ArgumentError(LibTopoMapError, ValueError):
    """An option has a bad value (a message size, a bandwidth, an unknown choice...); the message
    names the option and the value.  The command line reports it as a usage error (exit 2)."""


class ChoiceError(ArgumentError, MappingError, CommGraphError):
    """A name that is not in :data:`libtopomap.vocabulary.REGISTRY` (an unknown strategy, refinement,
    objective, routing, collective...); the message lists the accepted names.  It is also a
    :class:`MappingError` and a :class:`CommGraphError`, which earlier versions raised for some kinds."""


class ArgumentTypeError(LibTopoMapError, TypeError):
    """An argument has the wrong type (where Python itself would raise :class:`TypeError`)."""


class SimulationError(LibTopoMapError, RuntimeError):
    """A simulation subprocess failed or timed out."""


class SimGridUnavailable(LibTopoMapError, RuntimeError):
    """SimGrid's Python bindings cannot be imported; the message says how to install them."""


class SmpiUnavailable(LibTopoMapError, RuntimeError):
    """``smpicc`` or ``smpirun`` is not on ``PATH``; the message says to install libsimgrid-dev."""


class SmpiError(LibTopoMapError, RuntimeError):
    """An SMPI compilation or run failed; the message has the exit status and the last stderr lines."""


class Interrupted(KeyboardInterrupt):
    """A signal (SIGTERM, SIGHUP, SIGINT) stopped a run of an external program, which was ended first.

    A :class:`KeyboardInterrupt`, like Python's own answer to SIGINT, so that ``except Exception``
    does not swallow it; the command line exits with ``128 + signum``.

    Parameters
    ----------
    signum : int
        The signal.
    what : str
        What was running.
    """

    def __init__(self, signum, what):
        import signal

        self.signum, self.what = int(signum), what
        name = signal.Signals(self.signum).name if self.signum in signal.valid_signals() else str(signum)
        super().__init__(f"{name} received: {what} stopped")

    def __reduce__(self):  # pickled as it was made (the MPI layer sends exceptions between ranks)
        return type(self), (self.signum, self.what)


class LibTopoMapWarning(UserWarning):
    """An input is accepted but dubious: a self loop in a communication graph, a fabric cable dropped
    or merged, a duplicate hostname...  The message starts with ``file:line:`` where known; the command
    line prints each one as one line on stderr."""
