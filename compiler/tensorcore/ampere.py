"""sm_80 GEMM: C[M,N] = op(A) @ op(B), fp32 (int32 for int8) accumulation.

Operand types: f16/bf16 in any layout (A M x K or K x M, B K x N or N x K), s8 and tf32 K-major
only (A M x K, B N x K); output f16/bf16/f32 (s32 for s8). See `dtypes`.

The classic multistage tensor-core kernel:
- `stages` shared-memory slots filled by `cp.async.cg` 16-byte copies (src-size 0 zero-fills rows
  and columns past M, N, K), one commit group per K tile, `wait_group stages-2` + one barrier per
  iteration;
- XOR-swizzled shared tiles (16-byte chunk index XOR row bits), so `ldmatrix` (K-major tiles)
  and `ldmatrix.trans` (MN-major 16-bit tiles) are free of bank conflicts; in bytes every type
  has the same fragment layout (each MMA takes 32 bytes of K), so one addressing serves all;
- a warp grid over the CTA tile, `mma.sync` m16n8k16 (16-bit), m16n8k32 (s8) or m16n8k8 (tf32);
- an epilogue that converts the accumulators, stages the tile in padded shared memory and writes
  16-byte rows to global memory with bounds checks.
Kernel parameters: A, B, C as global pointers, M, N, K as i32 (rows 16-byte aligned).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilec.compiler.tensorcore.common import (
    GemmConfigBase,
    gemm_interface,
    gpu_module,
    store_output_pair,
)
from tilec.compiler.tensorcore.dtypes import K_STEP_BYTES, accumulator, check_types
from tilec.compiler.tensorcore.emitter import Emitter, KernelInterface

MMA_SHAPES = {"f16": "m16n8k16", "bf16": "m16n8k16", "s8": "m16n8k32", "tf32": "m16n8k8"}


@dataclass(frozen=True)
class AmpereGemmConfig(GemmConfigBase):
    """Tile shape, types, operand layouts, warp grid and pipeline depth of one kernel."""

    block_m: int = 128
    block_n: int = 128
    block_k: int = 32
    stages: int = 3
    warps_m: int = 2
    warps_n: int = 2
    dtype: str = "f16"
    group_m: int = 8
    out_dtype: str = ""  # "" = dtypes.default_output(dtype)
    trans_a: bool = False
    trans_b: bool = False

    def __post_init__(self) -> None:
        if self.dtype not in MMA_SHAPES:
            raise ValueError(f"mma.sync kernel does not support {self.dtype} operands")
        check_types(self.dtype, self.out, self.trans_a, self.trans_b)
        if self.k_bytes not in (32, 64, 128, 256):
            raise ValueError("block_k must span 32, 64, 128 or 256 bytes")
        if self.warp_m % 16 or self.warp_n % 16:
            raise ValueError("warp tiles must be multiples of 16 x 16")
        if (self.warp_m // 16) * (self.warp_n // 8) * 4 > 128:
            raise ValueError("accumulator would exceed 128 registers per thread")
        for rows, row_bytes in (self.a_tile, self.b_tile):
            chunks = row_bytes // 16
            if chunks < 2 or (chunks < 8 and chunks not in (2, 4)) or (chunks > 8 and chunks % 8):
                raise ValueError("unsupported tile width")
            if (rows * chunks) % self.threads:
                raise ValueError("tile chunks must divide evenly among threads")
        if (self.block_m * self.block_n * self.out_bytes // 16) % self.threads:
            raise ValueError("output chunks must divide evenly among threads")

    @property
    def name(self) -> str:
        return (
            f"gemm_sm80_{self.types_and_layout}_{self.block_m}x{self.block_n}x{self.block_k}"
            f"_s{self.stages}_w{self.warps_m}x{self.warps_n}"
        )

    @property
    def threads(self) -> int:
        return 32 * self.warps_m * self.warps_n

    @property
    def warp_m(self) -> int:
        return self.block_m // self.warps_m

    @property
    def warp_n(self) -> int:
        return self.block_n // self.warps_n

    @property
    def a_tile(self) -> tuple[int, int]:
        """(rows, row bytes) of A's shared tile: M x K, or K x M when transposed."""
        if self.trans_a:
            return self.block_k, self.block_m * self.elem_bytes
        return self.block_m, self.k_bytes

    @property
    def b_tile(self) -> tuple[int, int]:
        """(rows, row bytes) of B's shared tile: K x N, or N x K when transposed."""
        if self.trans_b:
            return self.block_n, self.k_bytes
        return self.block_k, self.block_n * self.elem_bytes

    @property
    def c_pitch(self) -> int:
        """Row pitch of the staged C tile: 16 bytes of padding keep its stores conflict free."""
        return self.block_n * self.out_bytes + 16

    @property
    def smem_bytes(self) -> int:
        ring = self.stages * (self.a_stage_bytes + self.b_stage_bytes)
        return max(ring, self.block_m * self.c_pitch)

    def launch(self) -> dict:
        return {**self.block_launch(self.threads, self.smem_bytes), "persistent": False}


