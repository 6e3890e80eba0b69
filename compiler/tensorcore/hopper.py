"""sm_90a GEMM: C[M,N] = op(A) @ op(B), fp32 (int32 for int8) accumulation.

Operand types: f16/bf16 (A M x K or K x M, B K x N or N x K), e4m3/e5m2, s8 and tf32 (K-major
only, as wgmma requires: A M x K, B N x K); see `dtypes`. Output f16/bf16/f32 (s32 for s8).

Structure (what the H200 study in shared/reference showed to matter):
- one producer warpgroup whose elected thread streams K tiles of A and B through a ring of
  `stages` shared-memory slots with TMA (128B swizzle), synchronized by a "full" mbarrier per slot
  (TMA transaction bytes) and an "empty" mbarrier per slot (one arrive per consumer warp);
- `consumers` warpgroups that each own `block_m / consumers` rows of the CTA tile and issue
  `wgmma.mma_async m64nNkX` with both operands from shared memory: a K-major operand is one TMA
  box of 128-byte (64-byte) K rows, an MN-major one is boxes of 64 MN elements by block_k rows
  (the descriptor's transpose bit set); the first MMA of a tile has scale-d = 0, so the
  accumulator needs no zeroing;
- our own epilogue: accumulators -> packed output rows -> 128B-swizzled shared memory (conflict
  free for 16-bit output) -> TMA store, which clips ragged edges; the store overlaps the next
  tile's MMAs;
- roles chosen from a warp-uniform value (shuffle of tid / 128), so ptxas keeps wgmma pipelined;
- grouped tile order (`group_m` M-tiles per group) and optionally a persistent grid.
Kernel parameters: three pointers to 128-byte CUtensorMaps in global memory (A, B, C; see
`tilec.runtime.tma`) and M, N, K as i32. Ragged M, N, K are handled by TMA (zero fill, clipping).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilec.compiler.tensorcore.common import (
    GemmConfigBase,
    gemm_interface,
    gpu_module,
    store_output_pair,
)
from tilec.compiler.tensorcore.dtypes import K_STEP_BYTES, OPERAND_BYTES, accumulator, check_types
from tilec.compiler.tensorcore.emitter import Emitter, KernelInterface
from tilec.compiler.tensorcore.wgmma_ptx import k_major_bits, mma_async_asm, mn_major_bits

SHARED = "#gpu.address_space<workgroup>"
SWIZZLE_BYTES = 128
TICKS = 10_000_000  # mbarrier try_wait suspend-time hint (as CUTLASS)
MLIR_ELEMENT = {"f16": "f16", "bf16": "bf16", "e4m3": "i8", "e5m2": "i8", "s8": "i8", "tf32": "f32"}


@dataclass(frozen=True)
class HopperGemmConfig(GemmConfigBase):
    """Tile shape, types, operand layouts and schedule of one generated kernel.

    `block_k` is in elements and must span 64 or 128 bytes (one swizzle row of a K-major
    operand); `trans_a` / `trans_b` mean what T.gemm's flags mean (A stored K x M, B N x K).
    """

    block_m: int = 128
    block_n: int = 256
    block_k: int = 64
    stages: int = 4
    consumers: int = 2
    dtype: str = "f16"
    persistent: bool = True
    group_m: int = 8
    epilogue_n: int = 128  # columns of C staged in shared memory per pass (0: all of block_n)
    setmaxnreg: bool = False
    out_dtype: str = ""  # "" = dtypes.default_output(dtype)
    trans_a: bool = False
    trans_b: bool = False
    a_registers: bool = False  # A through ldmatrix into registers (wgmma's RS form)

    def __post_init__(self) -> None:
        if self.dtype not in OPERAND_BYTES:
            raise ValueError(f"wgmma kernel does not support {self.dtype} operands")
        check_types(self.dtype, self.out, self.trans_a, self.trans_b)
        if self.a_registers and self.trans_a:
            raise ValueError("A from registers must be K-major (M x K): ldmatrix without .trans")
        if self.k_bytes not in (64, 128):
            raise ValueError("block_k must span 64 or 128 bytes (one swizzle row)")
        if self.block_n % 64 or not 64 <= self.block_n <= 256:
            raise ValueError("block_n must be 64, 128, 192 or 256")
        if self.warp_m not in (64, 128) or self.block_m % self.consumers:
            raise ValueError("each consumer warpgroup must own 64 or 128 rows")
        if self.m_atoms * self.block_n > 256:
            raise ValueError("accumulator would exceed 128 registers per thread")
        if self.epi_n % 64 or self.block_n % self.epi_n:
            raise ValueError("epilogue_n must be a multiple of 64 dividing block_n")
        if self.stages < 2:
            raise ValueError("need at least 2 stages")
        if self.smem_bytes > 232448:
            raise ValueError(f"shared memory {self.smem_bytes} B exceeds 227 KiB")

    @property
    def name(self) -> str:
        tag = "p" if self.persistent else "np"
        return (
            f"gemm_sm90_{self.types_and_layout}_{self.block_m}x{self.block_n}x{self.block_k}"
            f"_s{self.stages}_c{self.consumers}_{tag}_e{self.epi_n}"
            + ("_r" if self.setmaxnreg else "")
            + ("_ra" if self.a_registers else "")
        )

    @property
    def threads(self) -> int:
        return 128 * (self.consumers + 1)

    @property
    def warp_m(self) -> int:
        return self.block_m // self.consumers

    @property
    def m_atoms(self) -> int:
        return self.warp_m // 64

    @property
    def epi_n(self) -> int:
        return self.epilogue_n or self.block_n

    @property
    def mn_major_a(self) -> bool:
        return self.trans_a

    @property
    def mn_major_b(self) -> bool:
        return not self.trans_b

    @property
    def mn_box_bytes(self) -> int:
        """Bytes of one 64-element-wide box of an MN-major operand (block_k rows of 128 B)."""
        return self.block_k * 128

    @property
    def c_box_cols(self) -> int:
        """Output columns per 128-byte swizzled row of the staged C tile."""
        return 128 // self.out_bytes

    @property
    def c_box_bytes(self) -> int:
        return self.warp_m * 128

    @property
    def c_warpgroup_bytes(self) -> int:
        return self.warp_m * self.epi_n * self.out_bytes

    @property
    def smem_bytes(self) -> int:
        """Dynamic shared memory: 1 KiB alignment slack + A/B ring + C staging."""
        ring = self.stages * (self.a_stage_bytes + self.b_stage_bytes)
        return 1024 + ring + self.consumers * self.c_warpgroup_bytes

    def operand_box(self, mn_major: bool, mn_extent: int) -> tuple[int, int]:
        """TMA box, innermost first: (K, MN) for a K-major operand, (64, K) for MN-major."""
        return (64, self.block_k) if mn_major else (self.block_k, mn_extent)

    @property
    def a_box(self) -> tuple[int, int]:
        return self.operand_box(self.mn_major_a, self.block_m)

    @property
    def b_box(self) -> tuple[int, int]:
        return self.operand_box(self.mn_major_b, self.block_n)

    @property
    def c_box(self) -> tuple[int, int]:
        return (self.c_box_cols, self.warp_m)

    def swizzle(self, mn_major: bool) -> int:
        """Swizzle span in bytes of an operand's shared rows."""
        return 128 if mn_major else self.k_bytes

    def launch(self) -> dict:
        """Launch metadata the runtime needs besides the grid (see tilec.runtime.tma)."""
        return {
            **self.block_launch(self.threads, self.smem_bytes),
            "persistent": self.persistent,
            "tma": {
                "A": {"box": list(self.a_box), "swizzle": self.swizzle(self.mn_major_a)},
                "B": {"box": list(self.b_box), "swizzle": self.swizzle(self.mn_major_b)},
                "C": {"box": list(self.c_box), "swizzle": 128},
            },
        }


