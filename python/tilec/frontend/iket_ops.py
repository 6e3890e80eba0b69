"""IKET events in kernels: iket.mark, iket.range, iket.payload (a mixin of the KernelBuilder).

Each event becomes a T.call_extern statement calling a device function this module writes in
CUDA C, one per event (`tilec_iket_event_<id>`, with its id and PTX in it) and one ending every
range, beside IKET's metadata (`__iket_meta_info`, a descriptor per event and per range, all
`__device__` byte arrays the linker keeps). That text is the module's one IKET source among its
T.import_source texts, written again as each new event appears; the CUDA target compiles and
links it as it does every imported source (tilec/tools/cuda/iket.py says what the profiler
reads; compiler/targets/cuda_extern.py compiles it). The call carries `tile.iket_event` (the
event's name) so that targets without CUDA C name it in their error.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import Any

from mlir import ir
from mlir.dialects import llvm

import tilec.language as T
from tilec.compiler.passes._extern import IKET_EVENT_ATTR, SOURCES_ATTR
from tilec.frontend.values import Scalar
from tilec.tools.cuda import iket

SOURCE_MARKER = "// tilec: the IKET events of this kernel (tilec.tools.cuda.iket)\n"
RANGE_END_FUNCTION = "tilec_iket_range_end"
_EVENT_BYTES, _RANGE_BYTES, _META_BYTES = 60, 72, 48
_MAGIC = (157, 241, 190, 186)
_INSTRUMENT_METHOD = 3  # IKET's number for events raised by pmevent after a shared store
_C_PAYLOAD_TYPES = {"int32": "int32_t", "uint32": "uint32_t", "float32": "float"}

# the event's record: the global timer with the id in its low bits, stored at the reserved
# shared word 0x20 of the block (of its cluster rank on sm_90), then pmevent with the id
_SLOT = """static __device__ __forceinline__ unsigned int tilec_iket_slot() {
  unsigned int rank = 0;
#if __CUDA_ARCH__ >= 900
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
#endif
  return rank;
}
"""
_RECORD = ('asm volatile("{\\n\\t.reg .b32 r, t;\\n\\tmov.u32 t, %%globaltimer_lo;\\n\\t'
           'or.b32 t, t, {id};\\n\\tmad.lo.u32 r, %0, 0x1000000, 0x20;\\n\\t'
           'st.weak.shared.u32 [r], t;\\n\\t{tail}}" :: "r"(tilec_iket_slot()) : "memory");')
_PAYLOAD_RECORD = ('asm volatile("{\\n\\t.reg .b32 r;\\n\\tmad.lo.u32 r, %0, 0x1000000, 0x24;'
                   '\\n\\tst.volatile.shared.u32 [r], %1;\\n\\tpmevent.mask {id};\\n\\t}" :: '
                   '"r"(tilec_iket_slot()), "r"(bits) : "memory");')


@dataclass(frozen=True)
class IketPayload:
    """A value an event carries: a 32-bit scalar of IKET's payload types."""

    value: Scalar
    dtype: str


@dataclass(frozen=True)
class IketRange:
    """What `iket.range(name)` evaluates to in a kernel: a `with` around statements."""

    name: str
    payload: IketPayload | None


def _u32(value: int) -> list[int]:
    return [(value >> shift) & 0xFF for shift in (0, 8, 16, 24)]


def _record(size: int, fields: dict[int, int], name_at: int | None = None,
            name: str = "") -> list[int]:
    """IKET's little-endian descriptor: its size first, 32-bit fields at their offsets, the
    name's length and bytes from `name_at`."""
    data = [0] * size
    data[0:4] = _u32(size)
    for offset, value in fields.items():
        data[offset:offset + 4] = _u32(value)
    if name_at is not None:
        encoded = list(name.encode())
        data[name_at:name_at + 4] = _u32(len(encoded))
        data[name_at + 4:name_at + 4 + len(encoded)] = encoded
    return data


def _array(symbol: str, data: list[int]) -> str:
    return (f"__device__ __attribute__((used, aligned(1))) unsigned char {symbol}[{len(data)}] = "
            f"{{{', '.join(map(str, data))}}};")


def _symbol_part(name: str) -> str:
    part = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in name)
    return part if part and not part[0].isdigit() else f"_{part}"


def event_function(event: iket.Event) -> str:
    return f"tilec_iket_event_{event.event_id}"