@dataclass
class _Operand:
    """One operand's cp.async jobs and ldmatrix addressing (see _Kernel.operand)."""

    pointer: str  # i64 global base
    ring: str  # shared address of slot 0
    stage_bytes: int
    jobs: list[tuple[str, str, str, str]]  # (source, in-bounds, K position, shared offset)
    k_unit_bytes: str | int  # global bytes per unit of K
    k_major: bool
    row_bytes: int
    offsets: list[str]  # ldmatrix offsets, per K step (K-major) or per fragment (MN-major)


class _Kernel:
    def __init__(self, cfg: AmpereGemmConfig, interface: KernelInterface) -> None:
        self.cfg = cfg
        self.interface = interface
        self.e = Emitter()

    def swizzle_xor(self, row: str, chunks_per_row: int) -> str:
        """Run-time XOR for `row`: 8 consecutive rows read by one ldmatrix hit 8 bank groups."""
        e = self.e
        if chunks_per_row >= 8:
            return e.arith("remui", row, e.const(8))
        return e.arith(
            "remui", e.arith("divui", row, e.const(8 // chunks_per_row)), e.const(chunks_per_row)
        )

    def i32(self, value: str) -> str:
        return self.e.cast(value, "index", "i32")

    def i64(self, value: str) -> str:
        return self.e.cast(value, "index", "i64")

    def operand(
        self,
        pointer: str,
        ring: str,
        stage_bytes: int,
        tile: tuple[int, int],
        k_major: bool,
        origin: str,
        bound: str,
        leading: str,
        warp_origin: str,
        fragments: int,
        is_a: bool,
    ) -> _Operand:
        """cp.async jobs of one operand's tile and its per-lane ldmatrix offsets.

        A K-major tile has MN rows of K bytes (ldmatrix), an MN-major one K rows of MN
        elements (ldmatrix.trans). Lanes address the four 8x8 matrices of an x4 load in the
        order the MMA fragments want: A as (rows 0-7, 8-15) x (K 0-15 B, 16-31 B), B as
        (K 0-15 B, 16-31 B) x (N 0-7, 8-15); the K-major A and MN-major B orders are one
        lane mapping, the other two the other.
        """
        cfg, e = self.cfg, self.e
        ci = e.const
        rows, row_bytes = tile
        chunks_per_row = row_bytes // 16
        per_chunk = 16 // cfg.elem_bytes
        jobs = []
        for i in range(rows * chunks_per_row // cfg.threads):
            q = e.add(self.tid, i * cfg.threads)
            row = e.arith("divui", q, ci(chunks_per_row))
            chunk = e.arith("remui", q, ci(chunks_per_row))
            if k_major:
                global_row, global_col = e.arith("addi", origin, row), e.mul(chunk, per_chunk)
                in_bounds, k_position = e.cmp("ult", global_row, bound), global_col
            else:
                global_row = row
                global_col = e.arith("addi", origin, e.mul(chunk, per_chunk))
                in_bounds, k_position = e.cmp("ult", global_col, bound), row
            element = e.arith("addi", e.arith("muli", global_row, leading), global_col)
            source = e.arith("addi", pointer, self.i64(e.mul(element, cfg.elem_bytes)), "i64")
            physical = e.arith("xori", chunk, self.swizzle_xor(row, chunks_per_row))
            shared = e.arith("addi", e.mul(row, row_bytes), e.mul(physical, 16))
            jobs.append((source, in_bounds, k_position, shared))
        k_unit = cfg.elem_bytes if k_major else e.mul(leading, cfg.elem_bytes)

        lane = self.lane
        if k_major == is_a:
            lane_row = e.arith("remui", lane, ci(16))
            lane_chunk = e.arith("divui", lane, ci(16))
        else:
            lane_row = e.arith(
                "addi",
                e.mul(e.arith("divui", lane, ci(16)), 8),
                e.arith("remui", lane, ci(8)),
            )
            lane_chunk = e.arith("remui", e.arith("divui", lane, ci(8)), ci(2))
        offsets = []
        if k_major:
            row = e.arith("addi", warp_origin, lane_row)
            swizzle = self.swizzle_xor(row, chunks_per_row)
            for step in range(cfg.k_bytes // K_STEP_BYTES):
                chunk = e.arith("xori", e.add(lane_chunk, 2 * step), swizzle)
                offsets.append(e.arith("addi", e.mul(row, row_bytes), e.mul(chunk, 16)))
        else:
            swizzle = self.swizzle_xor(lane_row, chunks_per_row)
            first = e.arith("divui", warp_origin, ci(per_chunk))
            for fragment in range(fragments):
                chunk = e.arith("addi", first, e.add(lane_chunk, 2 * fragment))
                physical = e.arith("xori", chunk, swizzle)
                offsets.append(e.arith("addi", e.mul(lane_row, row_bytes), e.mul(physical, 16)))
        return _Operand(pointer, ring, stage_bytes, jobs, k_unit, k_major, row_bytes, offsets)

    def issue(self, kt: str, operands: list[_Operand], k: str) -> None:
        """cp.async of K tile `kt` into its slot; past K (or M/N) the copy zero-fills."""
        cfg, e = self.cfg, self.e
        ci = e.const
        slot = e.arith("remui", kt, ci(cfg.stages))
        k0 = e.mul(kt, cfg.block_k)
        for op in operands:
            base = e.arith("addi", op.ring, e.mul(slot, op.stage_bytes))
            unit = op.k_unit_bytes
            k_bytes = self.i64(
                e.mul(k0, unit) if isinstance(unit, int) else e.arith("muli", k0, unit)
            )
            for source, in_bounds, k_position, shared in op.jobs:
                k_ok = e.cmp("ult", e.arith("addi", k0, k_position), k)
                ok = e.arith("andi", in_bounds, k_ok, "i1")
                moved = e.arith("addi", source, k_bytes, "i64")
                address = e.value(f"arith.select {ok}, {moved}, {op.pointer} : i64")
                size = e.value(f"arith.select {ok}, {ci(16, 'i32')}, {ci(0, 'i32')} : i32")
                e.asm(
                    "cp.async.cg.shared.global [$0], [$1], 16, $2;",
                    "r,l,r",
                    [
                        (self.i32(e.arith("addi", base, shared)), "i32"),
                        (address, "i64"),
                        (size, "i32"),
                    ],
                )

    def ldmatrix(
        self, op: _Operand, slot_base: str, step: int, fragment: int, cache: dict
    ) -> list[str]:
        """The four registers of one x4 ldmatrix (transposing for an MN-major tile)."""
        e = self.e
        index, imm = (
            (step, fragment * 16 * op.row_bytes)
            if op.k_major
            else (fragment, step * 16 * op.row_bytes)
        )
        key = (id(op), index)
        if key not in cache:
            cache[key] = self.i32(e.arith("addi", slot_base, op.offsets[index]))
        trans = "" if op.k_major else ".trans"
        regs4 = "!llvm.struct<(i32, i32, i32, i32)>"
        result = e.asm(
            f"ldmatrix.sync.aligned.m8n8.x4{trans}.shared.b16 {{$0, $1, $2, $3}}, [$4+{imm}];",
            "=r,=r,=r,=r,r",
            [(cache[key], "i32")],
            regs4,
            "fr",
        )
        return [e.value(f"llvm.extractvalue {result}[{i}] : {regs4}") for i in range(4)]

    def emit(self) -> str:
        cfg, e = self.cfg, self.e
        ci = e.const
        a_ptr = e.value("llvm.ptrtoint %A : !llvm.ptr to i64")
        b_ptr = e.value("llvm.ptrtoint %B : !llvm.ptr to i64")
        c_ptr = e.value("llvm.ptrtoint %C : !llvm.ptr to i64")
        tid = e.value("gpu.thread_id x", "tid")
        self.tid = tid
        bid = e.linear_block_id()
        lane = e.arith("remui", tid, ci(32), hint="lane")
        self.lane = lane
        warp = e.arith("divui", tid, ci(32), hint="warp")
        wm = e.arith("divui", warp, ci(cfg.warps_n))
        wn = e.arith("remui", warp, ci(cfg.warps_n))
        m = e.cast("%M", "i32", "index")
        n = e.cast("%N", "i32", "index")
        k = e.cast("%K", "i32", "index")
        k_tiles = e.arith("ceildivui", k, ci(cfg.block_k), hint="kt")
        tiles_m = e.arith("ceildivui", m, ci(cfg.block_m))
        tiles_n = e.arith("ceildivui", n, ci(cfg.block_n))
        # grouped tile order (as the Hopper kernel)
        width = e.mul(tiles_n, cfg.group_m)
        group = e.arith("divui", bid, width)
        first_m = e.mul(group, cfg.group_m)
        group_size = e.arith("minui", e.arith("subi", tiles_m, first_m), ci(cfg.group_m))
        within = e.arith("remui", bid, width)
        m0 = e.mul(e.arith("addi", first_m, e.arith("remui", within, group_size)), cfg.block_m)
        n0 = e.mul(e.arith("divui", within, group_size), cfg.block_n)

        raw = "memref<?xi8, #gpu.address_space<workgroup>>"
        smem = e.value(f"gpu.dynamic_shared_memory : {raw}", "smem")
        base = e.value(f"memref.extract_aligned_pointer_as_index {smem} : {raw} -> index")
        a_smem = base
        b_smem = e.add(base, cfg.stages * cfg.a_stage_bytes)
        op_a = self.operand(
            a_ptr,
            a_smem,
            cfg.a_stage_bytes,
            cfg.a_tile,
            not cfg.trans_a,
            m0,
            m,
            m if cfg.trans_a else k,
            e.mul(wm, cfg.warp_m),
            cfg.warp_m // 16,
            True,
        )
        op_b = self.operand(
            b_ptr,
            b_smem,
            cfg.b_stage_bytes,
            cfg.b_tile,
            cfg.trans_b,
            n0,
            n,
            k if cfg.trans_b else n,
            e.mul(wn, cfg.warp_n),
            cfg.warp_n // 16,
            False,
        )
        operands = [op_a, op_b]

        # prologue: stages-1 tiles in flight (tiles past K load zeros)
        for s in range(cfg.stages - 1):
            self.issue(ci(s), operands, k)
            e.asm("cp.async.commit_group;", "")

        mf_count, nf_count = cfg.warp_m // 16, cfg.warp_n // 8
        n_acc = mf_count * nf_count * 4
        acc_kind = accumulator(cfg.dtype)
        acc_type = "i32" if acc_kind == "s32" else "f32"
        zero = e.value(f"arith.constant {'0' if acc_type == 'i32' else '0.0'} : {acc_type}")
        kt = e.fresh("kt")
        iters = [e.fresh("c") for _ in range(n_acc)]
        result = e.fresh("acc")
        e.open(
            f"{result}:{n_acc} = scf.for {kt} = {ci(0)} to {k_tiles} step {ci(1)} iter_args("
            + ", ".join(f"{v} = {zero}" for v in iters)
            + ") -> ("
            + ", ".join([acc_type] * n_acc)
            + ") {"
        )
        e.asm(f"cp.async.wait_group {cfg.stages - 2};", "")
        e.line("gpu.barrier")
        self.issue(e.add(kt, cfg.stages - 1), operands, k)
        e.asm("cp.async.commit_group;", "")
        slot = e.arith("remui", kt, ci(cfg.stages))
        a_slot = e.arith("addi", a_smem, e.mul(slot, cfg.a_stage_bytes))
        b_slot = e.arith("addi", b_smem, e.mul(slot, cfg.b_stage_bytes))
        acc = list(iters)
        struct4 = f"!llvm.struct<({', '.join([acc_type] * 4)})>"
        out_constraint = "=r" if acc_type == "i32" else "=f"
        instruction = (
            f"mma.sync.aligned.{MMA_SHAPES[cfg.dtype]}.row.col.{acc_kind}.{cfg.dtype}."
            f"{cfg.dtype}.{acc_kind}"
        )
        cache: dict = {}
        for step in range(cfg.k_bytes // K_STEP_BYTES):
            a_frags = [self.ldmatrix(op_a, a_slot, step, mf, cache) for mf in range(mf_count)]
            b_frags = []
            for pair in range(cfg.warp_n // 16):
                values = self.ldmatrix(op_b, b_slot, step, pair, cache)
                b_frags += [values[0:2], values[2:4]]
            for mf in range(mf_count):
                for nf in range(nf_count):
                    base_idx = 4 * (mf * nf_count + nf)
                    current = acc[base_idx : base_idx + 4]
                    r = e.asm(
                        f"{instruction} "
                        "{$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
                        ",".join([out_constraint] * 4) + ",r,r,r,r,r,r,0,1,2,3",
                        [(v, "i32") for v in a_frags[mf]]
                        + [(v, "i32") for v in b_frags[nf]]
                        + [(v, acc_type) for v in current],
                        struct4,
                        "d",
                    )
                    for i in range(4):
                        acc[base_idx + i] = e.value(f"llvm.extractvalue {r}[{i}] : {struct4}")
        e.line("scf.yield " + ", ".join(acc) + " : " + ", ".join([acc_type] * n_acc))
        e.close()
        e.asm("cp.async.wait_group 0;", "")
        e.line("gpu.barrier")
        self.epilogue(base, c_ptr, result, acc_type, wm, wn, m0, n0, m, n)
        return self.module()

    def epilogue(
        self,
        base: str,
        c_ptr: str,
        result: str,
        acc_type: str,
        wm: str,
        wn: str,
        m0: str,
        n0: str,
        m: str,
        n: str,
    ) -> None:
        """Registers -> padded shared tile -> 16-byte bounds-checked global stores."""
        cfg, e = self.cfg, self.e
        ci = e.const
        ob = cfg.out_bytes
        lane = self.lane
        crow = e.arith("addi", e.mul(wm, cfg.warp_m), e.arith("divui", lane, ci(4)))
        ccol = e.arith("addi", e.mul(wn, cfg.warp_n), e.mul(e.arith("remui", lane, ci(4)), 2))
        c_thread = self.i32(
            e.arith("addi", base, e.arith("addi", e.mul(crow, cfg.c_pitch), e.mul(ccol, ob)))
        )
        mf_count, nf_count = cfg.warp_m // 16, cfg.warp_n // 8
        for mf in range(mf_count):
            for nf in range(nf_count):
                idx = 4 * (mf * nf_count + nf)
                for half in range(2):
                    imm = (mf * 16 + half * 8) * cfg.c_pitch + nf * 8 * ob
                    lo, hi = f"{result}#{idx + 2 * half}", f"{result}#{idx + 2 * half + 1}"
                    store_output_pair(e, cfg.out, acc_type, c_thread, imm, lo, hi)
        e.line("gpu.barrier")
        chunks_per_row = cfg.block_n * ob // 16
        for i in range(cfg.block_m * chunks_per_row // cfg.threads):
            q = e.add(self.tid, i * cfg.threads)
            row = e.arith("divui", q, ci(chunks_per_row))
            chunk = e.arith("remui", q, ci(chunks_per_row))
            grow = e.arith("addi", m0, row)
            gcol = e.arith("addi", n0, e.mul(chunk, 16 // ob))
            ok = e.arith("andi", e.cmp("ult", grow, m), e.cmp("ult", gcol, n), "i1")
            src = self.i32(
                e.arith("addi", base, e.arith("addi", e.mul(row, cfg.c_pitch), e.mul(chunk, 16)))
            )
            dst = e.arith(
                "addi",
                c_ptr,
                self.i64(e.mul(e.arith("addi", e.arith("muli", grow, n), gcol), ob)),
                "i64",
            )
            e.asm(
                "{ .reg .pred p; .reg .b32 x, y, z, w; setp.ne.b32 p, $2, 0; "
                "ld.shared.v4.b32 {x, y, z, w}, [$0]; @p st.global.v4.b32 [$1], {x, y, z, w}; }",
                "r,l,r",
                [(src, "i32"), (dst, "i64"), (e.value(f"arith.extui {ok} : i1 to i32"), "i32")],
            )

    def module(self) -> str:
        attributes = [f"known_block_size = array<i32: {self.cfg.threads}, 1, 1>"]
        return gpu_module(self.interface, attributes, self.e)


def default_interface(cfg: AmpereGemmConfig) -> KernelInterface:
    """A, B, C as global pointers, then M, N, K as i32."""
    return gemm_interface(cfg.name, ("%A", "%B", "%C"))


def ampere_gemm_mlir(cfg: AmpereGemmConfig, interface: KernelInterface | None = None) -> str:
    """MLIR text (a gpu.module with one kernel) for `cfg`; the interface must bind %A, %B, %C
    (!llvm.ptr) and %M, %N, %K (i32)."""
    return _Kernel(cfg, interface or default_interface(cfg)).emit()
