"""TileLang's IKET instrumentation (`tilelang.tools.cuda.iket`) on tilec's CUDA target.

IKET is an external profiler reading events a kernel raises at points its author marks:
`iket.mark(name)` (an instant, optionally with a 32-bit payload: `iket.payload(value,
dtype="int32")`) and `iket.range(name)` (a `with` around statements, or `range_push` /
`range_pop`; `with T.Kernel(...) as bx, iket.range("total"):` puts one around a kernel's body).
Each event is a few PTX instructions: the global timer with the event's id in its low bits,
stored in the block's reserved shared memory, then `pmevent.mask id`; the module carries
IKET's metadata (`__iket_meta_info` and one descriptor per event and range) for the profiler to
decode them. tilec writes both as CUDA C (python/tilec/frontend/iket_ops.py): the events are
T.call_extern calls of generated device functions, compiled with nvcc and linked into the
kernel's cubin as T.import_source code is (compiler/targets/cuda_extern.py), so each event is a
call into a separately compiled function, not inlined.

Events are compiled inside `with iket.session(output_dir=..., runtime_payloads=...):` only, as
in TileLang, where the session installs the code they need. The session numbers its events from
1 as they are first built and lists them (`event_table()`; tilec builds a `@T.prim_func`'s body
when it is compiled, so the table is empty until then); each kernel numbers its own from 1 in
the order it uses them (31 is every range's end), as IKET reads a module. The session switches
the kernel cache off (payload capture is not part of a kernel's key) and restores it after.
Other targets reject events at their line. The IKET profiler itself (`python
-m iket.cli.main ... profile`) is a separate package; `profile_command` writes its command line.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilec import cache
from tilec.errors import at_caller

RANGE_END_ID = 31  # the event id of every range's end
MAX_NAME_BYTES = 32
PAYLOAD_IDS = {"int32": 5, "uint32": 6, "float32": 13}  # IKET's numbers of the payload types
_PAYLOAD_ALIASES = {"int": "int32", "uint": "uint32", "float": "float32"}
OUTPUT_DIR_ENV = "TL_IKET_OUTPUT_DIR"

__all__ = ["Event", "PayloadSpec", "disable", "disable_runtime_payloads", "enable",
           "enable_runtime_payloads", "event_table", "is_enabled", "mark", "output_dir",
           "output_path", "payload", "profile_command", "range", "range_end", "range_pop",
           "range_push", "range_start", "reset", "runtime_payloads_enabled", "session",
           "set_output_dir", "trace_files"]


@dataclass(frozen=True)
class Event:
    """One event of the session: `kind` "mark" or "range"; a range's `range_id` is the CRC-32
    of its name (never 0); `payload_type` "NoPayload" or a PAYLOAD_IDS key."""

    name: str
    event_id: int
    kind: str
    range_id: int = 0
    payload_type: str = "NoPayload"

    @property
    def payload_iket_id(self) -> int:
        return PAYLOAD_IDS.get(self.payload_type, 0)


@dataclass(frozen=True)
class PayloadSpec:
    """What `iket.payload(value, dtype)` stands for outside a kernel (in one, the frontend
    builds the value)."""

    expr: Any
    dtype: str

    @property
    def iket_id(self) -> int:
        return PAYLOAD_IDS[self.dtype]


_lock = threading.RLock()
_state: dict[str, Any] = {"depth": 0, "payloads": False, "output_dir": None, "next_id": 1}
_events: dict[tuple[str, str], Event] = {}


# ---------------------------------------------------------------------------------------------
# the session


def enable() -> None:
    """Compile IKET events in the kernels built from now on (nested: counted)."""
    with _lock:
        _state["depth"] += 1


def disable() -> None:
    """Undo one enable()."""
    with _lock:
        _state["depth"] = max(0, _state["depth"] - 1)


def is_enabled() -> bool:
    with _lock:
        return _state["depth"] > 0


def enable_runtime_payloads() -> None:
    """Events with a payload store it for the profiler (without, they are plain events)."""
    with _lock:
        _state["payloads"] = True


def disable_runtime_payloads() -> None:
    with _lock:
        _state["payloads"] = False


def runtime_payloads_enabled() -> bool:
    with _lock:
        return bool(_state["payloads"])


def reset() -> None:
    """Forget the session's events: the next one is numbered 1 again."""
    with _lock:
        _events.clear()
        _state["next_id"] = 1


def event_table() -> list[dict[str, int | str]]:
    """The events of the kernels built in this session, by id (TileLang's table)."""
    payloads = runtime_payloads_enabled()
    with _lock:
        return [{"name": e.name, "event_id": e.event_id, "kind": e.kind,
                 "range_id": e.range_id, "payload_type": e.payload_type,
                 "payload_iket_id": e.payload_iket_id,
                 "runtime_payload_iket_id": e.payload_iket_id if payloads else 0}
                for e in sorted(_events.values(), key=lambda e: e.event_id)]


@contextlib.contextmanager
def session(*, reset_events: bool = True, output_dir: str | os.PathLike[str] | None = None,
            runtime_payloads: bool | None = None, disable_cache: bool = True,
            **_tilelang_options: Any) -> Iterator[None]:
    """Kernels compiled in the block carry their IKET events (see the module docstring); the
    output directory, payload capture and the kernel cache are restored after it."""
    with _lock:
        saved = (_state["output_dir"], os.environ.get(OUTPUT_DIR_ENV), _state["payloads"])
    cache_was_on = cache.is_enabled()
    try:
        if output_dir is not None:
            set_output_dir(output_dir)
        if runtime_payloads is not None:
            (enable_runtime_payloads if runtime_payloads else disable_runtime_payloads)()
        if disable_cache:
            cache.disable_cache()
        if reset_events:
            reset()
        enable()
        try:
            yield
        finally:
            disable()
    finally:
        with _lock:
            _state["output_dir"], _state["payloads"] = saved[0], saved[2]
        if saved[1] is None:
            os.environ.pop(OUTPUT_DIR_ENV, None)
        else:
            os.environ[OUTPUT_DIR_ENV] = saved[1]
        if disable_cache and cache_was_on:
            cache.enable_cache()


