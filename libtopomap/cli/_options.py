"""Option helpers shared by the commands: range-checked number types (a bad value is a usage error,
exit 2, at parse time) and old option names kept as deprecated aliases."""

from __future__ import annotations

import argparse
import math
import sys
import warnings

__all__ = ["add_deprecated_alias", "add_size_limits", "add_max_vertices", "positive_int", "refinement_moves",
           "non_negative_int", "positive_float", "non_negative_float"]


def _number(text, kind, what, ok):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
    return value


def positive_int(text):
    """argparse type: an integer >= 1."""
    return _number(text, int, "a positive integer", lambda v: v >= 1)


def refinement_moves(text):
    """argparse type of ``map --iterations``: the moves of a refinement, by the rule and with the message of the
    Python API (:func:`libtopomap.validation.check_moves`)."""
    from ..errors import ArgumentError
    from ..validation import check_moves

    value = _number(text, int, "an integer", lambda v: True)
    try:
        return check_moves(value)
    except ArgumentError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def non_negative_int(text):
    """argparse type: an integer >= 0."""
    return _number(text, int, "a non-negative integer", lambda v: v >= 0)


def positive_float(text):
    """argparse type: a finite number > 0."""
    return _number(text, float, "a positive number", lambda v: math.isfinite(v) and v > 0)


def non_negative_float(text):
    """argparse type: a finite number >= 0."""
    return _number(text, float, "a non-negative number", lambda v: math.isfinite(v) and v >= 0)


class _DeprecatedAlias(argparse.Action):
    """An old option name: stores into the new option's destination, says so on stderr and warns."""

    def __init__(self, option_strings, dest, *, replacement, **kwargs):
        self.replacement = replacement
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        message = f"{option_string} is deprecated; use {self.replacement}"
        print(f"{parser.prog}: warning: {message}", file=sys.stderr)
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        setattr(namespace, self.dest, values)


def add_deprecated_alias(parser, old, new):
    """Make option string ``old`` work like the option of action ``new`` (same destination, type and
    choices), hidden from ``--help``, with a warning naming the new option.

    Parameters
    ----------
    parser : argparse.ArgumentParser or argument group
    old : str
        The old option string, e.g. ``"--placement"``.
    new : argparse.Action
        What ``parser.add_argument`` returned for the new option.
    """
    return parser.add_argument(old, dest=new.dest, action=_DeprecatedAlias, replacement=new.option_strings[0],
                               type=new.type, choices=new.choices, metavar=new.metavar, default=argparse.SUPPRESS,
                               help=argparse.SUPPRESS)


__all__ += ["add_routing_option", "routing_name"]


def routing_name(text):
    """``--routing`` values: a model of :data:`libtopomap.vocabulary.ROUTING_MODELS`, ``native``, or
    ``lft:PATH`` (the fabric's forwarding tables)."""
    from ..vocabulary import ROUTING_MODELS

    if text in ROUTING_MODELS + ("native",) and text != "lft":
        return text
    if text.startswith("lft:") and text[4:].strip():
        return text
    raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from {', '.join(ROUTING_MODELS[:-1])}, "
                                     "lft:PATH, native)")


def add_routing_option(parser, flag="--routing", *, dest="routing"):
    """Add ``--routing MODEL`` (or ``flag``): the routing model of the loads and hops a command reports.

    Choices are :data:`libtopomap.vocabulary.ROUTING_MODELS` (``lft`` as ``lft:PATH``, the fabric's
    forwarding tables) and ``native`` (the topology's own routing,
    :func:`libtopomap.routing.native_routing`); default ``ecmp``.
    """
    from ..vocabulary import ROUTING_MODELS

    return parser.add_argument(flag, dest=dest, type=routing_name, default="ecmp", metavar="MODEL",
                               help=f"routing model of the reported congestion and hops: "
                                    f"{', '.join(ROUTING_MODELS[:-1])}, lft:PATH (the routes of the fabric's "
                                    "forwarding tables, e.g. dump_lfts output), or native (the topology's own: "
                                    "rt/rtt/minimal for generated RT/RTT/dragonfly) (default ecmp)")


def add_size_limits(parser):
    """Add ``--max-vertices N`` and ``--max-edges N``: the size limits of every topology, graph, hostlist
    and traffic pattern the command reads or generates (:mod:`libtopomap._limits`);
    :func:`libtopomap.cli.main` applies them around the run.

    Parameters
    ----------
    parser : argparse.ArgumentParser or argument group
    """
    from .._limits import MAX_EDGES, MAX_VERTICES

    for flag, things, units, env, default in (
            ("--max-vertices", "topologies, graphs, hostlists", "vertices or processes", "MAX_VERTICES", MAX_VERTICES),
            ("--max-edges", "topologies, graphs, traffic patterns", "links or messages", "MAX_EDGES", MAX_EDGES)):
        parser.add_argument(flag, type=positive_int, metavar="N",
                            help=f"refuse inputs ({things}) of more than N {units}, before allocating for them "
                                 f"(default: $LIBTOPOMAP_{env} or {default})")


#: The name before ``--max-edges`` came (the commands of other branches may call it).
add_max_vertices = add_size_limits
