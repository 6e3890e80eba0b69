"""TileLang's `tilelang.tools.Analyzer`: a kernel's FLOPs, global-memory bytes and roofline time,
counted from its tile IR.

`Analyzer.analysis(kernel_ir, device)` takes what `jit_function.get_tir(...)` returns (the
frontend's tile module), a compiled kernel, or a module, and a `tilec.carver.arch.CUDA`
device. As TileLang's analyzer counts: every `T.gemm` is 2·M·N·K FLOPs, every `T.copy` with a
global side moves its box's bytes, each times the trips of the loops around it and the blocks
of the grid. tilec also counts the global loads and stores of `T.Parallel` bodies (what
`T.im2col` and element-wise epilogues read and write) once per point. Branches count as
taken. Sizes must be known at compile time.

The roofline: the time is the larger of FLOPs over the tensor-core peak (for the gemms'
operand type: 16-bit, twice that for 8-bit, half for 32-bit as tf32) and bytes over the DRAM
bandwidth, both of the chip's reference part (`PEAKS`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilec.errors import TilecError


@dataclass(frozen=True)
class ChipPeak:
    """What the roofline needs beyond carver's per-SM figures: the clock the tensor-core peak
    is quoted at and the DRAM bandwidth of the reference part."""

    part: str
    clock_hz: float
    dram_bytes_per_second: float


# NVIDIA's datasheets: H200 SXM 4.8 TB/s (the project's GPU; H100 SXM has 3.35), A100 SXM 80 GB
# 2.039 TB/s; 989 / 312 dense 16-bit TFLOP/s at 1.83 / 1.41 GHz (carver.arch's per-clock rates)
_H200 = ChipPeak("NVIDIA H200 SXM", 1.83e9, 4.8e12)
PEAKS = {"sm_90a": _H200, "sm_90": _H200, "sm_80": ChipPeak("NVIDIA A100 SXM 80GB", 1.41e9,
                                                            2.039e12)}


@dataclass(frozen=True)
class AnalysisResult:
    """TileLang's fields: FLOPs and global bytes of the whole grid, the roofline time (s), the
    peak TFLOP/s it assumed (None without a gemm) and the DRAM bandwidth in GB/s."""

    total_flops: int
    total_global_bytes: int
    estimated_time: float
    expected_tflops: float | None
    expected_bandwidth_GBps: float


def _element_bits(type_: Any) -> int:
    """The bits of a memref type's element (index counts as 64)."""
    from mlir import ir

    element = ir.MemRefType(type_).element_type
    if isinstance(element, ir.IndexType):
        return 64
    if isinstance(element, ir.IntegerType):
        return ir.IntegerType(element).width
    return ir.FloatType(element).width