def register(name: str, kind: str, payload_type: str = "NoPayload") -> Event:
    """The session's event of this name and kind, numbered when first seen; ValueError when it
    is used with another payload type than before (the frontend reports it at the line)."""
    if not isinstance(name, str) or not name:
        raise ValueError("an IKET event's name is a non-empty string")
    if len(name.encode()) > MAX_NAME_BYTES:
        raise ValueError(f"an IKET event's name has at most {MAX_NAME_BYTES} UTF-8 bytes: "
                         f"{name!r}")
    with _lock:
        known = _events.get((kind, name))
        if known is not None:
            if known.payload_type != payload_type:
                raise ValueError(f"IKET event {name!r} was first used with payload type "
                                 f"{known.payload_type}, here with {payload_type}")
            return known
        if _state["next_id"] == RANGE_END_ID:
            _state["next_id"] += 1
        range_id = (zlib.crc32(name.encode()) or 1) if kind == "range" else 0
        event = Event(name, _state["next_id"], kind, range_id, payload_type)
        _state["next_id"] += 1
        _events[(kind, name)] = event
        return event


def payload_dtype(dtype: str) -> str:
    """`dtype` as IKET names it (int32, uint32, float32); ValueError for others."""
    name = _PAYLOAD_ALIASES.get(str(dtype).lower(), str(dtype).lower())
    if name not in PAYLOAD_IDS:
        raise ValueError(f"an IKET payload is int32, uint32 or float32, got {dtype!r}")
    return name


# ---------------------------------------------------------------------------------------------
# output files (the profiler writes its traces there)


def set_output_dir(path: str | os.PathLike[str] | None) -> Path | None:
    """Where this process's IKET files go (also TL_IKET_OUTPUT_DIR); made if missing."""
    with _lock:
        if path is None:
            _state["output_dir"] = None
            os.environ.pop(OUTPUT_DIR_ENV, None)
            return None
        folder = Path(path).expanduser().absolute()
        folder.mkdir(parents=True, exist_ok=True)
        _state["output_dir"] = folder
        os.environ[OUTPUT_DIR_ENV] = str(folder)
        return folder


def output_dir(default: str | os.PathLike[str] | None = None) -> Path | None:
    """The output directory set, else TL_IKET_OUTPUT_DIR, else `default`."""
    with _lock:
        if _state["output_dir"] is not None:
            return _state["output_dir"]
    configured = os.environ.get(OUTPUT_DIR_ENV) or default
    return Path(configured).expanduser().absolute() if configured else None


def output_path(name: str, *, directory: str | os.PathLike[str] | None = None) -> Path:
    """`name` in the output directory (made if missing)."""
    base = output_dir(directory)
    if base is None:
        raise at_caller("iket.output_path: no IKET output directory is set (iket.session("
                        "output_dir=...), iket.set_output_dir or TL_IKET_OUTPUT_DIR)")
    base.mkdir(parents=True, exist_ok=True)
    return base / name


def trace_files(*, directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """The profiler's JSON traces in the output directory, largest first."""
    base = output_dir(directory)
    if base is None or not base.exists():
        return []
    return sorted(base.glob("*.trace.json"), key=lambda path: path.stat().st_size, reverse=True)


def profile_command(command: str | Sequence[str], *, directory: str | os.PathLike[str],
                    postprocess: str = "all", clobber: bool = True) -> str:
    """The IKET profiler's command line running `command` with traces into `directory`."""
    parts = ["python", "-m", "iket.cli.main", "--output-dir", str(Path(directory).expanduser())]
    parts += ["--clobber"] if clobber else []
    parts += ["profile", "--postprocess", postprocess, "--"]
    line = " ".join(shlex.quote(part) for part in parts)
    if isinstance(command, str):
        return f"{line} {command}"
    return " ".join([line, *(shlex.quote(str(part)) for part in command)])


# ---------------------------------------------------------------------------------------------
# kernel statements: markers the frontend builds (frontend/iket_ops.py)


def _kernel_marker(fn: Callable) -> Callable:
    """`fn` as a statement of kernels (its calls built by the frontend's t_iket_<name>); called
    anywhere else it is an error at the caller's line."""

    @functools.wraps(fn)
    def outside_a_kernel(*args: Any, **kwargs: Any) -> Any:
        raise at_caller(f"iket.{fn.__name__} is a statement of a kernel (inside `with "
                        "T.Kernel(...)`)")

    outside_a_kernel.__tilec_op__ = f"iket_{fn.__name__}"  # type: ignore[attr-defined]
    return outside_a_kernel


@_kernel_marker
def mark(name: str, payload: Any = None) -> None:
    """An instant event here (with a payload: `iket.payload(value, dtype=...)` or a value)."""


@_kernel_marker
def payload(expr: Any, dtype: str | None = None) -> PayloadSpec:
    """A 32-bit value (int32, uint32, float32) an event carries."""


@_kernel_marker
def range(name: str, payload: Any = None) -> None:  # noqa: A001 - TileLang's name
    """A range around the statements of a `with` (its start may carry a payload)."""


@_kernel_marker
def range_push(name: str, payload: Any = None) -> None:
    """The start of a range, ended by the next range_pop."""


@_kernel_marker
def range_pop(name: str | None = None) -> None:
    """The end of the innermost range (named: checked)."""


range_start = range_push
range_end = range_pop