def iket_source(events: list[iket.Event], payloads: bool) -> str:
    """The CUDA C of `events` (in id order): IKET's metadata, then their device functions."""
    lines = [SOURCE_MARKER, 'extern "C" {']
    ranges: dict[str, int] = {}
    for event in events:
        fields = {4: event.event_id, 8: _INSTRUMENT_METHOD,
                  12: event.payload_iket_id if payloads else 0}
        if event.kind == "range":
            fields.update({16: 1, 20: event.range_id})
            ranges[event.name] = event.range_id
        symbol = f"__iket_evt_decl_{_symbol_part(event.name)}_{event.event_id}_attrs"
        lines.append(_array(symbol, _record(_EVENT_BYTES, fields, 24, event.name)))
    for name, range_id in ranges.items():
        fields = {8: range_id, 12: 0xFFFFFFFF, 16: 2}
        symbol = f"__iket_range_decl_{_symbol_part(name)}_{range_id}_attrs"
        lines.append(_array(symbol, _record(_RANGE_BYTES, fields, 32, name)))
    meta = _record(_META_BYTES, {8: len(events) + len(ranges), 12: iket.RANGE_END_ID,
                                 16: 32, 20: _EVENT_BYTES,
                                 32: max(e.event_id for e in events)})
    meta[24:28] = _MAGIC
    lines += [_array("__iket_meta_info", meta), "}", _SLOT]
    for event in events:
        carries = payloads and event.payload_type != "NoPayload"
        if event.payload_type == "NoPayload":
            head = f"__device__ __forceinline__ void {event_function(event)}() {{"
        else:  # without payload capture the value is taken and not stored
            head = (f"__device__ __forceinline__ void {event_function(event)}("
                    f"{_C_PAYLOAD_TYPES[event.payload_type]} value) {{")
        lines.append(head)
        if carries:
            lines.append("  unsigned int bits;\n  memcpy(&bits, &value, sizeof bits);")
            lines.append("  " + _RECORD.replace("{id}", str(event.event_id)).replace(
                "{tail}", ""))
            lines.append("  " + _PAYLOAD_RECORD.replace("{id}", str(event.event_id)))
        else:
            lines.append("  " + _RECORD.replace("{id}", str(event.event_id)).replace(
                "{tail}", f"pmevent.mask {event.event_id};\\n\\t"))
        lines.append("}")
    if ranges:
        lines.append(f"__device__ __forceinline__ void {RANGE_END_FUNCTION}() {{")
        lines.append("  " + _RECORD.replace("{id}", str(iket.RANGE_END_ID)).replace(
            "{tail}", f"pmevent.mask {iket.RANGE_END_ID};\\n\\t"))
        lines.append("}")
    return "\n".join(lines) + "\n"


