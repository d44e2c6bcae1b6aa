"""Compile libtopomap's SMPI proxy codes (``proxies/*.c``) with ``smpicc -O2``.

The proxies are small C MPI programs that each print one parsable line with their measured time
(``LTM_RESULT proxy=NAME ... time=SECONDS``, :func:`parse_result`): under SMPI that time is
simulated.  ``halo`` (2-D/3-D periodic halo), ``cg`` (neighbour exchange of a partitioned 3-D mesh + 2
Allreduce), ``fft`` (pencil FFT transposes: Alltoall in row and column communicators), ``colls``
(OSU-style Bcast/Allreduce/Alltoall timing) and ``replay`` (sends every edge of an edge list, see
:func:`libtopomap.smpi.write_edge_list`).  Each source file's header says its arguments.
"""

from __future__ import annotations

import hashlib
import re
import os
import shutil
import subprocess
from importlib import resources

from ..errors import ArgumentError, SmpiError, SmpiUnavailable

__all__ = ["PROXIES", "SmpiUnavailable", "SmpiError", "INSTALL_HINT", "build", "proxy_source", "require_tool", "tail",
           "default_outdir", "parse_result", "source_digest"]

#: The proxy codes, in ``proxies/NAME.c``.
PROXIES = ("halo", "cg", "fft", "colls", "replay")
_HELPERS = ("dtypes",)  # built with the proxies, used by libtopomap.smpi itself
_HEADERS = ("edges.h", "proxy.h")  # included by the proxies: part of every binary's key

INSTALL_HINT = "install libsimgrid-dev (SimGrid's SMPI: smpicc, smpirun), e.g. apt-get install -y libsimgrid-dev"


def require_tool(name):
    """Full path of ``smpicc``/``smpirun`` (``$SMPICC``/``$SMPIRUN`` override), else :class:`SmpiUnavailable`."""
    path = shutil.which(os.environ.get(name.upper(), name))
    if path is None:
        raise SmpiUnavailable(f"{name} not found: {INSTALL_HINT}")
    return path


def proxy_source(name):
    """Path of proxy ``name``'s C source (package data)."""
    if name not in PROXIES + _HELPERS:
        raise ArgumentError(f"unknown proxy {name!r}; known: {', '.join(PROXIES)}")
    return str(resources.files(__package__).joinpath("proxies", f"{name}.c"))


def default_outdir():
    """``$LIBTOPOMAP_SMPI_DIR``, else ``$XDG_CACHE_HOME/libtopomap/smpi`` (``~/.cache/...``)."""
    env = os.environ.get("LIBTOPOMAP_SMPI_DIR")
    if env:
        return env
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "libtopomap", "smpi")


def source_digest(name):
    """16 hex digits of the SHA-256 of proxy ``name``'s source and the headers beside it (``edges.h``,
    ``proxy.h``): the key of a built binary."""
    h = hashlib.sha256()
    src = proxy_source(name)
    for path in (src, *(os.path.join(os.path.dirname(src), x) for x in _HEADERS)):
        with open(path, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def tail(text, lines=5):
    """The last ``lines`` non-empty lines of ``text`` joined with `` | `` (for one-line errors)."""
    kept = [x.strip() for x in str(text or "").splitlines() if x.strip()]
    return " | ".join(kept[-lines:])


def build(names=None, *, outdir=None, force=False, helpers=True):
    """Compile proxies with ``smpicc -O2`` into ``outdir`` (kept and reused while the source is unchanged).

    Parameters
    ----------
    names : iterable of str, optional
        Proxies to build (default all of :data:`PROXIES`).
    outdir : str, optional
        Default :func:`default_outdir`.
    force : bool
        Recompile even when a binary of the same source is there.
    helpers : bool
        Also build ``dtypes``, the datatype calibration :func:`libtopomap.smpi.run` uses.

    Returns
    -------
    dict
        Proxy name -> path of its executable.

    Raises
    ------
    SmpiUnavailable
        No ``smpicc``.
    SmpiError
        A compilation failed (its last compiler lines).
    ArgumentError
        An unknown proxy name.
    """
    names = list(PROXIES if names is None else ([names] if isinstance(names, str) else names))
    for n in names:
        proxy_source(n)
    if helpers:
        names += [h for h in _HELPERS if h not in names]
    outdir = os.path.abspath(outdir or default_outdir())
    smpicc = require_tool("smpicc")
    os.makedirs(outdir, exist_ok=True)
    out = {}
    for name in names:
        exe = os.path.join(outdir, name)
        stamp = exe + ".sha"
        digest = source_digest(name)
        if not force and os.path.exists(exe) and os.path.exists(stamp):
            with open(stamp) as f:
                if f.read().strip() == digest:
                    out[name] = exe
                    continue
        # compiled under a private name, then renamed: a concurrent build or run never sees half a binary
        partial = f"{exe}.{os.getpid()}.tmp"
        cmd = [smpicc, "-O2", "-o", partial, proxy_source(name)]
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            if res.returncode == 0:
                os.replace(partial, exe)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise SmpiError(f"smpicc {name}.c: {e}") from None
        finally:
            if os.path.exists(partial):
                os.remove(partial)
        if res.returncode != 0:
            raise SmpiError(f"smpicc {name}.c failed (exit {res.returncode}): {tail(res.stderr or res.stdout)}")
        with open(stamp, "w") as f:
            f.write(digest + "\n")
        out[name] = exe
    return out


def parse_result(text, tag="LTM_RESULT"):
    """The ``key=value`` fields of the last ``LTM_RESULT`` line of a proxy's output, or ``None``.

    ``time`` is converted to float, integer-looking values to int.

    Examples
    --------
    >>> parse_result("x\\nLTM_RESULT proxy=halo ranks=4 time=1.5e-06\\n")
    {'proxy': 'halo', 'ranks': 4, 'time': 1.5e-06}
    """
    found = None
    for line in str(text).splitlines():
        if line.startswith(tag + " "):
            found = line
    if found is None:
        return None
    fields = {}
    for item in found.split()[1:]:
        key, sep, value = item.partition("=")
        if not sep:
            continue
        if key == "time" and re.fullmatch(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|[-+]?(inf|nan)", value):
            fields[key] = float(value)
            continue
        fields[key] = int(value) if value.lstrip("-").isdigit() else value
    return fields