def _element_bytes(type_: Any) -> int:
    return max(1, _element_bits(type_) // 8)


class Analyzer:
    """Walks a tile module and adds up what its ops do (TileLang's analyzer, over tile IR)."""

    def __init__(self, fn: Any, device: Any):
        self.module = _tile_module(fn)
        self.device = device
        self.total_flops = 0
        self.total_global_bytes = 0
        self.gemm_flops_by_bits: dict[int, int] = {}

    # ----- counting -----------------------------------------------------------------------
    def _trips(self, op: Any) -> int:
        from tilec.compiler.passes._ir_walk import constant_index, op_error

        bounds = [constant_index(value) for value in list(op.operands)[:3]]
        if any(bound is None for bound in bounds):
            raise op_error(op, "Analyzer: a loop of run-time length (its trips must be known "
                               "at compile time)")
        lower, upper, step = bounds
        return max(0, -(-(upper - lower) // step))

    def _walk(self, op: Any, times: int, points: int) -> None:
        """Counts the ops under `op`, each run `times` times, `points` per T.Parallel point."""
        from mlir import ir

        from tilec.compiler.passes._ir_walk import as_operation, copy_parts, op_error, scope

        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    child = as_operation(child)
                    name = child.name
                    if name in ("tile.pipelined", "tile.for", "scf.for"):
                        self._walk(child, times * self._trips(child), points)
                    elif name == "tile.parallel":
                        extents = ir.DenseI64ArrayAttr(child.attributes["extents"])
                        count = 1
                        for extent in extents:
                            count *= extent
                        self._walk(child, times, points * count)
                    elif name == "scf.while":
                        raise op_error(child, "Analyzer: a while loop has no trip count known "
                                              "at compile time")
                    elif name == "tile.gemm":
                        self._gemm(child, times * points)
                    elif name == "tile.copy":
                        src, _, src_shape, dst, _, dst_shape = copy_parts(child)
                        for value, shape in ((src, src_shape), (dst, dst_shape)):
                            if scope(value) == "global":
                                size = 1
                                for extent in shape:
                                    size *= extent
                                self.total_global_bytes += (size * _element_bytes(value.type)
                                                            * times * points)
                    elif name in ("memref.load", "memref.store", "vector.load",
                                  "vector.store"):
                        memref = child.operands[0 if "load" in name else 1]
                        if isinstance(memref.type, ir.MemRefType) and scope(memref) == "global":
                            lanes = 1
                            result = child.results[0].type if "load" in name else \
                                child.operands[0].type
                            if isinstance(result, ir.VectorType):
                                lanes = ir.ShapedType(result).get_dim_size(0)
                            self.total_global_bytes += (_element_bytes(memref.type) * lanes
                                                        * times * points)
                    else:
                        self._walk(child, times, points)

    def _gemm(self, op: Any, times: int) -> None:
        from mlir import ir

        a, _, c = list(op.operands)[:3]
        a_shape = ir.MemRefType(a.type).shape
        c_shape = ir.MemRefType(c.type).shape
        transpose_a = "transpose_a" in op.attributes and ir.BoolAttr(
            op.attributes["transpose_a"]).value
        m, n = c_shape[-2], c_shape[-1]
        k = a_shape[-2] if transpose_a else a_shape[-1]
        flops = 2 * m * n * k * times
        bits = _element_bits(a.type)
        self.total_flops += flops
        self.gemm_flops_by_bits[bits] = self.gemm_flops_by_bits.get(bits, 0) + flops

    def ir_pass(self) -> Analyzer:
        """Counts every tile.kernel of the module (TileLang's name for the walk)."""
        from tilec.compiler.passes._ir_walk import constant_index, kernels, op_error

        with self.module.context:
            for kernel in kernels(self.module):
                blocks = 1
                for value in kernel.operands:
                    extent = constant_index(value)
                    if extent is None:
                        raise op_error(kernel, "Analyzer: a grid of run-time size (its blocks "
                                               "must be known at compile time)")
                    blocks *= extent
                self._walk(kernel, blocks, 1)
        return self

    # ----- the roofline -------------------------------------------------------------------
    def _peaks(self) -> tuple[ChipPeak, float]:
        """The chip's peak figures and its dense 16-bit tensor-core FLOP/s."""
        arch = getattr(self.device, "arch", None)
        figures = getattr(self.device, "sm_figures", None)
        if arch not in PEAKS or figures is None:
            raise TilecError(f"Analyzer: no peak figures for {self.device!r} (it knows "
                             f"{', '.join(PEAKS)}: pass tilec.carver.arch.CUDA('cuda:sm_90a'))")
        peak = PEAKS[arch]
        sms = self.device.compute_max_core
        return peak, figures.tensor_flops_per_clock * sms * peak.clock_hz

    def calculate(self) -> AnalysisResult:
        peak, flops_16 = self._peaks()
        compute_time = 0.0
        for bits, flops in self.gemm_flops_by_bits.items():
            compute_time += flops / (flops_16 * 16 / max(8, min(bits, 32)))
        memory_time = self.total_global_bytes / peak.dram_bytes_per_second
        main_bits = max(self.gemm_flops_by_bits, key=self.gemm_flops_by_bits.get, default=None)
        expected = None if main_bits is None else round(
            flops_16 * 16 / max(8, min(main_bits, 32)) / 1e12, 1)
        return AnalysisResult(
            total_flops=self.total_flops,
            total_global_bytes=self.total_global_bytes,
            estimated_time=max(compute_time, memory_time),
            expected_tflops=expected,
            expected_bandwidth_GBps=peak.dram_bytes_per_second / 1e9,
        )

    @classmethod
    def analysis(cls, fn: Any, device: Any) -> AnalysisResult:
        """Counts `fn` (tile IR, a kernel) and puts it on `device`'s roofline."""
        return cls(fn, device).ir_pass().calculate()


def _tile_module(fn: Any) -> Any:
    """A private copy of the kernel's tile IR, constants folded (grids and loop bounds)."""
    from mlir import ir

    from tilec.compiler.pipeline import CompileOptions, run_pass_pipeline
    from tilec.dialect import new_context

    if isinstance(fn, ir.Module):
        text, context = fn.operation.get_asm(enable_debug_info=True), fn.context
    elif hasattr(fn, "asm") and "tile" in getattr(fn, "asm", {}):  # a compiled JITKernel
        text, context = fn.asm["tile"], None
    elif hasattr(fn, "module") and isinstance(fn.module, ir.Module):  # a frontend result
        text, context = fn.module.operation.get_asm(enable_debug_info=True), fn.module.context
    else:
        raise TilecError(f"Analyzer takes a kernel's tile IR (jit_function.get_tir(...)) or a "
                         f"compiled kernel, not {type(fn).__name__}")
    module = ir.Module.parse(text, context=context or new_context())
    run_pass_pipeline(module, "canonicalize,cse", CompileOptions(target="analyze"))
    return module
