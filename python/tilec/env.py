"""TileLang's `tilelang.env`: its environment settings, read where tilec has the same setting.

`tilelang.env.TILELANG_CACHE_DIR` is tilec's cache folder (TILEC_CACHE_DIR, else
~/.cache/tilec), read on each access as TileLang reads its variables; `TILELANG_TMP_DIR` is its
`tmp` subfolder. Examples use them as a writable folder of their own (a torch extension's build
folder, say). `TILELANG_DISABLE_CACHE` and the cache switches mirror `tilec.disable_cache`.
A TileLang setting tilec has no counterpart for is an AttributeError naming it.
"""

from __future__ import annotations

import os

from tilec import cache


def is_cache_enabled() -> bool:
    return cache.is_enabled()


def enable_cache() -> None:
    cache.enable_cache()


def disable_cache() -> None:
    cache.disable_cache()


def __getattr__(name: str) -> str:
    if name == "TILELANG_CACHE_DIR":
        return str(cache.cache_dir())
    if name == "TILELANG_TMP_DIR":
        return os.path.join(str(cache.cache_dir()), "tmp")
    if name == "TILELANG_DISABLE_CACHE":
        return "0" if cache.is_enabled() else "1"
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise AttributeError(f"tilelang.env.{name} has no counterpart in tilec (it has "
                         "TILELANG_CACHE_DIR, TILELANG_TMP_DIR and TILELANG_DISABLE_CACHE)")


__all__ = ["disable_cache", "enable_cache", "is_cache_enabled"]
