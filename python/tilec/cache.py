"""The kernel cache: compiled artifacts in memory and on disk, keyed before any IR is built.

A key hashes the kernel's source text, its specialization (shapes, dtypes, constants), the
target and the tilec version. Each entry also records a fingerprint of the compiler that made
it (the frontend's and the compiler's sources): where the compiler is installed, an entry from
another compiler is stale and is compiled again; where it is not, entries are taken as they are.
A hit reads `<cache dir>/<key>/` with `Artifact.load`: no MLIR and
no compiler are imported, so a GPU machine without them runs kernels a compiler machine put
there (`tilec FILE.py --cache-dir DIR`, or `kernel.compile(...)` with TILEC_CACHE_DIR set).

The directory defends itself: an entry records its key and its binaries' checksums, so a
truncated, overwritten or moved entry is reported once and compiled again (an error where no
compiler is installed); entries appear by one atomic rename, so concurrent compiles of one
kernel leave one whole entry and no staging folders; folders take the user's umask (a cache
shared by a group works); an unwritable directory leaves the memory cache working, with a
warning.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from tilec.errors import TilecError
from tilec.runtime.artifact import Artifact

_state = {"enabled": True}
_memory: dict[str, Artifact] = {}
_reported: set[str] = set()  # warnings already given (one per damaged entry or directory)
KEY_FILE = "key"  # an entry's own key: a folder moved under another key is found


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


# environment variables that change what a kernel compiles to (the CUDA target's opt-ins not
# yet measured on hardware, and the off switches of measured defaults: TILEC_FAST_MATH_FTZ=0,
# TILEC_ROTATE_ATTENTION_LOOP=0): a kernel compiled with one set is another kernel
COMPILE_SETTINGS = ("TILEC_TMA_RING_LAG", "TILEC_VECTOR_EPILOGUE_LOADS",
                    "TILEC_WARPGROUP_PINGPONG", "TILEC_STAGED_EPILOGUE", "TILEC_PER_OP_GEMMS",
                    "TILEC_REGISTER_A_STEPS", "TILEC_REGISTER_A_STEP_GROUPS",
                    "TILEC_OVERLAP_RING_GEMMS", "TILEC_ASYNC_GATHERS",
                    "TILEC_TRANSPOSE_MN_MAJOR_OPERANDS", "TILEC_RING_TRANSPOSES",
                    "TILEC_ROTATE_ATTENTION_LOOP", "TILEC_RESCALE_UNDER_QK",
                    "TILEC_PACK_HALF_PAIRS", "TILEC_FUSE_LOP3", "TILEC_RING_PRIVATE_TILES",
                    "TILEC_UNSWITCH_INVARIANT_CONDITIONS", "TILEC_FAST_MATH_FTZ",
                    "TILEC_SPLIT_WGMMA_N", "TILEC_PREFETCH_LOOP_LOADS",
                    "TILEC_PIPELINE_TABLE_LOADS", "TILEC_MMA_SYNC_FALLBACK",
                    "TILEC_SIMT_SLICES_IN_PLACE",
                    "TILEC_VECTORIZE_ELEMENT_COPIES", "TILEC_PREFETCH_L2",
                    "TILEC_FOLD_ACCUMULATOR_CLEARS", "TILEC_EPILOGUE_PREFETCH",
                    "TILEC_EPILOGUE_PRELOAD", "TILEC_LOOP_LOAD_RING",
                    "TILEC_SHARED_STORE_RUNS", "TILEC_STREAMED_LOAD_HINTS",
                    "TILEC_STREAM_MAX_REGISTERS", "TILEC_DEFER_PIPELINE_GEMM_WAITS",
                    "TILEC_EPILOGUE_SHARED_SOURCE", "TILEC_DRAINED_CHECKS")


def _environment_bytes() -> dict[bytes, bytes] | None:
    """os.environ's own bytes-keyed dict on POSIX (None elsewhere): asking it for an unset name
    costs a dict lookup, where os.environ.get raises and catches a KeyError (about 1 µs each:
    reading the COMPILE_SETTINGS so took most of an eager kernel call's host time)."""
    data = getattr(os.environ, "_data", None)
    return data if os.name == "posix" and isinstance(data, dict) else None


_encoded = functools.cache(os.fsencode)


def environment(name: str) -> str | None:
    """os.environ.get(name), cheap for an unset name."""
    data = _environment_bytes()
    if data is not None and _encoded(name) not in data:
        return None
    return os.environ.get(name)


_SETTING_KEYS = frozenset(map(os.fsencode, COMPILE_SETTINGS))


def compile_settings() -> dict[str, str]:
    """The COMPILE_SETTINGS set now: part of every key a compiled kernel is kept under, the
    in-memory ones of a jit function's calls and of the autotuner's results too."""
    data = _environment_bytes()
    names: tuple[str, ...] | list[str] = COMPILE_SETTINGS
    if data is not None:
        present = data.keys() & _SETTING_KEYS  # one pass in C, usually empty
        names = [name for name in COMPILE_SETTINGS if _encoded(name) in present] if present \
            else []
    return {name: value for name in names if (value := os.environ.get(name))}


_KEY_NAMES = frozenset(map(os.fsencode, (*COMPILE_SETTINGS, "TILEC_TARGET")))


def key_environment() -> tuple[str | None, tuple[tuple[str, str], ...]] | None:
    """The environment's part of an eager call's in-memory key: TILEC_TARGET and the
    COMPILE_SETTINGS set, or None where none of them is (the usual answer: one pass in C over
    the environment's names, 0.6 µs here where reading both cost 1.4 µs of each call)."""
    data = _environment_bytes()
    if data is not None and _KEY_NAMES.isdisjoint(data.keys()):
        return None
    return environment("TILEC_TARGET"), tuple(compile_settings().items())


# settings that take a number where the others take 1 (on) or 0 (off)
_NUMERIC_SETTINGS = {"TILEC_PREFETCH_LOOP_LOADS": "a register count",
                     "TILEC_REGISTER_A_STEP_GROUPS": "a count of wgmma groups",
                     "TILEC_PREFETCH_L2": "a distance in iterations",
                     "TILEC_EPILOGUE_PREFETCH": "a distance in iterations",
                     "TILEC_EPILOGUE_PRELOAD": "a count of iterations",
                     "TILEC_LOOP_LOAD_RING": "a count of ring slots",
                     "TILEC_STREAM_MAX_REGISTERS": "a register count"}
# the words a setting takes besides
_WORD_SETTINGS = {"TILEC_PREFETCH_L2": ("auto",), "TILEC_STREAM_MAX_REGISTERS": ("auto",)}


def check_compile_settings() -> None:
    """A setting of COMPILE_SETTINGS holds 1 or 0 (TILEC_PREFETCH_LOOP_LOADS: a register count,
    TILEC_REGISTER_A_STEP_GROUPS: a group count, TILEC_PREFETCH_L2: a distance or auto,
    TILEC_EPILOGUE_PREFETCH: a distance, TILEC_EPILOGUE_PRELOAD: iterations,
    TILEC_STREAM_MAX_REGISTERS: a register count or auto): any
    other value (`TILEC_FUSE_LOP3=yes`) read as off without a word, so it is an error."""
    for name, value in compile_settings().items():
        words = _WORD_SETTINGS.get(name, ())
        if value in ("0", "1") or (name in _NUMERIC_SETTINGS and value.isdigit()) \
                or value in words:
            continue
        number = [_NUMERIC_SETTINGS[name]] if name in _NUMERIC_SETTINGS else []
        choices = ["1 (on)", "0 (off)", *number, *words]
        what = ", ".join(choices[:-1]) + " or " + choices[-1]
        raise TilecError(f"{name}={value!r}: this compile setting takes {what}")


def cache_key(parts: dict[str, Any]) -> str:
    """A stable hash of the key's parts (sorted JSON; unknown objects by repr) and of the
    COMPILE_SETTINGS that are set."""
    from tilec import __version__

    settings = compile_settings()
    if settings:
        parts = {**parts, "settings": settings}
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


def _warn_once(message: str) -> None:
    if message not in _reported:
        _reported.add(message)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def _read_entry(directory: Path, key: str) -> Artifact:
    """The artifact of the entry in `directory`; ValueError naming what is wrong with it."""
    try:
        artifact = Artifact.load(directory)
        stored_key = (directory / KEY_FILE).read_text().strip()
    except (OSError, ValueError, TypeError, KeyError) as error:
        raise ValueError(str(error)) from None
    if stored_key != key:
        raise ValueError(f"it holds the entry of key {stored_key[:40]!r}")
    return artifact


def lookup(key: str) -> Artifact | None:
    """The artifact cached under `key`, or None to compile it (absent, made by another
    compiler, or damaged: reported once, then replaced by the compile's store)."""
    if not is_enabled():
        return None
    if key in _memory:
        return _memory[key]
    directory = cache_dir() / key
    if not directory.exists():
        return None
    fingerprint = compiler_fingerprint()
    try:
        artifact = _read_entry(directory, key)
    except ValueError as error:
        if fingerprint is None:
            raise TilecError(f"the kernel cache entry {directory} is damaged ({error}) and no "
                             "compiler is installed here to build it again; copy the entry "
                             "again from the machine that compiled it") from None
        _warn_once(f"tilec: the kernel cache entry {directory} is damaged ({error}); "
                   "compiling it again")
        return None
    if fingerprint is not None and artifact.compiler != fingerprint:
        return None  # made by another version of the compiler
    _memory[key] = artifact
    return artifact


@functools.cache
def _folder_mode() -> int:
    """rwx as the umask allows (mkdtemp's folders are the owner's alone)."""
    umask = os.umask(0o022)
    os.umask(umask)
    return 0o777 & ~umask


def _is_current(directory: Path, key: str) -> bool:
    try:
        artifact = _read_entry(directory, key)
    except ValueError:
        return False
    return artifact.compiler == (compiler_fingerprint() or "")


def store(key: str, artifact: Artifact) -> None:
    """Keep `artifact` in memory and write it under the cache directory: saved in a staging
    folder, which one rename makes the entry (another process's whole copy of the same entry
    is kept; a stale or damaged one is moved aside first, then removed)."""
    if not is_enabled():
        return
    artifact.compiler = compiler_fingerprint() or ""
    _memory[key] = artifact
    root = cache_dir()
    staging: Path | None = None
    try:
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=root))
        staging.chmod(_folder_mode())
        artifact.save(staging)
        (staging / KEY_FILE).write_text(key)
        final = root / key
        try:
            staging.rename(final)
            staging = None
        except OSError:  # the entry exists (rename does not replace a folder with files)
            if not _is_current(final, key):
                aside = Path(tempfile.mkdtemp(prefix=f".{key}-stale-", dir=root))
                final.rename(aside / "entry")
                staging.rename(final)
                staging = None
                shutil.rmtree(aside, ignore_errors=True)
    except OSError as error:  # an unwritable cache directory leaves the memory cache working
        _warn_once(f"tilec: cannot write the kernel cache at {root} ({error.strerror or error});"
                   " compiled kernels are kept in memory only (set TILEC_CACHE_DIR to a "
                   "writable directory)")
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