class IketOps:
    """t_iket_* handlers; mixed into KernelBuilder (its iket_events: {(kind, name): Event} of
    this module, numbered here; iket_open_ranges: (name, push statement) of the ranges open,
    innermost last)."""

    def iket_require(self, node: ast.AST, what: str) -> None:
        self.require_kernel(node, f"iket.{what}")
        if not iket.is_enabled():
            self.error(node, f"iket.{what}: IKET events are compiled inside `with "
                             "iket.session(...)` only, as in TileLang (the session numbers "
                             "them and keeps such kernels out of the cache)")

    def t_iket_payload(self, nodes: dict, node: ast.Call) -> IketPayload:
        self.iket_require(node, "payload")
        return self.iket_payload(self.arg(nodes, "expr"), self.const_arg(nodes, "dtype", node),
                                 node)

    def iket_payload(self, value: Any, dtype: Any, node: ast.AST) -> IketPayload:
        """`value` as a payload of `dtype` (None: int32 for ints and bools as uint32, float32
        for floats, else the value's own dtype)."""
        value = self.rvalue(value, node)
        if dtype is None:
            if isinstance(value, bool):
                dtype = "uint32"
            elif isinstance(value, int):
                dtype = "int32"
            elif isinstance(value, float):
                dtype = "float32"
            elif isinstance(value, Scalar) and value.dtype == T.index:
                dtype = "int32"
            elif isinstance(value, Scalar):
                dtype = value.dtype.name
            else:
                self.error(node, f"an IKET payload is a scalar, got {type(value).__name__}")
        try:
            name = iket.payload_dtype(dtype)
        except ValueError as error:
            self.error(node, str(error))
        return IketPayload(self.materialize(value, T.dtype(name), node), name)

    def iket_optional_payload(self, nodes: dict, node: ast.AST) -> IketPayload | None:
        value = self.arg(nodes, "payload")
        if value is None or isinstance(value, IketPayload):
            return value
        return self.iket_payload(value, None, node)

    def t_iket_mark(self, nodes: dict, node: ast.Call) -> None:
        self.iket_require(node, "mark")
        payload = self.iket_optional_payload(nodes, node)
        self.iket_event(self.const_arg(nodes, "name", node), "mark", payload, node)

    def t_iket_range(self, nodes: dict, node: ast.Call) -> IketRange:
        self.iket_require(node, "range")
        name = self.const_arg(nodes, "name", node)
        return IketRange(name, self.iket_optional_payload(nodes, node))

    def t_iket_range_push(self, nodes: dict, node: ast.Call) -> None:
        self.iket_require(node, "range_push")
        payload = self.iket_optional_payload(nodes, node)
        name = self.const_arg(nodes, "name", node)
        self.iket_event(name, "range", payload, node)
        self.iket_open_ranges.append((name, node))

    def t_iket_range_pop(self, nodes: dict, node: ast.Call) -> None:
        self.iket_require(node, "range_pop")
        name = self.const_arg(nodes, "name", node)
        if not self.iket_open_ranges:
            self.error(node, "iket.range_pop without an open range (iket.range_push)")
        innermost = self.iket_open_ranges[-1][0]
        if name is not None and name != innermost:
            self.error(node, f"iket.range_pop({name!r}) ends range {innermost!r}, the "
                             "innermost open one")
        self.iket_open_ranges.pop()
        self.iket_call(RANGE_END_FUNCTION, None, "range end", node)

    def iket_check_closed(self) -> None:
        """At a kernel's end: every iket.range_push was popped."""
        if self.iket_open_ranges:
            name, node = self.iket_open_ranges[0]
            self.error(node, f"iket.range_push({name!r}) is not ended by an iket.range_pop in "
                             "its kernel")

    def iket_ranges(self, items: list[ast.withitem], body: list[ast.stmt], node: ast.AST,
                    first: Any = None) -> None:
        """`body` inside the ranges of `items` (each an iket.range; `first`: the first one's
        value, already evaluated), the first outermost."""
        specs = [first if first is not None and index == 0 else self.eval(item.context_expr)
                 for index, item in enumerate(items)]
        for item, spec in zip(items, specs, strict=True):
            if not isinstance(spec, IketRange) or item.optional_vars is not None:
                self.error(node, "a kernel's with statement is `with T.Kernel(...) as (bx, "
                                 "by):`, with iket.range(name) items after it")
        for spec in specs:
            self.iket_event(spec.name, "range", spec.payload, node)
        self.body(body)
        for _ in specs:
            self.iket_call(RANGE_END_FUNCTION, None, "range end", node)

    def iket_event(self, name: Any, kind: str, payload: IketPayload | None,
                   node: ast.AST) -> None:
        """The call of an event, numbered in this module from 1 in the order first used (31
        skipped), as IKET reads a module's events; the session's table keeps its own ids."""
        try:
            event = iket.register(name, kind, payload.dtype if payload else "NoPayload")
        except ValueError as error:
            self.error(node, str(error))
        if (kind, event.name) not in self.iket_events:
            number = len(self.iket_events) + 1
            number += number >= iket.RANGE_END_ID
            self.iket_events[(kind, event.name)] = replace(event, event_id=number)
        event = self.iket_events[(kind, event.name)]
        self.iket_call(event_function(event), payload, event.name, node)

    def iket_call(self, function: str, payload: IketPayload | None, name: str,
                  node: ast.AST) -> None:
        """The call of one event's function, the module's IKET source written again."""
        module = self.extern_module()
        known = ([ir.StringAttr(s).value for s in ir.ArrayAttr(module.attributes[SOURCES_ATTR])]
                 if SOURCES_ATTR in module.attributes else [])
        events = sorted(self.iket_events.values(), key=lambda event: event.event_id)
        sources = [s for s in known if not s.startswith(SOURCE_MARKER)]
        sources.append(iket_source(events, iket.runtime_payloads_enabled()))
        module.attributes[SOURCES_ATTR] = ir.ArrayAttr.get([ir.StringAttr.get(s)
                                                            for s in sources])
        values, kinds = [], []
        if payload is not None:
            value, kind = self.extern_argument(payload.value, node)
            values, kinds = [value], [kind]
        callee = self.declare_extern(function, kinds, "void", node)
        with self.at(node):
            call = llvm.CallOp(None, values, [], [], callee=ir.FlatSymbolRefAttr.get(callee))
        call.attributes[IKET_EVENT_ATTR] = ir.StringAttr.get(name)