class _Kernel:
    """Emits the gpu.func of one configuration."""

    def __init__(self, cfg: HopperGemmConfig, interface: KernelInterface) -> None:
        self.cfg = cfg
        self.interface = interface
        self.e = Emitter()
        s = cfg.stages
        self.bar_type = f"!nvgpu.mbarrier.group<memorySpace = {SHARED}, num_barriers = {s}>"
        self.tma_a, self.sm_a = self.operand_types(cfg.a_box, cfg.mn_major_a)
        self.tma_b, self.sm_b = self.operand_types(cfg.b_box, cfg.mn_major_b)
        self.raw = f"memref<?xi8, {SHARED}>"
        n_acc = cfg.block_n // 2
        self.acc_elem = "i32" if accumulator(cfg.dtype) == "s32" else "f32"
        self.acc_type = "!llvm.struct<(" + ", ".join([self.acc_elem] * n_acc) + ")>"

    def operand_types(self, box: tuple[int, int], mn_major: bool) -> tuple[str, str]:
        """The nvgpu tensor-map type of one operand's TMA box and its shared-memory view."""
        cfg = self.cfg
        element = MLIR_ELEMENT[cfg.dtype]
        swizzle = {128: "swizzle_128b", 64: "swizzle_64b"}[cfg.swizzle(mn_major)]
        shape = f"{box[1]}x{box[0]}x{element}"
        descriptor = (
            f"!nvgpu.tensormap.descriptor<tensor = memref<{shape}, 3>, swizzle = {swizzle}, "
            "l2promo = l2promo_256b, oob = zero, interleave = none>"
        )
        return descriptor, f"memref<{shape}, {SHARED}>"

    # ---- small helpers -------------------------------------------------------------------
    def i32(self, index_value: str) -> str:
        return self.e.cast(index_value, "index", "i32")

    def i64(self, index_value: str) -> str:
        return self.e.cast(index_value, "index", "i64")

    def parity(self, counter: str, flip: bool) -> str:
        e = self.e
        phase = e.arith("divui", counter, e.const(self.cfg.stages))
        bit = e.cast(e.cast(phase, "index", "i64"), "i64", "i1")
        if flip:
            bit = e.arith("xori", bit, e.const(1, "i1"), "i1")
        return bit

    def tile_origin(self, tile: str, tiles_m: str, tiles_n: str) -> tuple[str, str]:
        """Grouped order: `group_m` M-tiles share each run over N, so A and B stay in L2."""
        e, cfg = self.e, self.cfg
        width = e.mul(tiles_n, cfg.group_m)
        group = e.arith("divui", tile, width)
        first_m = e.mul(group, cfg.group_m)
        rows_left = e.arith("subi", tiles_m, first_m)
        group_size = e.arith("minui", rows_left, e.const(cfg.group_m))
        within = e.arith("remui", tile, width)
        tm = e.arith("addi", first_m, e.arith("remui", within, group_size))
        tn = e.arith("divui", within, group_size)
        return e.mul(tm, cfg.block_m, "m0"), e.mul(tn, cfg.block_n, "n0")

    # ---- kernel -----------------------------------------------------------------------------
    def emit(self) -> str:
        cfg, e = self.cfg, self.e
        ci = e.const
        self.tA = e.value(f"builtin.unrealized_conversion_cast %tmA : !llvm.ptr to {self.tma_a}")
        self.tB = e.value(f"builtin.unrealized_conversion_cast %tmB : !llvm.ptr to {self.tma_b}")
        self.tC = e.value("llvm.ptrtoint %tmC : !llvm.ptr to i64", "tmc")
        tid = e.value("gpu.thread_id x", "tid")
        self.bid = e.linear_block_id()
        self.gdim = e.value("gpu.grid_dim x", "gdim") if cfg.persistent else None
        wg_raw = e.cast(e.arith("divui", tid, ci(128)), "index", "i32")
        shuffled = e.fresh("wgs")
        e.line(f"{shuffled}:2 = gpu.shuffle idx {wg_raw}, {ci(0, 'i32')}, {ci(32, 'i32')} : i32")
        self.wg = e.cast(f"{shuffled}#0", "i32", "index")
        self.lane = e.arith("remui", tid, ci(32), hint="lane")
        self.ltid = e.arith("remui", tid, ci(128), hint="ltid")
        self.warp = e.arith("divui", self.ltid, ci(32), hint="warp")
        m = e.cast("%M", "i32", "index")
        n = e.cast("%N", "i32", "index")
        # K through an opaque move: with K a compile-time constant, LLVM fully unrolled the
        # k-tile loops of short problems (2 or 4 k-tiles), and those kernels hung on the H200
        k_opaque = e.asm("mov.b32 $0, $1;", "=r,r", [("%K", "i32")], result="i32", hint="k")
        k = e.cast(k_opaque, "i32", "index")
        self.k_tiles = e.arith("ceildivui", k, ci(cfg.block_k), hint="kt")
        self.tiles_m = e.arith("ceildivui", m, ci(cfg.block_m))
        self.tiles_n = e.arith("ceildivui", n, ci(cfg.block_n))
        self.tiles = e.arith("muli", self.tiles_m, self.tiles_n, hint="tiles")

        smem = e.value(f"gpu.dynamic_shared_memory : {self.raw}", "smem")
        self.smem = smem
        base = e.value(f"memref.extract_aligned_pointer_as_index {smem} : {self.raw} -> index")
        pad = e.arith(
            "remui", e.arith("subi", ci(1024), e.arith("remui", base, ci(1024))), ci(1024)
        )
        self.off_a = pad
        self.off_b = e.add(pad, cfg.stages * cfg.a_stage_bytes)
        self.off_c = e.add(self.off_b, cfg.stages * cfg.b_stage_bytes)
        self.addr_base = e.arith("addi", base, pad)  # shared-window address of offset `pad`
        self.full = e.value(f"nvgpu.mbarrier.create -> {self.bar_type}", "full")
        self.empty = e.value(f"nvgpu.mbarrier.create -> {self.bar_type}", "empty")
        is0 = e.cmp("eq", tid, ci(0))
        e.open(f"scf.if {is0} {{")
        for s in range(cfg.stages):
            e.line(f"nvgpu.mbarrier.init {self.full}[{ci(s)}], {ci(1)} : {self.bar_type}")
            e.line(
                f"nvgpu.mbarrier.init {self.empty}[{ci(s)}], {ci(4 * cfg.consumers)} : "
                f"{self.bar_type}"
            )
        e.line("nvvm.fence.mbarrier.init")
        e.line(f"nvgpu.tma.prefetch.descriptor {self.tA} : {self.tma_a}")
        e.line(f"nvgpu.tma.prefetch.descriptor {self.tB} : {self.tma_b}")
        e.asm("prefetch.tensormap [$0];", "l", [(self.tC, "i64")])
        e.close()
        e.line("gpu.barrier")

        is_producer = e.cmp("eq", self.wg, ci(cfg.consumers))
        e.open(f"scf.if {is_producer} {{")
        if cfg.setmaxnreg:
            e.line("nvvm.setmaxregister decrease 40")
        self.producer()
        e.close("} else {")
        e.depth += 1
        if cfg.setmaxnreg:
            e.line("nvvm.setmaxregister increase 232")
        self.consumer()
        e.close()
        return self.module()

    def tile_loop(self, hint: str) -> tuple[str, str]:
        """Open the loop over this CTA's output tiles; returns (tile, running k-tile counter)."""
        e = self.e
        tile, counter = e.fresh(f"{hint}t"), e.fresh(f"{hint}g")
        step = self.gdim if self.cfg.persistent else self.tiles
        e.open(
            f"{e.fresh(hint + 'end')} = scf.for {tile} = {self.bid} to {self.tiles} step {step} "
            f"iter_args({counter} = {e.const(0)}) -> (index) {{"
        )
        return tile, counter

    def producer(self) -> None:
        cfg, e = self.cfg, self.e
        ci = e.const
        leader = e.cmp("eq", self.ltid, ci(0))
        e.open(f"scf.if {leader} {{")
        tile, counter = self.tile_loop("p")
        m0, n0 = self.tile_origin(tile, self.tiles_m, self.tiles_n)
        kt = e.fresh("pk")
        e.open(f"scf.for {kt} = {ci(0)} to {self.k_tiles} step {ci(1)} {{")
        g = e.arith("addi", counter, kt)
        slot = e.arith("remui", g, ci(cfg.stages), hint="slot")
        e.line(
            f"nvgpu.mbarrier.try_wait.parity {self.empty}[{slot}], {self.parity(g, True)}, "
            f"{ci(TICKS)} : {self.bar_type}"
        )
        tx = ci(cfg.a_stage_bytes + cfg.b_stage_bytes)
        e.line(f"nvgpu.mbarrier.arrive.expect_tx {self.full}[{slot}], {tx} : {self.bar_type}")
        k0 = e.mul(kt, cfg.block_k, "k0")
        a_off = e.arith("addi", self.off_a, e.mul(slot, cfg.a_stage_bytes))
        self.load_operand("A", a_off, cfg.mn_major_a, m0, k0, cfg.block_m, slot)
        b_off = e.arith("addi", self.off_b, e.mul(slot, cfg.b_stage_bytes))
        self.load_operand("B", b_off, cfg.mn_major_b, n0, k0, cfg.block_n, slot)
        e.close()
        e.line(f"scf.yield {e.arith('addi', counter, self.k_tiles)} : index")
        e.close()
        e.close()

    def load_operand(
        self, role: str, offset: str, mn_major: bool, mn0: str, k0: str, extent: int, slot: str
    ) -> None:
        """TMA loads of one operand's K tile into its slot: one box of K rows for a K-major
        operand, one box per 64 MN elements (each block_k rows of 128 B) for an MN-major one."""
        e, cfg = self.e, self.cfg
        descriptor, tma_type, view_type = (
            (self.tA, self.tma_a, self.sm_a) if role == "A" else (self.tB, self.tma_b, self.sm_b)
        )
        boxes = [(offset, k0, mn0)]
        if mn_major:
            boxes = [
                (e.add(offset, box * cfg.mn_box_bytes), e.add(mn0, box * 64), k0)
                for box in range(extent // 64)
            ]
        for view_offset, inner, outer in boxes:
            view = e.value(f"memref.view {self.smem}[{view_offset}][] : {self.raw} to {view_type}")
            e.line(
                f"nvgpu.tma.async.load {descriptor}[{inner}, {outer}], {self.full}[{slot}] to "
                f"{view} : {tma_type}, {self.bar_type} -> {view_type}"
            )

    def wgmma(self, acc: str, a: str | list[str], desc_b: str, scale_d: str) -> str:
        """One wgmma.mma_async m64nNkX on the accumulator struct `acc`; `a` is A's shared-memory
        descriptor, or its four fragment registers (a_registers)."""
        cfg, e = self.cfg, self.e
        n_acc = cfg.block_n // 2
        values = [
            e.value(f"llvm.extractvalue {acc}[{i}] : {self.acc_type}", "a") for i in range(n_acc)
        ]
        text, constraints = mma_async_asm(
            cfg.dtype,
            cfg.block_n,
            K_STEP_BYTES // cfg.elem_bytes,
            None if cfg.a_registers else cfg.mn_major_a,
            cfg.mn_major_b,
        )
        a_operands = [(a, "i64")] if isinstance(a, str) else [(r, "i32") for r in a]
        operands = (
            [(v, self.acc_elem) for v in values]
            + a_operands
            + [(desc_b, "i64"), (scale_d, "i32")]
        )
        return e.asm(text, constraints, operands, self.acc_type, "acc")

    def a_fragment_offsets(self) -> list[str]:
        """Per 32-byte K step, this lane's ldmatrix row address within its warpgroup's A
        region of a slot (bytes). Warp w reads rows 16w..16w+15 of each 64-row atom: lane l
        addresses row l % 16 of chunk l / 16 of the step, so the x4 load's four 8x8 matrices
        are (rows 0-7, 8-15) x (K bytes 0-15, 16-31), the order of wgmma's a0..a3. TMA wrote
        the K-major tile with the swizzle of its row span (128B or 64B): the 16-byte chunk
        index is XORed with address bits 7 and up (row % 8 for 128-byte rows, (row / 2) % 4
        for 64-byte ones), which depend on the lane only (slots and atoms are 1 KiB aligned)."""
        cfg, e = self.cfg, self.e
        ci = e.const
        row = e.arith("addi", e.mul(self.warp, 16), e.arith("remui", self.lane, ci(16)))
        half = e.arith("divui", self.lane, ci(16))
        rows_per_128 = 128 // cfg.k_bytes
        phase = row if rows_per_128 == 1 else e.arith("divui", row, ci(rows_per_128))
        swizzle = e.arith("remui", phase, ci(cfg.k_bytes // 16))
        row_start = e.mul(row, cfg.k_bytes)
        offsets = []
        for step in range(cfg.k_bytes // K_STEP_BYTES):
            chunk = e.arith("xori", e.add(half, 2 * step), swizzle)
            offsets.append(e.arith("addi", row_start, e.mul(chunk, 16)))
        return offsets

    def load_a_fragment(self, a_addr: str, offset: str, atom: int) -> list[str]:
        """The four registers of one warp's 16 x 32-byte slice of A: ldmatrix x4 (b16 pieces:
        the same bytes per lane for 16-bit, 8-bit and tf32 fragments)."""
        e = self.e
        regs4 = "!llvm.struct<(i32, i32, i32, i32)>"
        address = self.i32(e.arith("addi", a_addr, offset))
        result = e.asm(
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, "
            f"[$4+{atom * 64 * self.cfg.k_bytes}];",
            "=r,=r,=r,=r,r",
            [(address, "i32")],
            regs4,
            "fa",
        )
        return [e.value(f"llvm.extractvalue {result}[{i}] : {regs4}") for i in range(4)]

    def descriptor_bits(self, mn_major: bool) -> int:
        """Constant descriptor bits: a K-major operand's 8-row groups lie 8 swizzle rows apart;
        an MN-major one's 64-element boxes lie a box apart, its 8-row K groups 1 KiB apart."""
        cfg = self.cfg
        if mn_major:
            return mn_major_bits(cfg.mn_box_bytes)
        return k_major_bits(cfg.k_bytes)

    def atom_bytes(self, mn_major: bool) -> int:
        """Shared bytes between two 64-row (M) atoms of an operand."""
        return self.cfg.mn_box_bytes if mn_major else 64 * self.cfg.k_bytes

    def k_step_bytes(self, mn_major: bool, step: int) -> int:
        """Offset of the step-th 32-byte K slice: along the row (K-major) or 16 rows down."""
        return step * (16 * 128 if mn_major else K_STEP_BYTES)

    def consumer(self) -> None:
        cfg, e = self.cfg, self.e
        ci = e.const
        # wgmma descriptors: address >> 4 in bits 0..13, plus constant stride/swizzle bits
        const_a = self.descriptor_bits(cfg.mn_major_a)
        const_b = self.descriptor_bits(cfg.mn_major_b)
        a_wg_bytes = cfg.m_atoms * self.atom_bytes(cfg.mn_major_a)
        a_wg = e.arith("addi", self.addr_base, e.mul(self.wg, a_wg_bytes))
        b_base = e.add(self.addr_base, cfg.stages * cfg.a_stage_bytes)
        c_wg = e.arith(
            "addi",
            e.add(self.addr_base, cfg.stages * (cfg.a_stage_bytes + cfg.b_stage_bytes)),
            e.mul(self.wg, cfg.c_warpgroup_bytes),
        )
        lane_row = e.arith("divui", self.lane, ci(4))
        # per-thread part of the swizzled C staging address: row (16*warp + lane/4) of 128 B,
        # 2 outputs per lane%4 in each 8-column group; the 16-byte chunk index is XORed with
        # row % 8 (= lane / 4)
        c_row = e.arith("addi", c_wg, e.mul(e.arith("addi", e.mul(self.warp, 16), lane_row), 128))
        lane_bytes = e.mul(e.arith("remui", self.lane, ci(4)), 2 * cfg.out_bytes)
        chunk_addr = []
        for group in range(cfg.c_box_cols // 8):
            byte = e.add(lane_bytes, group * 8 * cfg.out_bytes)
            chunk = e.arith("xori", e.arith("divui", byte, ci(16)), lane_row)
            within = e.arith("remui", byte, ci(16))
            chunk_addr.append(
                self.i32(e.arith("addi", c_row, e.arith("addi", e.mul(chunk, 16), within)))
            )
        c_leader_smem = self.i32(c_wg)
        is_leader = e.cmp("eq", self.ltid, ci(0))
        is_lane0 = e.cmp("eq", self.lane, ci(0))
        bar_id = self.i32(e.add(self.wg, 1))

        a_offsets = self.a_fragment_offsets() if cfg.a_registers else []
        zero_literal = "0" if self.acc_elem == "i32" else "0.0"
        zero = e.value(f"arith.constant {zero_literal} : {self.acc_elem}")
        acc0 = e.value(f"llvm.mlir.undef : {self.acc_type}")
        for i in range(cfg.block_n // 2):
            acc0 = e.value(f"llvm.insertvalue {zero}, {acc0}[{i}] : {self.acc_type}")

        tile, counter = self.tile_loop("c")
        m0, n0 = self.tile_origin(tile, self.tiles_m, self.tiles_n)
        kt = e.fresh("kt")
        iters = [e.fresh("acc") for _ in range(cfg.m_atoms)]
        results = e.fresh("accf")
        iter_args = ", ".join(f"{a} = {acc0}" for a in iters)
        types = ", ".join([self.acc_type] * cfg.m_atoms)
        e.open(
            f"{results}:{cfg.m_atoms} = scf.for {kt} = {ci(0)} to {self.k_tiles} step {ci(1)} "
            f"iter_args({iter_args}) -> ({types}) {{"
        )
        g = e.arith("addi", counter, kt)
        slot = e.arith("remui", g, ci(cfg.stages), hint="slot")
        e.line(
            f"nvgpu.mbarrier.try_wait.parity {self.full}[{slot}], {self.parity(g, False)}, "
            f"{ci(TICKS)} : {self.bar_type}"
        )
        a_addr = e.arith("addi", a_wg, e.mul(slot, cfg.a_stage_bytes))
        b_addr = e.arith("addi", b_base, e.mul(slot, cfg.b_stage_bytes))
        if not cfg.a_registers:
            desc_a = e.arith(
                "ori",
                e.arith("shrui", self.i64(a_addr), ci(4, "i64"), "i64"),
                ci(const_a, "i64"),
                "i64",
            )
        desc_b = e.arith(
            "ori",
            e.arith("shrui", self.i64(b_addr), ci(4, "i64"), "i64"),
            ci(const_b, "i64"),
            "i64",
        )
        first = e.cmp("ne", kt, ci(0))
        scale_first = e.value(f"arith.extui {first} : i1 to i32")
        if cfg.a_registers:
            accs = self.register_a_steps(
                list(iters), a_addr, a_offsets, desc_b, scale_first, (kt, g, is_lane0)
            )
            e.line(f"scf.yield {', '.join(accs)} : {types}")
        else:
            e.asm("wgmma.fence.sync.aligned;", "")
            accs = list(iters)
            for kk in range(cfg.k_bytes // K_STEP_BYTES):
                scale = scale_first if kk == 0 else ci(1, "i32")
                db_off = self.k_step_bytes(cfg.mn_major_b, kk) // 16
                db = e.arith("addi", desc_b, ci(db_off, "i64"), "i64")
                for atom in range(cfg.m_atoms):
                    a_bytes = atom * self.atom_bytes(cfg.mn_major_a)
                    da_off = (a_bytes + self.k_step_bytes(cfg.mn_major_a, kk)) // 16
                    da = e.arith("addi", desc_a, ci(da_off, "i64"), "i64")
                    accs[atom] = self.wgmma(accs[atom], da, db, scale)
            e.asm("wgmma.commit_group.sync.aligned;", "")
            e.asm("wgmma.wait_group.sync.aligned 1;", "")
            self.release_previous_slot(kt, g, is_lane0)
            e.line(f"scf.yield {', '.join(accs)} : {types}")
        e.close()
        e.asm("wgmma.wait_group.sync.aligned 0;", "")
        last = e.arith("addi", counter, e.arith("subi", self.k_tiles, ci(1)))
        e.open(f"scf.if {is_lane0} {{")
        e.value(
            f"nvgpu.mbarrier.arrive {self.empty}[{e.arith('remui', last, ci(cfg.stages))}] : "
            f"{self.bar_type} -> !nvgpu.mbarrier.token"
        )
        e.close()
        finals = [f"{results}#{i}" for i in range(cfg.m_atoms)]
        self.epilogue(finals, m0, n0, chunk_addr, c_leader_smem, is_leader, bar_id)
        e.line(f"scf.yield {e.arith('addi', counter, self.k_tiles)} : index")
        e.close()
        e.open(f"scf.if {is_leader} {{")
        e.asm("cp.async.bulk.wait_group 0;", "")
        e.close()

    def release_previous_slot(self, kt: str, g: str, is_lane0: str) -> None:
        """One arrive per warp on the empty barrier of the previous K tile's slot, once the
        wgmmas that read it are complete (after the first K tile)."""
        e = self.e
        ci = e.const
        release = e.arith("andi", e.cmp("ugt", kt, ci(0)), is_lane0, "i1")
        e.open(f"scf.if {release} {{")
        prev = e.arith("remui", e.arith("subi", g, ci(1)), ci(self.cfg.stages))
        e.value(
            f"nvgpu.mbarrier.arrive {self.empty}[{prev}] : {self.bar_type} -> !nvgpu.mbarrier.token"
        )
        e.close()

    def register_a_steps(
        self,
        accs: list[str],
        a_addr: str,
        a_offsets: list[str],
        desc_b: str,
        scale_first: str,
        release: tuple[str, str, str],
    ) -> list[str]:
        """The K tile's 32-byte steps with A from registers, one wgmma group per step.

        Each step loads its fragments (ldmatrix), fences them for wgmma, issues, commits and
        waits until one group is left in flight: the next step's ldmatrix runs while this
        step's wgmma does, and only two steps' fragments are live (a whole tile's, loaded up
        front, spilled the 128 x 256 tile; two groups in flight ran 8% slower on the H200).
        After the first step's wait every wgmma of the previous K tile is
        complete, so its slot goes back to the producer there; this tile's own ldmatrix reads
        are synchronous and done long before its slot is released, one tile later.
        """
        cfg, e = self.cfg, self.e
        ci = e.const
        for kk in range(cfg.k_bytes // K_STEP_BYTES):
            scale = scale_first if kk == 0 else ci(1, "i32")
            db_off = self.k_step_bytes(cfg.mn_major_b, kk) // 16
            db = e.arith("addi", desc_b, ci(db_off, "i64"), "i64")
            fragments = [
                self.load_a_fragment(a_addr, a_offsets[kk], atom) for atom in range(cfg.m_atoms)
            ]
            e.asm("wgmma.fence.sync.aligned;", "")
            for atom in range(cfg.m_atoms):
                accs[atom] = self.wgmma(accs[atom], fragments[atom], db, scale)
            e.asm("wgmma.commit_group.sync.aligned;", "")
            e.asm("wgmma.wait_group.sync.aligned 1;", "")
            if kk == 0:
                self.release_previous_slot(*release)
        return accs

    def epilogue(
        self,
        accs: list[str],
        m0: str,
        n0: str,
        chunk_addr: list[str],
        c_leader_smem: str,
        is_leader: str,
        bar_id: str,
    ) -> None:
        """Accumulator pairs -> output pairs -> swizzled shared tile -> TMA store, per pass."""
        cfg, e = self.cfg, self.e
        ci = e.const
        groups_per_box = cfg.c_box_cols // 8
        row0 = self.i32(e.arith("addi", m0, e.mul(self.wg, cfg.warp_m)))
        for pass_index in range(cfg.block_n // cfg.epi_n):
            # the previous TMA store must have read the staging tile before it is overwritten
            e.open(f"scf.if {is_leader} {{")
            e.asm("cp.async.bulk.wait_group.read 0;", "")
            e.close()
            e.asm("bar.sync $0, 128;", "r", [(bar_id, "i32")])
            for atom, acc in enumerate(accs):
                for j in range(cfg.epi_n // 8):
                    col_group = pass_index * cfg.epi_n // 8 + j
                    for half in range(2):
                        lo = e.value(
                            f"llvm.extractvalue {acc}[{4 * col_group + 2 * half}] : "
                            f"{self.acc_type}",
                            "a",
                        )
                        hi = e.value(
                            f"llvm.extractvalue {acc}[{4 * col_group + 2 * half + 1}] : "
                            f"{self.acc_type}",
                            "a",
                        )
                        imm = (
                            (j // groups_per_box) * cfg.c_box_bytes
                            + atom * 64 * 128
                            + half * 8 * 128
                        )
                        store_output_pair(
                            e, cfg.out, self.acc_elem, chunk_addr[j % groups_per_box], imm, lo, hi
                        )
            e.asm("fence.proxy.async.shared::cta;", "")
            e.asm("bar.sync $0, 128;", "r", [(bar_id, "i32")])
            e.open(f"scf.if {is_leader} {{")
            for box in range(cfg.epi_n // cfg.c_box_cols):
                col = self.i32(e.add(n0, pass_index * cfg.epi_n + box * cfg.c_box_cols))
                smem = e.arith("addi", c_leader_smem, ci(box * cfg.c_box_bytes, "i32"), "i32")
                e.asm(
                    "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$1, $2}], [$3];",
                    "l,r,r,r",
                    [(self.tC, "i64"), (col, "i32"), (row0, "i32"), (smem, "i32")],
                )
            e.asm("cp.async.bulk.commit_group;", "")
            e.close()

    def module(self) -> str:
        cfg = self.cfg
        attrs = [f"known_block_size = array<i32: {cfg.threads}, 1, 1>", "nvvm.minctasm = 1 : i32"]
        if cfg.setmaxnreg:
            attrs.append(f"nvvm.maxnreg = {65536 // cfg.threads // 8 * 8} : i32")
        return gpu_module(self.interface, attrs, self.e)


def default_interface(cfg: HopperGemmConfig) -> KernelInterface:
    """Three pointers to CUtensorMaps (A, B, C), then M, N, K as i32."""
    return gemm_interface(cfg.name, ("%tmA", "%tmB", "%tmC"))


def hopper_gemm_mlir(cfg: HopperGemmConfig, interface: KernelInterface | None = None) -> str:
    """MLIR text (a gpu.module with one kernel) for `cfg`; the interface must bind %tmA, %tmB,
    %tmC (!llvm.ptr to each CUtensorMap) and %M, %N, %K (i32)."""
    return _Kernel(cfg, interface or default_interface(cfg)).emit()
