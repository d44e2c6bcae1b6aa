"""Numba's on-disk cache, made to heal itself (hardening issue, item 5).

Every kernel is compiled with ``cache=True``.  Numba trusts its cache files: a truncated or corrupted
index (``*.nbi``, e.g. after a full disk or two jobs writing one cache on a shared file system) makes
every later call of that kernel fail with an ``UnpicklingError`` until someone deletes the file by hand.
Importing this module wraps numba's two readers so that an unreadable index or entry counts as a
cache miss: the kernel is compiled again, the index is rewritten, and a ``RuntimeWarning`` names the
file.  Every module that defines cached kernels imports it.
"""

from __future__ import annotations

import warnings

from numba.core import caching

__all__ = []


def _warn(what, exc):
    warnings.warn(f"numba cache {what} is unreadable ({type(exc).__name__}: {exc}); compiling again",
                  RuntimeWarning, stacklevel=3)


def _install():
    index_cls, cache_cls = caching.IndexDataCacheFile, caching.Cache
    if getattr(index_cls, "_libtopomap_healing", False):
        return
    load_index, load_overload = index_cls._load_index, cache_cls.load_overload

    def _load_index(self):
        try:
            return load_index(self)
        except Exception as exc:  # an empty index: the next save rewrites it
            _warn(f"index {self._index_path}", exc)
            return {}

    def _load_overload(self, sig, target_context):
        try:
            return load_overload(self, sig, target_context)
        except Exception as exc:  # a corrupted entry: a miss, compiled and saved again
            _warn(f"entry for {self._name}", exc)
            return None

    index_cls._load_index = _load_index
    cache_cls.load_overload = _load_overload
    index_cls._libtopomap_healing = True


_install()
