"""sm_80 GEMM: C[M,N] = A[M,K] @ B[K,N], row-major 16-bit operands, fp32 accumulation.

The classic multistage tensor-core kernel:
- `stages` shared-memory slots filled by `cp.async.cg` 16-byte copies (src-size 0 zero-fills rows
  and columns past M, N, K), one commit group per K tile, `wait_group stages-2` + one barrier per
  iteration;
- XOR-swizzled shared tiles (16-byte chunk index XOR row bits), so `ldmatrix` (A) and
  `ldmatrix.trans` (B, which is K x N row-major) are free of bank conflicts;
- a warp grid over the CTA tile, `mma.sync.m16n8k16` on each warp's fragments;
- an epilogue that converts to 16 bits, stages the tile in padded shared memory and writes
  16-byte rows to global memory with bounds checks.
Kernel parameters: A, B, C as global pointers, M, N, K as i32 (N and K multiples of 8).
"""

from __future__ import annotations

from dataclasses import dataclass

from tilec.compiler.tensorcore.emitter import Emitter, KernelInterface


@dataclass(frozen=True)
class AmpereGemmConfig:
    """Tile shape, warp grid and pipeline depth of one generated kernel."""

    block_m: int = 128
    block_n: int = 128
    block_k: int = 32
    stages: int = 3
    warps_m: int = 2
    warps_n: int = 2
    dtype: str = "f16"
    group_m: int = 8

    def __post_init__(self) -> None:
        if self.dtype not in ("f16", "bf16"):
            raise ValueError(f"mma.sync kernel supports f16/bf16 operands, not {self.dtype}")
        if self.block_k not in (16, 32, 64):
            raise ValueError("block_k must be 16, 32 or 64")
        if self.warp_m % 16 or self.warp_n % 16:
            raise ValueError("warp tiles must be multiples of 16 x 16")
        if (self.warp_m // 16) * (self.warp_n // 8) * 4 > 128:
            raise ValueError("accumulator would exceed 128 fp32 registers per thread")
        if (self.block_m * self.block_k // 8) % self.threads:
            raise ValueError("A tile chunks must divide evenly among threads")
        if (self.block_k * self.block_n // 8) % self.threads:
            raise ValueError("B tile chunks must divide evenly among threads")
        if self.block_n // 8 < 8 and self.block_n // 8 not in (2, 4):
            raise ValueError("unsupported block_n")

    @property
    def name(self) -> str:
        return (
            f"gemm_sm80_{self.dtype}_{self.block_m}x{self.block_n}x{self.block_k}"
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
    def a_stage_bytes(self) -> int:
        return self.block_m * self.block_k * 2

    @property
    def b_stage_bytes(self) -> int:
        return self.block_k * self.block_n * 2

    @property
    def c_pitch(self) -> int:
        """Row pitch of the staged C tile: 16 bytes of padding keep its stores conflict free."""
        return self.block_n * 2 + 16

    @property
    def smem_bytes(self) -> int:
        ring = self.stages * (self.a_stage_bytes + self.b_stage_bytes)
        return max(ring, self.block_m * self.c_pitch)

    def launch(self) -> dict:
        return {
            "threads": [self.threads, 1, 1],
            "shared_bytes": self.smem_bytes,
            "block": [self.block_m, self.block_n, self.block_k],
            "persistent": False,
        }


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

    def emit(self) -> str:
        cfg, e = self.cfg, self.e
        ci = e.const
        T = cfg.threads
        a_ptr = e.value("llvm.ptrtoint %A : !llvm.ptr to i64")
        b_ptr = e.value("llvm.ptrtoint %B : !llvm.ptr to i64")
        c_ptr = e.value("llvm.ptrtoint %C : !llvm.ptr to i64")
        tid = e.value("gpu.thread_id x", "tid")
        bid = e.linear_block_id()
        lane = e.arith("remui", tid, ci(32), hint="lane")
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

        # --- per-thread cp.async assignments (row pointer, bounds, shared offset) ---------------
        a_chunks_row = cfg.block_k // 8
        b_chunks_row = cfg.block_n // 8
        a_jobs = []
        for i in range(cfg.block_m * a_chunks_row // T):
            q = e.add(tid, i * T)
            row = e.arith("divui", q, ci(a_chunks_row))
            chunk = e.arith("remui", q, ci(a_chunks_row))
            grow = e.arith("addi", m0, row)
            row_ok = e.cmp("ult", grow, m)
            col = e.mul(chunk, 8)
            src = e.arith(
                "addi",
                a_ptr,
                self.i64(e.mul(e.arith("addi", e.arith("muli", grow, k), col), 2)),
                "i64",
            )
            phys = e.arith("xori", chunk, self.swizzle_xor(row, a_chunks_row))
            dst = e.arith("addi", e.mul(row, cfg.block_k * 2), e.mul(phys, 16))
            a_jobs.append((src, row_ok, col, dst))
        b_jobs = []
        for i in range(cfg.block_k * b_chunks_row // T):
            q = e.add(tid, i * T)
            row = e.arith("divui", q, ci(b_chunks_row))
            chunk = e.arith("remui", q, ci(b_chunks_row))
            gcol = e.arith("addi", n0, e.mul(chunk, 8))
            col_ok = e.cmp("ult", gcol, n)
            src = e.arith(
                "addi",
                b_ptr,
                self.i64(e.mul(e.arith("addi", e.arith("muli", row, n), gcol), 2)),
                "i64",
            )
            phys = e.arith("xori", chunk, self.swizzle_xor(row, b_chunks_row))
            dst = e.arith("addi", e.mul(row, cfg.block_n * 2), e.mul(phys, 16))
            b_jobs.append((src, col_ok, row, dst))

        def issue(kt: str) -> None:
            """cp.async of K tile `kt` into its slot; past K (or M/N) the copy zero-fills."""
            slot = e.arith("remui", kt, ci(cfg.stages))
            k0 = e.mul(kt, cfg.block_k)
            a_slot = e.arith("addi", a_smem, e.mul(slot, cfg.a_stage_bytes))
            b_slot = e.arith("addi", b_smem, e.mul(slot, cfg.b_stage_bytes))
            k_bytes = self.i64(e.mul(k0, 2))
            for src, row_ok, col, dst in a_jobs:
                ok = e.arith("andi", row_ok, e.cmp("ult", e.arith("addi", k0, col), k), "i1")
                addr = e.value(
                    f"arith.select {ok}, {e.arith('addi', src, k_bytes, 'i64')}, {a_ptr} : i64"
                )
                size = e.value(f"arith.select {ok}, {ci(16, 'i32')}, {ci(0, 'i32')} : i32")
                e.asm(
                    "cp.async.cg.shared.global [$0], [$1], 16, $2;",
                    "r,l,r",
                    [(self.i32(e.arith("addi", a_slot, dst)), "i32"), (addr, "i64"), (size, "i32")],
                )
            row_bytes = self.i64(e.mul(e.arith("muli", k0, n), 2))
            for src, col_ok, row, dst in b_jobs:
                ok = e.arith("andi", col_ok, e.cmp("ult", e.arith("addi", k0, row), k), "i1")
                addr = e.value(
                    f"arith.select {ok}, {e.arith('addi', src, row_bytes, 'i64')}, {b_ptr} : i64"
                )
                size = e.value(f"arith.select {ok}, {ci(16, 'i32')}, {ci(0, 'i32')} : i32")
                e.asm(
                    "cp.async.cg.shared.global [$0], [$1], 16, $2;",
                    "r,l,r",
                    [(self.i32(e.arith("addi", b_slot, dst)), "i32"), (addr, "i64"), (size, "i32")],
                )

        # prologue: stages-1 tiles in flight (tiles past K load zeros)
        for s in range(cfg.stages - 1):
            issue(ci(s))
            e.asm("cp.async.commit_group;", "")

        # --- per-thread ldmatrix offsets ----------------------------------------------------------
        lrow = e.arith("remui", lane, ci(16))
        lhalf = e.arith("divui", lane, ci(16))
        a_row = e.arith("addi", e.mul(wm, cfg.warp_m), lrow)
        a_x = self.swizzle_xor(a_row, a_chunks_row)
        a_off = []
        for kk in range(cfg.block_k // 16):
            phys = e.arith("xori", e.add(lhalf, 2 * kk), a_x)
            a_off.append(e.arith("addi", e.mul(a_row, cfg.block_k * 2), e.mul(phys, 16)))
        b_x = self.swizzle_xor(lrow, b_chunks_row)
        b_off = []
        for np_ in range(cfg.warp_n // 16):
            chunk = e.arith("addi", e.mul(wn, cfg.warp_n // 8), e.add(lhalf, 2 * np_))
            phys = e.arith("xori", chunk, b_x)
            b_off.append(e.arith("addi", e.mul(lrow, cfg.block_n * 2), e.mul(phys, 16)))

        mf_count, nf_count = cfg.warp_m // 16, cfg.warp_n // 8
        n_acc = mf_count * nf_count * 4
        zero = e.value("arith.constant 0.0 : f32")
        kt = e.fresh("kt")
        iters = [e.fresh("c") for _ in range(n_acc)]
        result = e.fresh("acc")
        e.open(
            f"{result}:{n_acc} = scf.for {kt} = {ci(0)} to {k_tiles} step {ci(1)} iter_args("
            + ", ".join(f"{v} = {zero}" for v in iters)
            + ") -> ("
            + ", ".join(["f32"] * n_acc)
            + ") {"
        )
        e.asm(f"cp.async.wait_group {cfg.stages - 2};", "")
        e.line("gpu.barrier")
        issue(e.add(kt, cfg.stages - 1))
        e.asm("cp.async.commit_group;", "")
        slot = e.arith("remui", kt, ci(cfg.stages))
        a_slot = e.arith("addi", a_smem, e.mul(slot, cfg.a_stage_bytes))
        b_slot = e.arith("addi", b_smem, e.mul(slot, cfg.b_stage_bytes))
        acc = list(iters)
        regs4 = "!llvm.struct<(i32, i32, i32, i32)>"
        f4 = "!llvm.struct<(f32, f32, f32, f32)>"
        kind = cfg.dtype
        for kk in range(cfg.block_k // 16):
            a_base = self.i32(e.arith("addi", a_slot, a_off[kk]))
            a_frags = []
            for mf in range(mf_count):
                r = e.asm(
                    f"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{$0, $1, $2, $3}}, "
                    f"[$4+{mf * 16 * cfg.block_k * 2}];",
                    "=r,=r,=r,=r,r",
                    [(a_base, "i32")],
                    regs4,
                    "fa",
                )
                a_frags.append([e.value(f"llvm.extractvalue {r}[{i}] : {regs4}") for i in range(4)])
            b_frags = []
            for np_ in range(cfg.warp_n // 16):
                b_addr = self.i32(e.arith("addi", b_slot, b_off[np_]))
                r = e.asm(
                    f"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{$0, $1, $2, $3}}, "
                    f"[$4+{kk * 16 * cfg.block_n * 2}];",
                    "=r,=r,=r,=r,r",
                    [(b_addr, "i32")],
                    regs4,
                    "fb",
                )
                vals = [e.value(f"llvm.extractvalue {r}[{i}] : {regs4}") for i in range(4)]
                b_frags += [vals[0:2], vals[2:4]]
            for mf in range(mf_count):
                for nf in range(nf_count):
                    base_idx = 4 * (mf * nf_count + nf)
                    cur = acc[base_idx : base_idx + 4]
                    r = e.asm(
                        f"mma.sync.aligned.m16n8k16.row.col.f32.{kind}.{kind}.f32 "
                        "{$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
                        "=f,=f,=f,=f,r,r,r,r,r,r,0,1,2,3",
                        [(v, "i32") for v in a_frags[mf]]
                        + [(v, "i32") for v in b_frags[nf]]
                        + [(v, "f32") for v in cur],
                        f4,
                        "d",
                    )
                    for i in range(4):
                        acc[base_idx + i] = e.value(f"llvm.extractvalue {r}[{i}] : {f4}")
        e.line("scf.yield " + ", ".join(acc) + " : " + ", ".join(["f32"] * n_acc))
        e.close()
        e.asm("cp.async.wait_group 0;", "")
        e.line("gpu.barrier")

        # --- epilogue: registers -> padded shared tile -> 16-byte global stores ------------------
        cvt = "cvt.rn.f16x2.f32" if cfg.dtype == "f16" else "cvt.rn.bf16x2.f32"
        crow = e.arith("addi", e.mul(wm, cfg.warp_m), e.arith("divui", lane, ci(4)))
        ccol = e.arith("addi", e.mul(wn, cfg.warp_n), e.mul(e.arith("remui", lane, ci(4)), 2))
        c_thread = self.i32(
            e.arith("addi", base, e.arith("addi", e.mul(crow, cfg.c_pitch), e.mul(ccol, 2)))
        )
        for mf in range(mf_count):
            for nf in range(nf_count):
                idx = 4 * (mf * nf_count + nf)
                for half in range(2):
                    imm = (mf * 16 + half * 8) * cfg.c_pitch + nf * 16
                    e.asm(
                        f"{{ .reg .b32 h; {cvt} h, $2, $1; st.shared.b32 [$0+{imm}], h; }}",
                        "r,f,f",
                        [
                            (c_thread, "i32"),
                            (f"{result}#{idx + 2 * half}", "f32"),
                            (f"{result}#{idx + 2 * half + 1}", "f32"),
                        ],
                    )
        e.line("gpu.barrier")
        for i in range(cfg.block_m * b_chunks_row // T):
            q = e.add(tid, i * T)
            row = e.arith("divui", q, ci(b_chunks_row))
            chunk = e.arith("remui", q, ci(b_chunks_row))
            grow = e.arith("addi", m0, row)
            gcol = e.arith("addi", n0, e.mul(chunk, 8))
            ok = e.arith("andi", e.cmp("ult", grow, m), e.cmp("ult", gcol, n), "i1")
            src = self.i32(
                e.arith("addi", base, e.arith("addi", e.mul(row, cfg.c_pitch), e.mul(chunk, 16)))
            )
            dst = e.arith(
                "addi",
                c_ptr,
                self.i64(e.mul(e.arith("addi", e.arith("muli", grow, n), gcol), 2)),
                "i64",
            )
            e.asm(
                "{ .reg .pred p; .reg .b32 x, y, z, w; setp.ne.b32 p, $2, 0; "
                "ld.shared.v4.b32 {x, y, z, w}, [$0]; @p st.global.v4.b32 [$1], {x, y, z, w}; }",
                "r,l,r",
                [(src, "i32"), (dst, "i64"), (e.value(f"arith.extui {ok} : i1 to i32"), "i32")],
            )
        return self.module()

    def module(self) -> str:
        cfg = self.cfg
        return (
            "module attributes {gpu.container_module} {\n"
            "  gpu.module @kernels {\n"
            f"    gpu.func @{self.interface.name}({self.interface.signature()}) kernel attributes "
            f"{{known_block_size = array<i32: {cfg.threads}, 1, 1>}} {{\n"
            f"{self.e.body(self.interface.prologue)}\n"
            "      gpu.return\n"
            "    }\n"
            "  }\n"
            "}\n"
        )


def default_interface(cfg: AmpereGemmConfig) -> KernelInterface:
    """A, B, C as global pointers, then M, N, K as i32."""
    params = [("%A", "!llvm.ptr"), ("%B", "!llvm.ptr"), ("%C", "!llvm.ptr")]
    return KernelInterface(cfg.name, params + [("%M", "i32"), ("%N", "i32"), ("%K", "i32")])


def ampere_gemm_mlir(cfg: AmpereGemmConfig, interface: KernelInterface | None = None) -> str:
    """MLIR text (a gpu.module with one kernel) for `cfg`; the interface must bind %A, %B, %C
    (!llvm.ptr) and %M, %N, %K (i32)."""
    return _Kernel(cfg, interface or default_interface(cfg)).emit()
