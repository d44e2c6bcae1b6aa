"""Option helpers shared by the commands: old option names kept as deprecated aliases."""

from __future__ import annotations

import argparse
import sys
import warnings

__all__ = ["add_deprecated_alias"]


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
