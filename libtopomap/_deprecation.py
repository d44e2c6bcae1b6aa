"""Old keyword names of public functions, kept working with a :class:`DeprecationWarning`."""

from __future__ import annotations

import functools
import warnings

from .errors import ArgumentTypeError

__all__ = ["renamed_keyword"]


def renamed_keyword(old, new):
    """Decorator: keyword ``old=`` still works as ``new=`` (its glossary name), with a warning.

    Passing both raises :class:`~libtopomap.ArgumentTypeError` (a :class:`TypeError`, as Python
    raises for a keyword given twice).

    Examples
    --------
    >>> @renamed_keyword("nodes", "allocation")
    ... def f(allocation):
    ...     return allocation
    >>> import warnings
    >>> with warnings.catch_warnings(record=True):
    ...     f(nodes=[1, 2])
    [1, 2]
    """
    def wrap(fn):
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            if old in kwargs:
                name = fn.__qualname__.removesuffix(".__init__")  # a class's name for its constructor
                warnings.warn(f"{name}({old}=...) is deprecated; use {new}=", DeprecationWarning, stacklevel=2)
                if new in kwargs:
                    raise ArgumentTypeError(f"{name}() got both {new} and {old} (its old name)")
                kwargs[new] = kwargs.pop(old)
            return fn(*args, **kwargs)
        return inner
    return wrap
