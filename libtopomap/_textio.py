"""Reading a small text file the one safe way: a regular file only, UTF-8 only, errors naming file and line.

Every reader of a user-named text file (edge lists, fake-names files, ``--mapping`` files, saved
mappings, ``plot times --from`` documents) goes through :func:`read_text`, so that a FIFO (which would
block), a device (``/dev/zero`` never ends) or a binary file is one :class:`~libtopomap.FormatError`
everywhere, worded the same.  Core module: no mpi4py, no numpy.
"""

from __future__ import annotations

import os

from .errors import FormatError

__all__ = ["read_text", "open_text", "content_lines", "format_ranges"]


def read_text(path, *, limit=None, hint=""):
    """The UTF-8 text of the regular file ``path``.

    Parameters
    ----------
    path : str or os.PathLike
    limit : int, optional
        Read at most this many bytes (a document known to be small); default: the whole file.
    hint : str
        Appended to the "not UTF-8" message (e.g. what the file should have been).

    Returns
    -------
    str

    Raises
    ------
    FormatError
        ``file:`` "not a regular file" (a FIFO, a device, a folder), or ``file:line:`` "not UTF-8 text
        (byte 0x..)" naming the first byte that is not UTF-8 and its line.
    OSError
        The file does not exist or cannot be read.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "bad.txt")
    >>> _ = open(p, "wb").write(b"0 1\\n1 \\xff\\n")
    >>> try:
    ...     read_text(p)
    ... except FormatError as e:
    ...     print(e.reason, e.line)
    not UTF-8 text (byte 0xff) 2
    """
    path = os.fspath(path)
    if os.path.exists(path) and not os.path.isfile(path):  # a FIFO would block, a device never ends
        raise FormatError("not a regular file", path=path)
    with open(path, "rb") as f:
        raw = f.read() if limit is None else f.read(limit)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:  # the line counts LF (so CRLF) line ends, as JSON's messages do
        raise FormatError(f"not UTF-8 text (byte {raw[e.start]:#04x}){hint}", path=path,
                          line=raw.count(b"\n", 0, e.start) + 1) from None


def open_text(path):
    """``path`` opened as UTF-8 text for streaming (undecodable bytes replaced), a regular file only.

    For files too large to hold as one string (topology files); :func:`read_text` otherwise.

    Raises
    ------
    FormatError
        ``file:`` "not a regular file" (a device never ends, a FIFO blocks until a writer comes), or
        "cannot open: reason".
    """
    if os.path.exists(path) and not os.path.isfile(path):
        raise FormatError("not a regular file", path=path)
    try:
        return open(path, encoding="utf-8", errors="replace", newline=None)
    except OSError as e:
        raise FormatError(f"cannot open: {e.strerror}", path=path) from None


def content_lines(text):
    """``(lineno, line)`` of every line of ``text`` that is not blank once its ``#`` comment is cut
    (1-based line numbers, for errors naming the line; ``line`` stripped)."""
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if line:
            yield lineno, line


def format_ranges(values):
    """``values`` (ascending integers) as the shortest range list, the form of Linux CPU lists and
    ``MPICH_RANK_ORDER`` lines.

    Examples
    --------
    >>> format_ranges([0, 1, 2, 5, 7, 8])
    '0-2,5,7-8'
    """
    parts, i = [], 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        parts.append(str(values[i]) if i == j else f"{values[i]}-{values[j]}")
        i = j + 1
    return ",".join(parts)
