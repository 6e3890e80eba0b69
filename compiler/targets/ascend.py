"""The ascend target: AscendC C++ source for Huawei Ascend AI cores (Atlas A2 / 910B; the 950
keeps the same programming model). Emitted only: no Ascend toolchain or device is here, so the
source is checked by compiling it with the host C++ compiler against the declarations in
ascend_include/kernel_operator.h (a syntax and type check), never run.

Stages ("tile" is the frontend's IR):
  tile-ascend  canonicalize + cse, then place-ascend-buffers: each tile.alloc's memory as a
               `tile.ascend_position` attribute (L1 "A1"/"B1" for gemm operands, L0C "CO1"
               for accumulators, "FIX" for an accumulator's type conversion the Fixpipe
               does, "SCALAR" for variables, UB "VECCALC" for the rest)
  ascendc      the kernel as AscendC C++, op by op, reading those positions:
               - tile.kernel: one AI core per block, its (bx, by, bz) from GetBlockIdx()
               - tile.copy: DataCopy GM <-> UB (contiguous or 32-byte-block rows), GM -> L1 in
                 the cube's NZ layout (Nd2NzParams), L0C -> GM by Fixpipe (converting f32
                 to the tensor's type on the way)
               - an accumulator the vector unit reads (an epilogue): L0C -> the core's GM
                 workspace (Fixpipe) -> UB (DataCopy) after its last gemm (the 910B has no
                 L0C -> UB path); the kernel takes `GM_ADDR workspace` last, f32 elements
                 per block: launch["workspace_elements"]
               - tile.gemm (Cube unit): L1 -> L0A / L0B by LoadData through TQue queues
                 (a transposed operand flips its load), Mmad into L0C, initialized by the
                 first step after a tile.fill of zero or with clear_accum
               - tile.parallel (Vector unit): a body of whole-tile elementwise arithmetic on
                 UB buffers becomes vector instructions (Add, Muls, Exp, Cast...), each into
                 its own UB temporary; any other body runs on the scalar unit (GetValue /
                 SetValue loops)
               - tile.reduce: ReduceSum / ReduceMax / ReduceMin per row on UB
               - tile.fill: Duplicate on UB
               - tile.atomic_add into GM: the value in a UB scratch element, copied out by
                 MTE3 with SetAtomicAdd (the copy accumulates, atomically across AI cores);
                 into UB a read-modify-write (one core's scalar unit is its only writer)
               - T.alloc_var / T.alloc_local: the scalar unit's C++ variables; loops,
                 scf.if and while loops without carried values as C++ control flow
               The pipes are ordered by events: SetFlag / WaitFlag between the transfer (MTE2,
               MTE3), vector (V) and scalar (S) pipes where one's results feed another,
               PipeBarrier<PIPE_V> between dependent vector instructions, the cube's stages by
               their queues' EnQue / DeQue.
What the emitter does not lower is a CompileError at the kernel's line.

Kernel ABI: the CUDA target's slots (compiler/targets/cuda.py kernel_abi): a tensor as a GM_ADDR,
a scalar as itself, each dynamic dimension as int64_t; one AI core per block of the frontend's
grid (the launch's block count is their product). Each memory's bytes are checked against the
chip's description (an AI core of the 910B: 192 KB UB, 512 KB L1, 64 KB L0A / L0B, 128 KB L0C).
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from mlir import ir

from tilec.compiler.passes._ir_walk import (
    as_operation,
    constant_index,
    copy_parts,
    op_error,
    scope,
    walk,
)
from tilec.compiler.passes.place_ascend_buffers import (
    FIXPIPE_ATTR,
    POSITION_ATTR,
    THROUGH_GM_ATTR,
)
from tilec.compiler.pipeline import CompileOptions, Stage, run_pass_pipeline, tile_passes
from tilec.compiler.targets.cuda import kernel_abi
from tilec.compiler.targets.description import ASCEND_DESCRIPTIONS, DEFAULT_ASCEND_CHIP
from tilec.errors import CompileError

ABI = "tilec-ascendc-v1"
ENTRY_PREFIX = "tilec_"  # the kernel's name may be main, which C++ reserves
INCLUDE_DIR = Path(__file__).resolve().parent / "ascend_include"
C_TYPES = {"f32": "float", "f16": "half", "bf16": "bfloat16_t", "f64": "double",
           "i64": "int64_t", "i32": "int32_t", "i16": "int16_t", "i8": "int8_t",
           "i1": "bool", "index": "int64_t"}
# what SetAtomicAdd accumulates into GM
ATOMIC_ELEMENTS = ("float", "half", "bfloat16_t", "int32_t", "int16_t", "int8_t")
BINARY_OPERATORS = {
    "arith.addf": "+", "arith.addi": "+", "arith.subf": "-", "arith.subi": "-",
    "arith.mulf": "*", "arith.muli": "*", "arith.divf": "/", "arith.divsi": "/",
    "arith.divui": "/", "arith.remsi": "%", "arith.remui": "%", "arith.andi": "&",
    "arith.ori": "|", "arith.xori": "^", "arith.shli": "<<", "arith.shrsi": ">>",
    "arith.shrui": ">>",
}
COMPARISONS = {"eq": "==", "ne": "!=", "slt": "<", "sle": "<=", "sgt": ">", "sge": ">=",
               "ult": "<", "ule": "<=", "ugt": ">", "uge": ">=", "oeq": "==", "one": "!=",
               "olt": "<", "ole": "<=", "ogt": ">", "oge": ">=", "ueq": "==", "une": "!=",
               "ugt_f": ">"}
CMPI_PREDICATES = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
CMPF_PREDICATES = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge",
                   "ult", "ule", "une", "uno", "true"]
SCALAR_MATH = {"math.exp": "expf", "math.log": "logf", "math.sqrt": "sqrtf", "math.absf": "fabsf"}
CASTS = ("arith.extf", "arith.truncf", "arith.sitofp", "arith.fptosi", "arith.index_cast",
         "arith.extsi", "arith.trunci", "arith.uitofp", "arith.fptoui", "arith.extui",
         "arith.index_castui")
# whole-tile vector instructions: two tensors, a tensor and a scalar, one tensor
VECTOR_BINARY = {"arith.addf": "Add", "arith.subf": "Sub", "arith.mulf": "Mul",
                 "arith.divf": "Div", "arith.maximumf": "Max", "arith.minimumf": "Min",
                 "arith.maxnumf": "Max", "arith.minnumf": "Min"}
VECTOR_SCALAR = {"arith.addf": "Adds", "arith.mulf": "Muls", "arith.maximumf": "Maxs",
                 "arith.minimumf": "Mins", "arith.maxnumf": "Maxs", "arith.minnumf": "Mins"}
VECTOR_UNARY = {"math.exp": "Exp", "math.log": "Ln", "math.sqrt": "Sqrt", "math.absf": "Abs"}
REDUCTIONS = {"sum": "ReduceSum", "max": "ReduceMax", "min": "ReduceMin",
              "umax": "ReduceMax", "umin": "ReduceMin",
              "abssum": "ReduceSum", "absmax": "ReduceMax"}
# the AI core memory each AscendC position is in
MEMORIES = {"VECCALC": "UB", "A1": "L1", "B1": "L1", "A2": "L0A", "B2": "L0B", "CO1": "L0C"}


def c_type(type_: ir.Type) -> str:
    name = str(type_)
    if name not in C_TYPES:
        raise CompileError(f"the ascend target has no C type for {name}")
    return C_TYPES[name]


@dataclass
class Buffer:
    """A tile.alloc as the emitted code holds it."""

    name: str
    position: str
    element: str
    shape: list[int]
    depth: int = 1  # buffers in flight (an L1 operand in a pipelined loop of n stages: n)

    @property
    def count(self) -> int:
        return math.prod(self.shape)


@dataclass
class Emitter:
    """Emits one entry function; every op adds its statements to `body`."""

    names: dict = field(default_factory=dict)
    buffers: dict = field(default_factory=dict)  # alloc result -> Buffer
    globals_: dict = field(default_factory=dict)  # memref argument -> (name, shape exprs)
    declarations: list = field(default_factory=list)
    body: list = field(default_factory=list)
    indent: int = 1
    counter: int = 0
    pipe: str | None = None  # the pipe the last statement ran on
    accumulators: dict = field(default_factory=dict)  # CO1 buffer name -> init flag name
    used: dict = field(default_factory=lambda: dict.fromkeys(MEMORIES.values(), 0))  # bytes
    converted: dict = field(default_factory=dict)  # "FIX" fragment -> its accumulator
    workspace: dict = field(default_factory=dict)  # through-GM accumulator -> its offset
    workspace_elements: int = 0  # per AI core
    mirrors: dict = field(default_factory=dict)  # through-GM accumulator -> its UB Buffer
    atomic_scratch: dict = field(default_factory=dict)  # element type -> UB scratch element

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def line(self, text: str) -> None:
        self.body.append("  " * self.indent + text)

    def on_pipe(self, pipe: str) -> None:
        """Orders this statement after the previous pipe's (an event, or a vector barrier)."""
        if self.pipe is not None and self.pipe != pipe:
            self.line(f"SetFlag<HardEvent::{self.pipe}_{pipe}>(EVENT_ID0);")
            self.line(f"WaitFlag<HardEvent::{self.pipe}_{pipe}>(EVENT_ID0);")
        elif self.pipe == pipe == "V":
            self.line("PipeBarrier<PIPE_V>();")
        self.pipe = pipe

    def all_pipes(self) -> None:
        """A full barrier (loop boundaries: a statement may follow any of the body's)."""
        self.line("PipeBarrier<PIPE_ALL>();")
        self.pipe = None

    # -- values -------------------------------------------------------------------------

    def value(self, value: ir.Value) -> str:
        if value in self.names:
            return self.names[value]
        if value in self.buffers or value in self.globals_:
            return self.tensor(value)
        op = value.owner
        if not isinstance(op, ir.Block) and as_operation(op).name == "arith.constant":
            return self.constant(as_operation(op))
        raise CompileError(f"the ascend emitter met a value it did not define: {value}")

    def constant(self, op: ir.Operation) -> str:
        attr = op.attributes["value"]
        if isinstance(attr, ir.IntegerAttr):
            if str(attr.type) == "i1":
                return "true" if attr.value else "false"
            return str(attr.value)
        if isinstance(attr, ir.FloatAttr):
            number = attr.value
            if math.isnan(number):
                return '__builtin_nanf("")'
            if math.isinf(number):
                return "__builtin_inff()" if number > 0 else "(-__builtin_inff())"
            text = repr(float(number))
            return text + "f" if str(attr.type) != "f64" else text
        raise op_error(op, "the ascend target takes scalar constants only")

    def define(self, result: ir.Value, expression: str) -> None:
        name = self.fresh("v")
        self.line(f"const {c_type(result.type)} {name} = {expression};")
        self.names[result] = name

    def dim(self, memref: ir.Value, axis: int) -> str:
        """A global tensor's extent along `axis` (a number or its int64 dimension argument)."""
        return self.globals_[memref][1][axis]

    def linear(self, memref: ir.Value, indices: list[str]) -> str:
        """Row-major element offset of `indices` in `memref` (a global or a local buffer)."""
        if memref in self.buffers:
            extents = [str(d) for d in self.buffers[memref].shape]
        else:
            extents = self.globals_[memref][1]
        terms = []
        for axis, index in enumerate(indices):
            stride = " * ".join(extents[axis + 1:])
            terms.append(f"{index} * {stride}" if stride else index)
        return " + ".join(terms) if terms else "0"

    def tensor(self, memref: ir.Value) -> str:
        if memref in self.buffers:
            return self.buffers[memref].name
        if memref in self.globals_:
            return self.globals_[memref][0]
        raise CompileError("the ascend target reads and writes kernel parameters and tile "
                           "buffers only (no views)")

    # -- the entry ----------------------------------------------------------------------

    def entry(self, func: ir.Operation, name: str, abi: list[list]) -> str:
        params = []
        arguments = list(func.regions[0].blocks[0].arguments)
        dims = {(slot[1], slot[2]): f"dim{slot[1]}_{slot[2]}" for slot in abi
                if slot[0] == "dim"}
        for slot in abi:
            number = slot[1]
            if slot[0] == "ptr":
                params.append(f"GM_ADDR p{number}")
            elif slot[0] == "scalar":
                params.append(f"{c_type(arguments[number].type)} s{number}")
                self.names[arguments[number]] = f"s{number}"
            else:
                params.append(f"int64_t {dims[(slot[1], slot[2])]}")
        through = [op for op in walk(func) if op.name == "tile.alloc"
                   and THROUGH_GM_ATTR in op.attributes]
        if through:  # accumulators the vector unit reads travel L0C -> GM -> UB
            params.append("GM_ADDR workspace")
            for alloc in through:
                self.workspace[alloc.result] = self.workspace_elements
                self.workspace_elements += math.prod(ir.MemRefType(alloc.result.type).shape)
            self.declarations += [
                "GlobalTensor<float> ws;",
                f"ws.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(workspace) + "
                f"GetBlockIdx() * {self.workspace_elements}, {self.workspace_elements});"]
        for number, argument in enumerate(arguments):
            if not isinstance(argument.type, ir.MemRefType):
                continue
            type_ = ir.MemRefType(argument.type)
            element = c_type(type_.element_type)
            extents = [dims[(number, axis)] if extent == ir.ShapedType.get_dynamic_size()
                       else str(extent) for axis, extent in enumerate(type_.shape)]
            tensor = f"gm{number}"
            self.globals_[argument] = (tensor, extents)
            self.declarations += [
                f"GlobalTensor<{element}> {tensor};",
                f"{tensor}.SetGlobalBuffer(reinterpret_cast<__gm__ {element} *>(p{number}), "
                f"{' * '.join(extents) or '1'});",
            ]
        self.block(func.regions[0].blocks[0])
        header = [f'extern "C" __global__ __aicore__ void {name}({", ".join(params)}) {{',
                  "  TPipe pipe;"]
        return "\n".join(header + ["  " + d for d in self.declarations] + self.body + ["}"])

    def block(self, block: ir.Block) -> None:
        for child in block.operations:
            self.statement(as_operation(child))

    def statement(self, op: ir.Operation) -> None:
        name = op.name
        if self.mirrors and name in ("tile.parallel", "tile.reduce", "tile.copy"):
            self.to_vector_unit(op)
        handler = STATEMENTS.get(name)
        if handler is not None:
            handler(self, op)
        elif name in ("func.return", "tile.yield", "scf.yield"):
            pass
        elif name == "arith.constant":
            if isinstance(op.result.type, ir.VectorType):
                raise op_error(op, "the ascend target takes scalar constants only")
        else:
            memref = op.operands[1 if name == "memref.store" else 0] if name in (
                "memref.load", "memref.store", "tile.atomic_add") else None
            if memref is not None and not self.is_variable(memref):  # the scalar unit on UB/GM
                self.on_pipe("S")
            self.scalar(op)

    # -- scalar ops ---------------------------------------------------------------------

    def scalar(self, op: ir.Operation) -> None:
        name = op.name
        operands = [self.value(v) for v in op.operands] if name != "memref.store" else []
        if name in BINARY_OPERATORS:
            self.define(op.result, f"{operands[0]} {BINARY_OPERATORS[name]} {operands[1]}")
        elif name in ("arith.ceildivsi", "arith.ceildivui"):
            self.define(op.result, f"({operands[0]} + {operands[1]} - 1) / {operands[1]}")
        elif name in ("arith.floordivsi",):
            a, b = operands
            self.define(op.result, f"({a} / {b} - ((({a} % {b}) != 0) && (({a} < 0) != "
                                   f"({b} < 0))))")
        elif name in ("arith.maximumf", "arith.maxnumf", "arith.maxsi", "arith.maxui"):
            self.define(op.result, f"({operands[0]} > {operands[1]} ? {operands[0]} : "
                                   f"{operands[1]})")
        elif name in ("arith.minimumf", "arith.minnumf", "arith.minsi", "arith.minui"):
            self.define(op.result, f"({operands[0]} < {operands[1]} ? {operands[0]} : "
                                   f"{operands[1]})")
        elif name == "arith.negf":
            self.define(op.result, f"-{operands[0]}")
        elif name in SCALAR_MATH:
            self.define(op.result, f"static_cast<{c_type(op.result.type)}>("
                                   f"{SCALAR_MATH[name]}(static_cast<float>({operands[0]})))")
        elif name in CASTS:
            self.define(op.result, f"static_cast<{c_type(op.result.type)}>({operands[0]})")
        elif name in ("arith.cmpi", "arith.cmpf"):
            predicates = CMPI_PREDICATES if name == "arith.cmpi" else CMPF_PREDICATES
            predicate = predicates[ir.IntegerAttr(op.attributes["predicate"]).value]
            if predicate not in COMPARISONS:
                raise op_error(op, f"the ascend target has no comparison '{predicate}'")
            self.define(op.result, f"{operands[0]} {COMPARISONS[predicate]} {operands[1]}")
        elif name == "arith.select":
            self.define(op.result, f"{operands[0]} ? {operands[1]} : {operands[2]}")
        elif name == "memref.load":
            memref = op.operands[0]
            offset = self.linear(memref, operands[1:])
            if self.is_variable(memref):
                self.define(op.result, f"{self.tensor(memref)}[{offset}]")
            else:
                self.define(op.result, f"{self.tensor(memref)}.GetValue({offset})")
        elif name == "memref.store":
            memref = op.operands[1]
            indices = [self.value(v) for v in list(op.operands)[2:]]
            offset, stored = self.linear(memref, indices), self.value(op.operands[0])
            if self.is_variable(memref):
                self.line(f"{self.tensor(memref)}[{offset}] = {stored};")
            else:
                self.line(f"{self.tensor(memref)}.SetValue({offset}, {stored});")
        elif name == "tile.atomic_add":
            self.atomic_add(op)
        elif name == "memref.atomic_rmw":
            raise op_error(op, "the ascend target has no atomic that returns the element's "
                               "previous value (T.atomic_add with return_prev=True)")
        elif name == "memref.dim" and op.operands[0] in self.globals_:
            axis = constant_index(op.operands[1])
            if axis is None:
                raise op_error(op, "the ascend target takes memref.dim of a constant axis")
            self.names[op.result] = self.dim(op.operands[0], axis)
        elif name == "scf.if":
            self.scf_if(op)
        elif name == "scf.while":
            self.scf_while(op)
        else:
            raise op_error(op, f"the ascend target has no lowering for {name}")

    def atomic_add(self, op: ir.Operation) -> None:
        """dst[indices] += value, on the scalar unit. Into GM, where other AI cores add too:
        the value goes to a UB scratch element, and MTE3 copies it out with the atomic add
        set (SetAtomicAdd: the copy accumulates into GM), an element past the tensor's end
        skipped as the GPU targets skip it. Into the core's own UB or variables: a plain
        read-modify-write, since only this core's scalar unit writes them."""
        memref, value = op.operands[0], self.value(op.operands[-1])
        indices = [self.value(v) for v in list(op.operands)[1:-1]]
        offset, tensor = self.linear(memref, indices), self.tensor(memref)
        if self.is_variable(memref):
            self.line(f"{tensor}[{offset}] += {value};")
            return
        if memref not in self.globals_:
            self.line(f"{tensor}.SetValue({offset}, {tensor}.GetValue({offset}) + {value});")
            return
        element = c_type(ir.MemRefType(memref.type).element_type)
        if element not in ATOMIC_ELEMENTS:
            raise op_error(op, f"the ascend target has no atomic add of {element}")
        scratch = self.atomic_scratch.get(element)
        if scratch is None:  # one 32-byte block: the unit MTE3 moves
            scratch = self.atomic_scratch[element] = self.temporary(element, 32 // _bytes(element))
        inside = " && ".join(f"{index} >= 0 && {index} < {extent}" for index, extent in
                             zip(indices, self.globals_[memref][1], strict=True)
                             if not (index.isdigit() and extent.isdigit()
                                     and int(index) < int(extent)))
        self.line(f"if ({inside or 'true'}) {{")
        for line in (f"{scratch}.SetValue(0, static_cast<{element}>({value}));",
                     "SetFlag<HardEvent::S_MTE3>(EVENT_ID0);",
                     "WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);",
                     f"SetAtomicAdd<{element}>();",
                     f"DataCopyPad({tensor}[{offset}], {scratch}, DataCopyExtParams{{1, "
                     f"sizeof({element}), 0, 0, 0}});",
                     "SetAtomicNone();",
                     "SetFlag<HardEvent::MTE3_S>(EVENT_ID0);",  # the scratch is written again
                     "WaitFlag<HardEvent::MTE3_S>(EVENT_ID0);"):
            self.line("  " + line)
        self.line("}")

    def to_vector_unit(self, op: ir.Operation) -> None:
        """Before the vector unit's first use of an accumulator: L0C -> the core's workspace
        (Fixpipe) -> its UB copy (DataCopy), which every later op then uses."""
        if FIXPIPE_ATTR in op.attributes:
            return
        if op.name == "tile.copy":
            src, _, _, dst, _, _ = copy_parts(op)
            if scope(dst) == "global":  # the copy out reads L0C itself (Fixpipe)
                return
            values = [src, dst]
        else:
            values = list(op.operands) + [v for child in walk(op) for v in child.operands]
        for value in values:
            if value not in self.mirrors or self.buffers[value] is self.mirrors[value]:
                continue
            buffer, mirror = self.buffers[value], self.mirrors[value]
            rows, columns = buffer.shape
            offset = self.workspace[value]
            self.line(f"{buffer.name}_que.EnQue({buffer.name});  // L0C -> GM -> UB: the "
                      "vector unit reads it")
            self.line(f"{buffer.name} = {buffer.name}_que.DeQue<float>();")
            self.line(f"Fixpipe(ws[{offset}], {buffer.name}, FixpipeParamsV220{{{columns}, "
                      f"{rows}, {_round16(rows)}, {columns}}});")
            self.line("SetFlag<HardEvent::FIX_MTE2>(EVENT_ID0);")
            self.line("WaitFlag<HardEvent::FIX_MTE2>(EVENT_ID0);")
            self.line(f"DataCopy({mirror.name}, ws[{offset}], {mirror.count});")
            self.pipe = "MTE2"
            self.buffers[value] = mirror

    def is_variable(self, memref: ir.Value) -> bool:
        return memref in self.buffers and self.buffers[memref].position == "SCALAR"

    def scf_while(self, op: ir.Operation) -> None:
        """A loop without carried values (T.alloc_var holds what changes): the before region
        computes the condition, the after region is the body."""
        if len(op.results) or len(op.operands):
            raise op_error(op, "the ascend target takes while loops without carried values")
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        self.line("while (true) {")
        self.indent += 1
        for child in before.operations:
            child = as_operation(child)
            if child.name == "scf.condition":
                self.line(f"if (!({self.value(child.operands[0])})) break;")
            else:
                self.statement(child)
        self.block(after)
        self.indent -= 1
        self.line("}")

    def scf_if(self, op: ir.Operation) -> None:
        if len(op.results):
            raise op_error(op, "the ascend target takes scf.if without results")
        self.line(f"if ({self.value(op.operands[0])}) {{")
        self.nested(op.regions[0].blocks[0])
        if op.regions[1].blocks:
            self.line("} else {")
            self.nested(op.regions[1].blocks[0])
        self.line("}")

    def nested(self, block: ir.Block) -> None:
        self.indent += 1
        self.block(block)
        self.indent -= 1

    # -- structure ----------------------------------------------------------------------

    def kernel(self, op: ir.Operation) -> None:
        grid = [self.value(v) for v in op.operands]
        block = op.regions[0].blocks[0]
        self.line("const int64_t block = GetBlockIdx();")
        stride = "1"
        for axis, (argument, size) in enumerate(zip(block.arguments, grid, strict=True)):
            index = f"b{'xyz'[axis]}"
            rest = f"block / ({stride})" if stride != "1" else "block"
            self.line(f"const int64_t {index} = {rest} % ({size});")
            self.names[argument] = index
            stride = size if stride == "1" else f"{stride} * {size}"
        self.block(block)

    def loop(self, op: ir.Operation) -> None:
        lower, upper, step = (self.value(v) for v in list(op.operands)[:3])
        index = self.fresh("i")
        body = op.regions[0].blocks[0]
        self.names[body.arguments[0]] = index
        self.all_pipes()
        self.line(f"for (int64_t {index} = {lower}; {index} < {upper}; {index} += {step}) {{")
        self.indent += 1
        self.block(body)
        self.all_pipes()
        self.indent -= 1
        self.line("}")

    def alloc(self, op: ir.Operation) -> None:
        if POSITION_ATTR not in op.attributes:
            raise op_error(op, "the ascend emitter needs place-ascend-buffers to run first")
        type_ = ir.MemRefType(op.result.type)
        position = ir.StringAttr(op.attributes[POSITION_ATTR]).value
        buffer = Buffer(self.fresh("t"), position, c_type(type_.element_type), list(type_.shape))
        if position in ("A1", "B1"):
            buffer.depth = max(1, max((ir.IntegerAttr(parent.attributes["num_stages"]).value
                                       for parent in _pipelined_users(op)), default=1))
        self.buffers[op.result] = buffer
        if position == "FIX":  # the Fixpipe converts the accumulator: no memory of its own
            return
        if position == "SCALAR":
            self.declarations.append(f"{buffer.element} {buffer.name}[{buffer.count}] = {{}};")
            return
        self.used[MEMORIES[position]] += buffer.depth * buffer.count * _bytes(buffer.element)
        bytes_ = f"{buffer.count} * sizeof({buffer.element})"
        if position == "VECCALC":
            self.declarations += [f"TBuf<TPosition::VECCALC> {buffer.name}_buf;",
                                  f"pipe.InitBuffer({buffer.name}_buf, {bytes_});",
                                  f"LocalTensor<{buffer.element}> {buffer.name} = "
                                  f"{buffer.name}_buf.Get<{buffer.element}>();"]
            return
        self.declarations += [f"TQue<TPosition::{position}, {buffer.depth}> {buffer.name}_que;",
                              f"pipe.InitBuffer({buffer.name}_que, {buffer.depth}, {bytes_});"]
        if op.result in self.workspace:
            if buffer.element != "float":
                raise op_error(op, "the ascend target moves f32 accumulators to UB")
            mirror = Buffer(f"{buffer.name}_ub", "VECCALC", buffer.element, buffer.shape)
            self.mirrors[op.result] = mirror
            self.used["UB"] += mirror.count * _bytes(mirror.element)
            self.declarations += [f"TBuf<TPosition::VECCALC> {mirror.name}_buf;",
                                  f"pipe.InitBuffer({mirror.name}_buf, {bytes_});",
                                  f"LocalTensor<float> {mirror.name} = "
                                  f"{mirror.name}_buf.Get<float>();"]
        if position == "CO1":
            flag = f"{buffer.name}_init"
            self.accumulators[buffer.name] = flag
            self.declarations += [f"LocalTensor<{buffer.element}> {buffer.name} = "
                                  f"{buffer.name}_que.AllocTensor<{buffer.element}>();",
                                  f"bool {flag} = false;  // Mmad overwrites L0C while set"]

    def fill(self, op: ir.Operation) -> None:
        buffer = self.buffers.get(op.operands[0])
        if buffer is None:
            raise op_error(op, "the ascend target fills tile buffers only")
        value = self.value(op.operands[1])
        if buffer.position == "CO1":
            if value not in ("0.0f", "0", "0.0"):
                raise op_error(op, "an Ascend gemm accumulator starts from zero (Mmad's "
                                   "initializing step): T.clear or T.fill with 0")
            self.line(f"{self.accumulators[buffer.name]} = true;")
            return
        self.on_pipe("V")
        self.line(f"Duplicate({buffer.name}, static_cast<{buffer.element}>({value}), "
                  f"{buffer.count});")

    def copy(self, op: ir.Operation) -> None:
        src, src_offsets, src_shape, dst, dst_offsets, dst_shape = copy_parts(op)
        source, target = self.buffers.get(src), self.buffers.get(dst)
        if source is None and target is not None and target.position in ("A1", "B1"):
            self.copy_to_l1(op, src, src_offsets, target, src_shape)
        elif source is not None and source.position in ("CO1", "FIX") and target is None:
            accumulator = source if source.position == "CO1" else self.converted[src]
            self.fixpipe(op, accumulator, dst, dst_offsets, dst_shape)
        elif (source is not None and target is not None and source.position == target.position
              == "VECCALC" and src_shape == source.shape == target.shape == dst_shape):
            self.on_pipe("V")
            self.line(f"DataCopy({target.name}, {source.name}, {source.count});")
        elif (source is None) != (target is None) and (source or target).position == "VECCALC":
            local, shape = (target, dst_shape) if source is None else (source, src_shape)
            memref, offsets = (src, src_offsets) if source is None else (dst, dst_offsets)
            self.copy_ub(op, local, memref, offsets, shape, inbound=source is None)
        else:
            raise op_error(op, "the ascend target copies between global memory and a tile "
                               "buffer, and whole UB tiles")

    def _rows(self, op: ir.Operation, memref: ir.Value, shape: list[int],
              element: str) -> tuple[int, int, str]:
        """(rows, row elements, global row stride) of a copy of `shape` to / from `memref`."""
        if len(shape) == 1:
            return 1, shape[0], str(shape[0])
        if len(shape) != 2:
            raise op_error(op, "the ascend target copies 1-d and 2-d tiles")
        return shape[0], shape[1], self.dim(memref, len(self.globals_[memref][1]) - 1)

    def copy_ub(self, op: ir.Operation, local: Buffer, memref: ir.Value, offsets: list,
                shape: list[int], inbound: bool) -> None:
        if scope(memref) != "global" or memref not in self.globals_:
            raise op_error(op, "the ascend target copies a UB tile from or to a kernel "
                               "parameter")
        start = self.linear(memref, [self.value(v) for v in offsets])
        rows, width, stride = self._rows(op, memref, shape, local.element)
        self.on_pipe("MTE2" if inbound else "MTE3")
        tensor = self.globals_[memref][0]
        ends = (f"{local.name}, {tensor}[{start}]" if inbound
                else f"{tensor}[{start}], {local.name}")
        if rows == 1:
            self.line(f"DataCopy({ends}, {width});")
            return
        block = f"sizeof({local.element})"
        gap = f"({stride} - {width}) * {block} / 32"
        self.line(f"DataCopy({ends}, DataCopyParams{{{rows}, static_cast<uint16_t>({width} * "
                  f"{block} / 32), static_cast<uint16_t>({gap if inbound else 0}), "
                  f"static_cast<uint16_t>({0 if inbound else gap})}});")

    def copy_to_l1(self, op: ir.Operation, memref: ir.Value, offsets: list, buffer: Buffer,
                   shape: list[int]) -> None:
        if len(shape) != 2 or memref not in self.globals_:
            raise op_error(op, "the ascend target loads 2-d gemm operands from a kernel "
                               "parameter")
        start = self.linear(memref, [self.value(v) for v in offsets])
        stride = self.dim(memref, 1)
        tensor = self.globals_[memref][0]
        self.line("{  // GM -> L1, ND to the cube's NZ fractals")
        self.line(f"  LocalTensor<{buffer.element}> staged = "
                  f"{buffer.name}_que.AllocTensor<{buffer.element}>();")
        self.line(f"  DataCopy(staged, {tensor}[{start}], Nd2NzParams{{1, {shape[0]}, "
                  f"{shape[1]}, 0, static_cast<uint16_t>({stride}), {_round16(shape[0])}, 1, "
                  f"0}});")
        self.line(f"  {buffer.name}_que.EnQue(staged);")
        self.line("}")
        self.pipe = None

    def fixpipe(self, op: ir.Operation, buffer: Buffer, memref: ir.Value, offsets: list,
                shape: list[int]) -> None:
        if len(shape) != 2 or memref not in self.globals_:
            raise op_error(op, "the ascend target writes a 2-d accumulator to a kernel "
                               "parameter")
        start = self.linear(memref, [self.value(v) for v in offsets])
        tensor = self.globals_[memref][0]
        self.line(f"{buffer.name}_que.EnQue({buffer.name});  // L0C -> GM after the cube")
        self.line(f"{buffer.name} = {buffer.name}_que.DeQue<{buffer.element}>();")
        self.line(f"Fixpipe({tensor}[{start}], {buffer.name}, FixpipeParamsV220{{{shape[1]}, "
                  f"{shape[0]}, {_round16(shape[0])}, static_cast<uint32_t>("
                  f"{self.dim(memref, 1)})}});")
        self.pipe = None

    def gemm(self, op: ir.Operation) -> None:
        a, b, c = (self.buffers.get(v) for v in list(op.operands)[:3])
        if a is None or b is None or c is None or c.position != "CO1":
            raise op_error(op, "the ascend target multiplies L1 operands into an L0C "
                               "accumulator (tile buffers from T.alloc_shared / "
                               "T.alloc_fragment)")
        transpose_a, transpose_b = (ir.BoolAttr(op.attributes[name]).value
                                    for name in ("transpose_a", "transpose_b"))
        m, k = reversed(a.shape) if transpose_a else a.shape
        n = b.shape[0] if transpose_b else b.shape[1]
        flag = self.accumulators[c.name]
        if "clear_accum" in op.attributes and ir.BoolAttr(op.attributes["clear_accum"]).value:
            self.line(f"{flag} = true;")
        self.line(f"{{  // Cube: L1 -> L0A / L0B, Mmad into L0C ({m} x {n} x {k})")
        self.indent += 1
        # L0A takes A's fractals as they lie in L1 and L0B B's transposed; an operand stored
        # transposed flips its load
        for operand, position, (rows, columns), transpose in (
                (a, "A2", a.shape, "true" if transpose_a else "false"),
                (b, "B2", b.shape, "false" if transpose_b else "true")):
            fractals = _round16(rows) // 16 * max(1, columns * _bytes(operand.element) // 32)
            self.line(f"LocalTensor<{operand.element}> {operand.name}_l1 = "
                      f"{operand.name}_que.DeQue<{operand.element}>();")
            self.line(f"LocalTensor<{operand.element}> {operand.name}_l0 = "
                      f"{operand.name}_{position}.AllocTensor<{operand.element}>();")
            self.line(f"LoadData({operand.name}_l0, {operand.name}_l1, LoadData2DParams{{0, "
                      f"{min(fractals, 255)}, 1, 0, 0, {transpose}, 0}});")
            self.line(f"{operand.name}_{position}.EnQue({operand.name}_l0);")
            self.line(f"{operand.name}_que.FreeTensor({operand.name}_l1);")
            self.used[MEMORIES[position]] += rows * columns * _bytes(operand.element)
            self.declarations += [
                f"TQue<TPosition::{position}, 1> {operand.name}_{position};",
                f"pipe.InitBuffer({operand.name}_{position}, 1, {rows * columns} * "
                f"sizeof({operand.element}));"]
        self.line(f"LocalTensor<{a.element}> a0 = {a.name}_A2.DeQue<{a.element}>();")
        self.line(f"LocalTensor<{b.element}> b0 = {b.name}_B2.DeQue<{b.element}>();")
        self.line(f"Mmad({c.name}, a0, b0, MmadParams{{{m}, {n}, {k}, {flag}}});")
        self.line(f"{flag} = false;")
        self.line(f"{a.name}_A2.FreeTensor(a0);")
        self.line(f"{b.name}_B2.FreeTensor(b0);")
        self.indent -= 1
        self.line("}")
        self.pipe = None

    def reduce(self, op: ir.Operation) -> None:
        source, target = self.buffers.get(op.operands[0]), self.buffers.get(op.operands[1])
        kind = ir.StringAttr(op.attributes["kind"]).value
        dim = ir.IntegerAttr(op.attributes["dim"]).value
        if source is None or target is None or source.position != "VECCALC":
            raise op_error(op, "the ascend target reduces UB tile buffers")
        if dim != len(source.shape) - 1:
            self.scalar_reduce(source, target, kind, dim,
                               ir.BoolAttr(op.attributes["clear"]).value)
            return
        width = source.shape[-1]
        rows = source.count // width
        work = self.temporary(source.element, width)
        self.on_pipe("V")
        operand = source.name
        if kind.startswith("abs"):
            absolute = self.temporary(source.element, source.count)
            self.line(f"Abs({absolute}, {source.name}, {source.count});")
            self.line("PipeBarrier<PIPE_V>();")
            operand = absolute
        clear = ir.BoolAttr(op.attributes["clear"]).value
        result = target.name if clear else self.temporary(target.element, rows)
        row = self.fresh("r")
        self.line(f"for (int64_t {row} = 0; {row} < {rows}; ++{row}) {{")
        self.line(f"  {REDUCTIONS[kind]}({result}[{row}], {operand}[{row} * {width}], {work}, "
                  f"{width});")
        self.line("}")
        if not clear:  # combine with what the target holds
            combine = "Add" if kind.endswith("sum") else ("Max" if kind.endswith("max")
                                                           else "Min")
            self.line("PipeBarrier<PIPE_V>();")
            self.line(f"{combine}({target.name}, {target.name}, {result}, {rows});")

    def scalar_reduce(self, source: Buffer, target: Buffer, kind: str, dim: int,
                      clear: bool) -> None:
        """A reduction along a leading dimension, on the scalar unit (the vector reductions
        run along contiguous rows)."""
        self.on_pipe("S")
        outer = math.prod(source.shape[:dim])
        extent = source.shape[dim]
        inner = math.prod(source.shape[dim + 1:])
        o, i, r = self.fresh("o"), self.fresh("i"), self.fresh("r")
        element = source.element
        def element_at(row: str) -> str:
            value = f"static_cast<float>({source.name}.GetValue(({o} * {extent} + {row}) * " \
                    f"{inner} + {i}))"
            return f"fabsf({value})" if kind.startswith("abs") else value

        combine = {"sum": "acc + x", "abssum": "acc + x", "max": "fmaxf(acc, x)",
                   "absmax": "fmaxf(acc, x)", "min": "fminf(acc, x)", "umax": "fmaxf(acc, x)",
                   "umin": "fminf(acc, x)"}[kind]
        self.line(f"for (int64_t {o} = 0; {o} < {outer}; ++{o}) {{")
        self.line(f"  for (int64_t {i} = 0; {i} < {inner}; ++{i}) {{")
        start = "0.0f" if kind.endswith("sum") else element_at("0")
        if not clear:
            start = f"static_cast<float>({target.name}.GetValue({o} * {inner} + {i}))"
        self.line(f"    float acc = {start};")
        self.line(f"    for (int64_t {r} = 0; {r} < {extent}; ++{r}) {{")
        self.line(f"      const float x = {element_at(r)};")
        self.line(f"      acc = {combine};")
        self.line("    }")
        self.line(f"    {target.name}.SetValue({o} * {inner} + {i}, static_cast<{element}>(acc));")
        self.line("  }")
        self.line("}")

    def temporary(self, element: str, count: int) -> str:
        self.used["UB"] += count * _bytes(element)
        name = self.fresh("tmp")
        self.declarations += [f"TBuf<TPosition::VECCALC> {name}_buf;",
                              f"pipe.InitBuffer({name}_buf, {count} * sizeof({element}));",
                              f"LocalTensor<{element}> {name} = {name}_buf.Get<{element}>();"]
        return name

    def parallel(self, op: ir.Operation) -> None:
        if FIXPIPE_ATTR in op.attributes:  # F = convert(C): the Fixpipe out of L0C does it
            body = [as_operation(child) for child in op.regions[0].blocks[0].operations]
            self.converted[body[-2].operands[1]] = self.buffers[body[0].operands[0]]
            return
        extents = list(ir.DenseI64ArrayAttr(op.attributes["extents"]))
        body = op.regions[0].blocks[0]
        if not self.vectorized(op, body, extents):
            self.scalar_loops(body, extents)

    def scalar_loops(self, body: ir.Block, extents: list[int]) -> None:
        self.on_pipe("S")
        for argument, extent in zip(body.arguments, extents, strict=True):
            index = self.fresh("j")
            self.names[argument] = index
            self.line(f"for (int64_t {index} = 0; {index} < {extent}; ++{index}) {{")
            self.indent += 1
        for child in body.operations:
            child = as_operation(child)
            if child.name not in ("tile.yield", "arith.constant"):  # constants: inline
                self.scalar(child)
        for _ in extents:
            self.indent -= 1
            self.line("}")

    def vectorized(self, op: ir.Operation, body: ir.Block, extents: list[int]) -> bool:
        """The body as whole-tile vector instructions, where every access is the element the
        point names in a UB buffer of the loop's shape; False (nothing emitted) otherwise."""
        arguments = list(body.arguments)
        count = math.prod(extents)
        plan: list[tuple[str, ir.Operation]] = []
        tiles: dict = {}  # body value -> UB tensor name, or None for a scalar operand
        for child in body.operations:
            child = as_operation(child)
            name = child.name
            if name == "tile.yield":
                continue
            if name in ("memref.load", "memref.store"):
                memref = child.operands[0 if name == "memref.load" else 1]
                indices = list(child.operands)[1 if name == "memref.load" else 2:]
                buffer = self.buffers.get(memref)
                if (buffer is None or buffer.position != "VECCALC" or buffer.shape != extents
                        or indices != arguments):
                    return False
                if name == "memref.load":
                    tiles[child.result] = buffer.name
                plan.append((name, child))
            elif name == "arith.constant":
                if not isinstance(child.attributes["value"], ir.FloatAttr):
                    return False
            elif name in VECTOR_BINARY or name in VECTOR_UNARY or name in (
                    "arith.extf", "arith.truncf", "arith.negf"):
                plan.append((name, child))
            else:
                return False
        if not _vector_plan_holds(plan, tiles, body):
            return False
        stored = {child.operands[0]: self.buffers[child.operands[1]].name
                  for name, child in plan if name == "memref.store"}
        self.on_pipe("V")
        first = True
        for name, child in plan:
            if name in ("memref.load",):
                continue
            if name == "memref.store":
                value = child.operands[0]
                if tiles.get(value) != stored[value]:
                    target = stored[value]
                    if tiles.get(value) is None:
                        return self._unvectorizable(op)
                    self._vector_barrier(first)
                    first = False
                    self.line(f"Adds({target}, {tiles[value]}, "
                              f"static_cast<{self._element(value)}>(0), {count});")
                continue
            result = child.result
            element = c_type(result.type)
            target = stored.get(result) or self.temporary(element, count)
            tiles[result] = target
            self._vector_barrier(first)
            first = False
            operands = list(child.operands)
            tile_operands = [tiles.get(v) for v in operands]
            if name in ("arith.extf", "arith.truncf"):
                mode = "CAST_NONE" if name == "arith.extf" else "CAST_ROUND"
                self.line(f"Cast({target}, {tile_operands[0]}, RoundMode::{mode}, {count});")
            elif name == "arith.negf":
                self.line(f"Muls({target}, {tile_operands[0]}, static_cast<{element}>(-1), "
                          f"{count});")
            elif name in VECTOR_UNARY:
                self.line(f"{VECTOR_UNARY[name]}({target}, {tile_operands[0]}, {count});")
            elif all(tile_operands):
                self.line(f"{VECTOR_BINARY[name]}({target}, {tile_operands[0]}, "
                          f"{tile_operands[1]}, {count});")
            else:
                self.vector_scalar(child, name, target, operands, tile_operands, element,
                                   count)
        return True

    def _unvectorizable(self, op: ir.Operation) -> bool:
        raise op_error(op, "the ascend target stores a T.Parallel value it cannot place")

    def _vector_barrier(self, first: bool) -> None:
        if not first:
            self.line("PipeBarrier<PIPE_V>();")

    def _element(self, value: ir.Value) -> str:
        return c_type(value.type)

    def vector_scalar(self, op: ir.Operation, name: str, target: str, operands: list,
                      tiles: list, element: str, count: int) -> None:
        """A tile with a scalar: Adds / Muls / Maxs / Mins (x - s as x + -s, x / s as x * 1/s)."""
        tile_side = 0 if tiles[0] else 1
        tile, raw = tiles[tile_side], self.value(operands[1 - tile_side])
        scalar = f"static_cast<{element}>({raw})"
        if name == "arith.subf" and tile_side == 0:
            self.line(f"Adds({target}, {tile}, static_cast<{element}>(-({raw})), {count});")
        elif name == "arith.divf" and tile_side == 0:
            self.line(f"Muls({target}, {tile}, static_cast<{element}>(1.0f / ({raw})), "
                      f"{count});")
        elif name in VECTOR_SCALAR:
            self.line(f"{VECTOR_SCALAR[name]}({target}, {tile}, {scalar}, {count});")
        elif name == "arith.subf":  # s - x
            self.line(f"Muls({target}, {tile}, static_cast<{element}>(-1), {count});")
            self.line("PipeBarrier<PIPE_V>();")
            self.line(f"Adds({target}, {target}, {scalar}, {count});")
        else:
            raise op_error(op, f"the ascend target divides a scalar by a tile ({name})")


def _vector_plan_holds(plan: list[tuple[str, ir.Operation]], tiles: dict,
                       body: ir.Block) -> bool:
    """Whether whole-tile instructions in body order compute what the per-point body does:
    every computed value has a tile operand and its other operands are scalars from outside
    the body (or constants), each value is stored once, and no buffer is written (a value
    goes straight into the buffer it is stored to) while a load of it still has a use."""
    inside = {as_operation(child).result for child in body.operations
              if len(as_operation(child).results) == 1}
    known = set(tiles)
    position = {}
    for number, (name, child) in enumerate(plan):
        if name == "memref.load":
            continue
        if name == "memref.store":
            if child.operands[0] not in known:
                return False
            continue
        operands = list(child.operands)
        if not any(v in known for v in operands):
            return False
        for operand in operands:
            if operand in known:
                continue
            owner = operand.owner
            constant = not isinstance(owner, ir.Block) and as_operation(owner).name == (
                "arith.constant")
            if operand in list(body.arguments) or (operand in inside and not constant):
                return False
        known.add(child.result)
        position[child.result] = number
    stores = [child for name, child in plan if name == "memref.store"]
    if len({child.operands[0] for child in stores}) != len(stores):
        return False
    for store in stores:
        value, buffer = store.operands[0], store.operands[1]
        written = position.get(value, plan.index(("memref.store", store)))
        for name, child in plan:
            if name != "memref.load" or child.operands[0] != buffer:
                continue
            for use in child.result.uses:
                user = as_operation(use.owner)
                last = next((n for n, (_, c) in enumerate(plan) if c == user), None)
                if last is not None and last > written:
                    return False
    return True


def _round16(extent: int) -> int:
    return (extent + 15) // 16 * 16


def _bytes(element: str) -> int:
    return {"half": 2, "bfloat16_t": 2, "float": 4, "int8_t": 1, "int32_t": 4}.get(element, 4)


def _pipelined_users(alloc: ir.Operation) -> list[ir.Operation]:
    """The tile.pipelined loops around the copies into `alloc`."""
    loops = []
    for use in alloc.result.uses:
        parent = as_operation(use.owner).parent
        while parent is not None and parent.name != "func.func":
            if parent.name == "tile.pipelined":
                loops.append(as_operation(parent))
            parent = parent.parent
    return loops


STATEMENTS = {
    "tile.kernel": Emitter.kernel,
    "tile.alloc": Emitter.alloc,
    "tile.fill": Emitter.fill,
    "tile.copy": Emitter.copy,
    "tile.gemm": Emitter.gemm,
    "tile.reduce": Emitter.reduce,
    "tile.parallel": Emitter.parallel,
    "tile.pipelined": Emitter.loop,
    "tile.for": Emitter.loop,
    "scf.for": Emitter.loop,
}


def chip_of(options: CompileOptions) -> str:
    chip = options.arch or os.environ.get("TILEC_ASCEND_CHIP", "") or DEFAULT_ASCEND_CHIP
    if chip not in ASCEND_DESCRIPTIONS:
        raise CompileError(f"unsupported Ascend chip '{chip}' (supported: "
                           f"{', '.join(ASCEND_DESCRIPTIONS)})")
    return chip


def _tile_ascend(module: ir.Module, options: CompileOptions) -> None:
    run_pass_pipeline(module, "canonicalize,cse", options)
    checks = ("check-parallel-updates", "check-scalar-stores", "check-static-indices")
    tile_passes("tile-ascend", (*checks, "place-ascend-buffers")).run(module, options)


def emit_source(module: ir.Module, options: CompileOptions) -> str:
    """The module's entry function as one AscendC source file."""
    description = ASCEND_DESCRIPTIONS[chip_of(options)]
    abi = kernel_abi(module)
    options.extra["abi"] = abi
    entry = next(as_operation(op) for op in module.body.operations
                 if as_operation(op).name == "func.func"
                 and "tile.entry" in as_operation(op).attributes)
    name = ir.StringAttr(entry.attributes["sym_name"]).value
    emitter = Emitter()
    text = emitter.entry(entry, ENTRY_PREFIX + name, abi)
    capacities = {"UB": description.ub_bytes, "L1": description.l1_bytes,
                  "L0A": description.l0a_bytes, "L0B": description.l0b_bytes,
                  "L0C": description.l0c_bytes}
    options.extra["workspace_elements"] = emitter.workspace_elements
    for memory, used in emitter.used.items():
        if used > capacities[memory]:
            raise CompileError(f"kernel '{name}' keeps {used} bytes in {memory}; an AI core of "
                               f"the {description.name} has {capacities[memory]}")
    return (f"// AscendC source emitted by tilec's ascend target for {description.name}\n"
            '#include "kernel_operator.h"\nusing namespace AscendC;\n\n' + text + "\n")


def stages(options: CompileOptions) -> list[Stage]:
    chip_of(options)
    if options.bounds_check:  # asked for checks, it would get none
        raise CompileError("the checked mode (pass config tilec.bounds_check) is supported on "
                           "the cpu, cuda and hip targets, not ascend")
    return [
        Stage("tile-ascend", _tile_ascend, "canonicalize, cse, place-ascend-buffers"),
        Stage("ascendc", emit_source, "AscendC C++ source"),
    ]


def finish(product: str, options: CompileOptions, kernel_name: str) -> tuple[bytes, str, dict]:
    """The source as the artifact's binary (kind "ascendc": nothing here runs it)."""
    if not isinstance(product, str):
        raise CompileError("the ascend target finishes after its 'ascendc' stage")
    launch = {"abi": options.extra.get("abi", []), "abi_version": ABI,
              "entry": ENTRY_PREFIX + kernel_name,
              "workspace_elements": options.extra.get("workspace_elements", 0),
              "chip": chip_of(options)}
    return product.encode(), "ascendc", launch


def check_source(source: str, compiler: str | None = None) -> None:
    """Compiles emitted AscendC source with the host C++ compiler against
    ascend_include/kernel_operator.h (syntax and types); a CompileError with its messages."""
    compiler = compiler or shutil.which(os.environ.get("CXX", "") or "c++") or shutil.which("g++")
    if compiler is None:
        raise CompileError("checking AscendC source needs a host C++ compiler (c++, g++)")
    with tempfile.TemporaryDirectory(prefix="tilec-ascend-") as directory:
        path = os.path.join(directory, "kernel.cpp")
        Path(path).write_text(source)
        done = subprocess.run([compiler, "-std=c++17", "-fsyntax-only", "-Wall", "-Werror",
                               "-Wno-unused-variable", "-Wno-unused-but-set-variable",
                               f"-I{INCLUDE_DIR}", path], capture_output=True, text=True)
    if done.returncode != 0:
        raise CompileError(f"the AscendC source does not compile:\n{done.stderr}")
