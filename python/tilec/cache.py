"""The kernel cache: compiled artifacts in memory and on disk, keyed before any IR is built.

A key hashes the kernel's source text, its specialization (shapes, dtypes, constants), the
target and the tilec version. Each entry also records a fingerprint of the compiler that made
it (the frontend's and the compiler's sources): where the compiler is installed, an entry from
another compiler is stale and is compiled again; where it is not, entries are taken as they are.
A hit reads `<cache dir>/<key>/` with `Artifact.load`: no MLIR and
no compiler are imported, so a GPU machine without them runs kernels a compiler machine put
there (`tilec FILE.py --cache-dir DIR`, or `kernel.compile(...)` with TILEC_CACHE_DIR set).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from tilec.runtime.artifact import Artifact

_state = {"enabled": True}
_memory: dict[str, Artifact] = {}


def cache_dir() -> Path:
    """TILEC_CACHE_DIR, else ~/.cache/tilec (XDG_CACHE_HOME respected)."""
    configured = os.environ.get("TILEC_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tilec"


def is_enabled() -> bool:
    return _state["enabled"] and os.environ.get("TILEC_DISABLE_CACHE", "0") in ("", "0")


def disable_cache() -> None:
    """Compile every kernel afresh (neither memory nor disk is read or written)."""
    _state["enabled"] = False


def enable_cache() -> None:
    _state["enabled"] = True


def clear_memory() -> None:
    """Forget the in-memory cache (the disk cache stays)."""
    _memory.clear()


def cache_key(parts: dict[str, Any]) -> str:
    """A stable hash of the key's parts (sorted JSON; unknown objects by repr)."""
    from tilec import __version__

    payload = json.dumps({**parts, "tilec": __version__}, sort_keys=True, default=repr)
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


@functools.cache
def compiler_fingerprint() -> str | None:
    """A hash of the sources that decide what a kernel compiles to; None without the compiler.

    Finding `tilec.compiler` imports neither it nor MLIR.
    """
    try:
        spec = importlib.util.find_spec("tilec.compiler")
    except ImportError:
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    package = Path(__file__).resolve().parent
    folders = [Path(p) for p in spec.submodule_search_locations]
    folders += [package / "frontend", package / "language", package / "dialect"]
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def lookup(key: str) -> Artifact | None:
    if not is_enabled():
        return None
    if key in _memory:
        return _memory[key]
    directory = cache_dir() / key
    if not (directory / "kernel.json").is_file():
        return None
    try:
        artifact = Artifact.load(directory)
    except (OSError, ValueError, TypeError, KeyError):  # a partial or foreign entry: recompile
        return None
    fingerprint = compiler_fingerprint()
    if fingerprint is not None and artifact.compiler != fingerprint:
        return None  # made by another version of the compiler
    _memory[key] = artifact
    return artifact


def store(key: str, artifact: Artifact) -> None:
    """Keep `artifact` in memory and write it under the cache directory (atomically)."""
    if not is_enabled():
        return
    artifact.compiler = compiler_fingerprint() or ""
    _memory[key] = artifact
    root = cache_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=root))
        artifact.save(staging)
        final = root / key
        if final.exists():  # a stale entry (or another process's copy of this one)
            shutil.rmtree(final, ignore_errors=True)
        staging.rename(final)
    except OSError:  # a read-only cache directory still leaves the memory cache working
        return
