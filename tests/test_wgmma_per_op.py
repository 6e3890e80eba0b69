"""tile.gemm lowered one op at a time to wgmma (compiler/passes/_wgmma.py, plan-wgmma-gemms).

The layouts are checked against wgmma's register contract on the CPU (the index arithmetic the
lowering emits, folded to constants); kernels the whole-kernel matcher declines (a T.Parallel
epilogue, a batched grid with transpose_B, A from registers, attention's two gemms with the
softmax between them) compile to wgmma PTX that ptxas assembles for sm_90a (to mma.sync on
sm_80: plan-mma-sync-gemms), and keep their CPU numerics. Numerics of the wgmma kernels on the
H200: the GPU suite (its sm_90a GEMM kernels take this path) and benchmarks/fused_gemm.py.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
import torch
from conftest import TOLERANCES, randn
from mlir import ir
from mlir.dialects import func
from mlir.passmanager import PassManager

import tilec
from tilec.compiler.layouts.linear import blocked
from tilec.compiler.passes._scalar import index
from tilec.compiler.passes._wgmma import (
    SharedOperandLayout,
    accumulator_layout,
    accumulator_register,
    operand_a_layout,
    operand_a_registers,
)
from tilec.compiler.targets.cuda import ptxas_path

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
# the sm_80 suite's kernels, compiled here for sm_90a (and once for sm_80)
from mma_sync_kernels import attention, batched, bias_relu, transposed  # noqa: E402

needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")


def element_indices(layout: SharedOperandLayout, points: list[tuple[int, int]]) -> list[int]:
    """`layout.element_index` of each (row, column), as the lowering emits it, folded."""
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        index_type = ir.IndexType.get()
        with ir.InsertionPoint(module.body):
            function = func.FuncOp("points", ir.FunctionType.get([], [index_type] * len(points)))
            with ir.InsertionPoint(function.add_entry_block()):
                func.ReturnOp([layout.element_index(index(r), index(c)) for r, c in points])
        PassManager.parse("builtin.module(canonicalize)").run(module.operation)
        returned = function.entry_block.operations[len(function.entry_block.operations) - 1]
        return [ir.IntegerAttr(operand.owner.attributes["value"]).value
                for operand in returned.operands]


@pytest.mark.parametrize("reordered", [False, True])
@pytest.mark.parametrize("warpgroups,m_atoms,k,element_bytes", [
    (1, 2, 32, 2), (1, 1, 64, 2), (2, 1, 64, 2), (2, 2, 16, 2), (1, 2, 64, 1), (1, 1, 32, 4),
])
def test_a_layout_gives_wgmma_rows_to_the_accumulator(warpgroups: int, m_atoms: int, k: int,
                                                      element_bytes: int,
                                                      reordered: bool) -> None:
    """Thread t's fragment register r holds the accumulator element the hardware writes to
    t's wgmma register: the row A's layout stores at the instruction's row (its own row for
    wgmma's fragment, a reordered one for the blocked accumulator), the column the instruction
    gives the lane."""
    block_m, block_n = 64 * m_atoms * warpgroups, 64
    span = next(s for s in (128, 64, 32) if (k * element_bytes) % s == 0)
    reorder = (warpgroups, m_atoms) if reordered else (0, 0)
    a = SharedOperandLayout((block_m, k), element_bytes, True, span, *reorder)
    rows = element_indices(a, [(row, 0) for row in range(block_m)])
    per_row = span // element_bytes
    physical_row = [value // per_row for value in rows]  # column 0 stays in its row's chunk 0
    assert sorted(physical_row) == list(range(block_m))
    assert reordered or physical_row == list(range(block_m))
    layout = accumulator_layout(block_m, block_n, warpgroups, reordered)
    for tid in range(layout.threads):
        lane, warp, slab = tid % 32, (tid // 32) % 4, tid // 128
        for atom in range(m_atoms):
            for register in range(block_n // 2):
                flat = accumulator_register(atom, register, block_n, reordered)
                row, column = layout.apply(flat, tid % layout.lanes, tid // layout.lanes)
                half, group = (register // 2) % 2, register // 4
                hardware_row = slab * 64 * m_atoms + atom * 64 + 16 * warp + 8 * half + lane // 4
                assert physical_row[row] == hardware_row
                assert column == 8 * group + 2 * (lane % 4) + register % 2


@pytest.mark.parametrize("reordered", [False, True])
@pytest.mark.parametrize("warpgroups,m_atoms,k,element_bytes", [
    (1, 2, 32, 2), (2, 1, 64, 2), (1, 1, 64, 1), (1, 2, 16, 4),
])
def test_register_a_packs_wgmma_a_fragment(warpgroups: int, m_atoms: int, k: int,
                                           element_bytes: int, reordered: bool) -> None:
    """The fragment registers packed into a0..a3 hold wgmma's A elements: a_{2q+h} of lane l
    in warp w is row 16 w + 8 h + l / 4 of its atom, K bytes 16 q + 4 (l % 4) of the step
    (rows as the accumulator's, so reordered A rows match the blocked accumulator's)."""
    block_m = 64 * m_atoms * warpgroups
    layout = operand_a_layout(block_m, k, warpgroups, element_bytes, reordered)
    accumulator = accumulator_layout(block_m, 64, warpgroups, reordered)
    for tid in range(layout.threads):
        lane, warp = tid % 32, tid // 32
        for atom in range(m_atoms):
            for step in range(k * element_bytes // 32):
                for a, slots in enumerate(operand_a_registers(atom, step, k, element_bytes,
                                                              reordered)):
                    h, q = a % 2, a // 2
                    # the accumulator's row of the same thread for the instruction's row
                    expected_row, _ = accumulator.apply(
                        accumulator_register(atom, 2 * h, 64, reordered), lane, warp)
                    for c, slot in enumerate(slots):
                        row, column = layout.apply(slot, lane, warp)
                        assert row == expected_row
                        assert column * element_bytes == 32 * step + 16 * q + 4 * (lane % 4) \
                            + c * element_bytes


@pytest.mark.parametrize("shape,element_bytes,k_major,span", [
    ((128, 32), 2, True, 64), ((128, 64), 2, True, 128), ((64, 16), 2, True, 32),
    ((256, 128), 2, True, 128), ((32, 128), 2, False, 128), ((64, 64), 1, True, 64),
    ((64, 64), 4, True, 128), ((16, 16), 4, True, 32), ((128, 256), 1, True, 128),
    ((64, 256), 1, False, 128), ((32, 96), 2, True, 64),
])
def test_swizzle_keeps_chunks_whole_and_xors_by_row(shape: tuple[int, int], element_bytes: int,
                                                    k_major: bool, span: int) -> None:
    """Each 16-byte chunk lands whole on a 16-byte chunk of its box row, the chunk index XOR-ed
    with the row's place in the 1 KiB pattern (bits 7.. of its address), as TMA and wgmma's
    descriptors lay tiles out; every element has its own place."""
    layout = SharedOperandLayout(shape, element_bytes, k_major, span)
    points = [(r, c) for r in range(shape[0]) for c in range(shape[1])]
    found = element_indices(layout, points)
    assert sorted(found) == list(range(shape[0] * shape[1]))
    chunk, per_row = 16 // element_bytes, span // element_bytes
    place = dict(zip(points, found, strict=True))
    for (row, column), offset in place.items():
        box, within = divmod(column, per_row)
        linear = (box * shape[0] + row) * per_row + within
        phase = (linear * element_bytes // 128) % (span // 16)
        assert offset == linear ^ (phase * chunk)
        if column % chunk:
            assert offset == place[(row, column - 1)] + 1


def staging_indices(layout, registers: list[int], first_column: int,
                    staging: SharedOperandLayout, tid: int) -> tuple[list[int], int]:
    """`_tma_ring.staging_index` of each register of thread `tid`, as the TMA store's
    lowering emits it, folded; and how many XOR bases the thread's registers shared."""
    from tilec.compiler.layouts.emit import thread_coordinates
    from tilec.compiler.passes._tma_ring import staging_index

    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        index_type = ir.IndexType.get()
        with ir.InsertionPoint(module.body):
            function = func.FuncOp("where", ir.FunctionType.get([], [index_type] *
                                                                  len(registers)))
            with ir.InsertionPoint(function.add_entry_block()):
                shift = thread_coordinates(layout, index(tid))
                bases: dict = {}
                func.ReturnOp([staging_index(layout, register, first_column, staging, shift,
                                             bases) for register in registers])
        PassManager.parse("builtin.module(canonicalize)").run(module.operation)
        returned = function.entry_block.operations[len(function.entry_block.operations) - 1]
        return [ir.IntegerAttr(operand.owner.attributes["value"]).value
                for operand in returned.operands], len(bases)


@pytest.mark.parametrize("layout,slabs,staged,element_bytes,bases", [
    # the quickstart: one consumer, f16 C
    (accumulator_layout(128, 128, 1, False), 1, 128, 2, 8),
    # tuned: two consumers, each its own 64-row slab; then a narrower staging tile, two passes
    (accumulator_layout(128, 256, 2, False), 2, 256, 2, 8),
    (accumulator_layout(128, 256, 2, False), 2, 128, 2, 8),
    (accumulator_layout(64, 128, 1, False), 1, 128, 4, 4),  # f32 C: 4 of a box row's 8 chunks
    (accumulator_layout(128, 64, 2, False), 2, 64, 2, 8),
    (accumulator_layout(128, 128, 1, True), 1, 128, 2, 8),  # the blocked accumulator
    # runs of 4 rows a thread: rows 1-3 of a run meet the swizzle's row phase, indexed in full
    (blocked((128, 128), (4, 2), (8, 16), (16, 1), 128), 1, 128, 2, 2),
], ids=["quickstart", "tuned", "tuned_two_passes", "f32", "narrow", "blocked", "row_runs"])
def test_staging_index_places_every_register_as_the_swizzle_does(
        layout, slabs: int, staged: int, element_bytes: int, bases: int) -> None:
    """Each accumulator register lands where the 128B-swizzled staging tile keeps its
    element (slab by slab, each slab's 128-byte column boxes one after another, a 16-byte
    chunk XORed with its row's place in the 1 KiB pattern), pass by pass; the registers share
    a few XOR bases a thread (their row and box offsets folded into the store's immediate:
    the quickstart's 64 address registers were 8 in the whole-kernel GEMM); registers whose
    rows meet the swizzle's row phase are indexed in full."""
    block_m, block_n = layout.shape
    slab_rows = block_m // slabs
    staging = SharedOperandLayout((slab_rows, staged), element_bytes, True, 128)
    per_row, chunk = 128 // element_bytes, 16 // element_bytes
    threads = sorted({0, 1, 2, 3, 4, 5, 13, 31, 32, 63, 77, 100, 127} |
                     ({128, 129, 160, 200, 255} if layout.threads == 256 else set()))
    for part in range(block_n // staged):
        registers = [r for r in range(layout.num_registers)
                     if layout.register_coordinate(r)[1] // staged == part]
        for tid in threads:
            found, shared = staging_indices(layout, registers, part * staged, staging, tid)
            assert shared == bases
            for register, offset in zip(registers, found, strict=True):
                row, column = layout.apply(register, tid % layout.lanes, tid // layout.lanes)
                slab, row = divmod(row, slab_rows)
                box, within = divmod(column - part * staged, per_row)
                linear = (box * slab_rows + row) * per_row + within
                phase = (linear * element_bytes // 128) % 8
                assert offset == slab * slab_rows * staged + (linear ^ (phase * chunk)), \
                    (tid, register)


@needs_ptxas
def test_attention_runs_both_gemms_on_wgmma() -> None:
    """Q K^T from shared tiles, P V with P (the scores' layout, cast) from registers. The
    block's 128 threads would hold S, P and O of 128 rows (320 registers a thread), so
    widen-register-bound-blocks runs it on two warpgroups of 64 rows each."""
    kernel = tilec.compile(attention(2, 4, 1000, 128, block_M=128, block_N=128), out_idx=[-1],
                           target="cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    assert kernel.asm["tile-cuda"].count("tile.wgmma =") == 2
    assert "warpgroups = 2 : i64" in kernel.asm["tile-cuda"]
    lines = [line for line in kernel.asm["ptx"].splitlines()
             if "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in line]
    # 8 K steps of 16 over dim = 128 and over block_N = 128, one 64-row atom per warpgroup
    assert len(lines) == 16 and sum("}, {%r" in line for line in lines) == 8


@needs_ptxas
@pytest.mark.parametrize("factory,args,instructions", [
    (bias_relu, (512, 512, 512), "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"),
    (lambda *s: bias_relu(*s, block_N=256, threads=256), (1000, 1016, 1000),
     "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16"),
    (lambda *s: batched(*s, block_M=128, block_N=128), (4, 256, 256, 512),
     "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16"),
    (lambda *s: batched(*s, block_M=128, block_N=128, in_dtype="float32", out_dtype="float32"),
     (2, 256, 256, 256),  # float32 as tf32: K-major
     "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"),
    (lambda *s: bias_relu(*s, register_a=True), (512, 512, 512),
     "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"),
    # A as K x M (transpose_A): MN-major from shared memory, the instruction's transpose-A bit
    (transposed, (136, 200, 520), "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16"),
    (lambda *s: transposed(*s, block_M=128, block_N=128), (256, 256, 512),
     "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16"),
])
def test_declined_kernels_run_wgmma_per_op_on_sm90a(factory, args, instructions: str) -> None:
    kernel = tilec.compile(factory(*args), out_idx=[-1], target="cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    ptx = kernel.asm["ptx"]
    assert "tile.tensorcore" not in kernel.asm["tile-cuda"]  # not the whole-kernel generator
    assert "tile.wgmma" in kernel.asm["tile-cuda"]
    # per 32-byte K step of the loop's K tile (the user's 32 columns: 64 bytes of 16-bit, 128
    # of float32; 64 columns where widen-k-tiles made the loop's K rows 128 bytes), one
    # instruction per 64-row atom of a warpgroup;
    # A from registers as four 32-bit registers ({d}, {a0, a1, a2, a3}, descB), else descA
    # (twice where LLVM peels the first iteration off a TMA ring's loop: it releases no slot)
    atoms = 2 if "n128" in instructions else 1
    lines = [line for line in ptx.splitlines() if instructions in line]
    tma = "tile.tma_ring" in kernel.asm["tile-cuda"]
    k_tile = int(re.search(r"k_tile = (\d+)", kernel.asm["tile-cuda"]).group(1))
    per_loop = k_tile * (4 if "tf32" in instructions else 2) // 32 * atoms
    assert len(lines) in ((per_loop, 2 * per_loop) if tma else (per_loop,))
    register_a = "a_registers = true" in kernel.asm["tile-cuda"]
    assert all(("}, {%r" in line) == register_a for line in lines)
    # 16-bit types: after scale-d, scale-a and scale-b, transpose-A (not for register A) and
    # transpose-B, 1 for an MN-major operand (A stored K x M, B stored K x N)
    if "f16" in instructions:
        tile_ir = kernel.asm["tile"]
        transposes = [] if register_a else ["transpose_a = true" in tile_ir]
        transposes.append("transpose_b = true" not in tile_ir)
        ending = f"p, 1, 1, {', '.join(str(int(t)) for t in transposes)}; }}"
        assert all(line.endswith(ending) for line in lines), ending
    for step in ("wgmma.fence.sync.aligned", "wgmma.commit_group.sync.aligned",
                 "wgmma.wait_group.sync.aligned"):
        assert step in ptx
    if tma:  # 128-byte K rows (32 float32): a producer warpgroup fills the tiles by TMA
        assert "cp.async.bulk.tensor" in ptx and "cp.async.cg.shared.global" not in ptx
    else:
        assert "fence.proxy.async.shared::cta" in ptx and "cp.async.cg.shared.global" in ptx


@needs_ptxas
def test_same_kernel_runs_mma_sync_on_sm80() -> None:
    kernel = tilec.compile(bias_relu(256, 256, 256), out_idx=[-1], target="cuda:sm_80")
    assert kernel.artifact.binary_kind == "cubin"
    assert "wgmma" not in kernel.asm["ptx"] and "tile.wgmma" not in kernel.asm["tile-cuda"]
    assert "tile.mma_sync" in kernel.asm["tile-cuda"] and "mma.sync.aligned" in kernel.asm["ptx"]


@needs_ptxas
@pytest.mark.parametrize("arch, setting, per_op", [
    ("sm_90a", None, False), ("sm_90a", "1", True), ("sm_80", None, False),
    ("sm_80", "1", True)])
def test_canonical_quickstart_runs_per_op_with_the_switch(arch: str, setting: str | None,
                                                          per_op: bool,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    """lower-gemm-to-tensorcore's whole kernel takes the quickstart by default on both chips;
    with TILEC_PER_OP_GEMMS=1 its gemm lowers where it stands."""
    from frontend_kernels import matmul

    if setting is None:
        monkeypatch.delenv("TILEC_PER_OP_GEMMS", raising=False)
    else:
        monkeypatch.setenv("TILEC_PER_OP_GEMMS", setting)
    a = torch.empty(1024, 1024, dtype=torch.float16)
    kernel = matmul.compile(a, a, target=f"cuda:{arch}")
    assert ("tile.tensorcore" in kernel.asm["tile-cuda"]) != per_op
    per_op_attr = "tile.wgmma" if arch == "sm_90a" else "tile.mma_sync"
    assert (per_op_attr in kernel.asm["tile-cuda"]) == per_op


def test_cpu_numerics_of_the_declined_kernels(rng: torch.Generator) -> None:
    a, b = randn((200, 96), torch.float16, rng), randn((96, 136), torch.float16, rng)
    bias = randn((136,), torch.float16, rng)
    out = tilec.compile(bias_relu(200, 136, 96, block_M=64, block_N=64), out_idx=[-1],
                        target="cpu").get_profiler().run_poisoned(a, b, bias)
    expected = torch.relu(a.double() @ b.double() + bias.double())
    torch.testing.assert_close(out.double(), expected, **TOLERANCES[torch.float16])
    out = tilec.compile(bias_relu(200, 136, 96, block_M=64, block_N=64, register_a=True),
                        out_idx=[-1], target="cpu").get_profiler().run_poisoned(a, b, bias)
    torch.testing.assert_close(out.double(), expected, **TOLERANCES[torch.float16])
    q, k, v = (randn((1, 150, 2, 64), torch.float16, rng) for _ in range(3))
    out = tilec.compile(attention(1, 2, 150, 64, block_M=64, block_N=64), out_idx=[-1],
                        target="cpu").get_profiler().run_poisoned(q, k, v)
    expected = torch.nn.functional.scaled_dot_product_attention(
        *(x.double().transpose(1, 2) for x in (q, k, v))).transpose(1, 2)
    torch.testing.assert_close(out.double(), expected, **TOLERANCES[torch.float16])
    a, b = randn((3, 130, 64), torch.bfloat16, rng), randn((3, 70, 64), torch.bfloat16, rng)
    out = tilec.compile(batched(3, 130, 70, 64, block_M=64, block_N=64), out_idx=[-1],
                        target="cpu").get_profiler().run_poisoned(a, b)
    expected = a.double() @ b.double().transpose(1, 2)
    torch.testing.assert_close(out.double(), expected, **TOLERANCES[torch.bfloat16])


@needs_ptxas
def test_quickstart_k_rows_are_widened_to_a_128_byte_tma_ring() -> None:
    """block_K = 32 (the quickstart's): widen-k-tiles runs the loop over 64-column tiles, so
    A's K-major rows span 128 bytes, one 64 x 128 box as the whole-kernel GEMM's slots, B two
    64-column boxes of 64 rows, C its TMA store (the 64B-swizzled ring of 32-column rows
    stays for loops widen-k-tiles leaves, lit_tests/passes/plan-tma-pipelines.mlir)."""
    kernel = tilec.compile(bias_relu(1000, 1016, 520), out_idx=[-1], target="cuda:sm_90a")
    launch = kernel.artifact.launch
    assert launch["tma"] == {"map0": {"box": [64, 128], "swizzle": 128},
                             "map1": {"box": [64, 64], "swizzle": 128},
                             "map2": {"box": [64, 128], "swizzle": 128}}
    ptx = kernel.asm["ptx"]
    assert "cp.async.bulk.tensor.2d.shared::cluster.global" in ptx
    assert "cp.async.cg.shared.global" not in ptx and "wgmma.mma_async" in ptx


@needs_ptxas
@pytest.mark.parametrize("factory,args,consumers,boxes,tiles,c_param", [
    (lambda *s: bias_relu(*s, block_N=256, block_K=64, threads=256), (1000, 1016, 520), 2,
     {"map0": [64, 128], "map1": [64, 64], "map2": [64, 64]}, 8 * 4, 3),
    (lambda *s: batched(*s, block_M=128, block_N=128, block_K=64), (3, 136, 200, 96), 1,
     {"map0": [64, 128, 1], "map1": [64, 128, 1], "map2": [64, 128, 1]}, 2 * 2 * 3, 2),
])
@pytest.mark.parametrize("private", [False, True], ids=["barriers", "private_tiles"])
def test_loops_with_128_byte_rows_are_fed_by_a_tma_ring(factory, args, consumers: int,
                                                        boxes: dict, tiles: int,
                                                        c_param: int, private: bool,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A producer warpgroup beside the kernel's streams the operand tiles by TMA into 128B-
    swizzled ring slots (one map per copy, a box per 128-byte column), the kernel's warpgroups
    wait on full barriers and hand slots back on empty ones, registers move from the producer
    to two of them, and they meet at block barriers named over them only (by default only
    at the store's; TILEC_RING_PRIVATE_TILES=0 keeps the others); the grid is persistent
    (one block per multiprocessor, here one per tile: fewer tiles than the H200's 132). The
    accumulator goes out through a swizzled staging tile and TMA stores (a third map, C's),
    issued without waiting for them but before the staging tile is written again; with two
    consumer warpgroups each stages and stores its own 64-row slab (C's box 64 rows), between
    barriers of its own 128 threads. Thread 0 prefetches the three maps."""
    monkeypatch.setenv("TILEC_RING_PRIVATE_TILES", "1" if private else "0")
    kernel = tilec.compile(factory(*args), out_idx=[-1], target="cuda:sm_90a")
    assert kernel.artifact.binary_kind == "cubin"
    assert f"tile.tma_ring = {{consumers = {consumers} : i64, overlap = true, persistent = " \
        "true" in kernel.asm["tile-cuda"]
    launch = kernel.artifact.launch
    threads = 128 * (consumers + 1)
    assert launch["threads"][0] == threads and launch["grid"] == [tiles]
    assert [slot for slot in launch["abi"] if slot[0] == "tma"] == [
        ["tma", 0, "map0"], ["tma", 1, "map1"], ["tma", c_param, "map2"]]
    assert {role: spec["box"] for role, spec in launch["tma"].items()} == boxes
    assert all(spec["swizzle"] == 128 for spec in launch["tma"].values())
    ptx = kernel.asm["ptx"]
    # A in one box; B in one (N x K) or four (64 x 256 K x N tile: 64-column boxes), per
    # iteration of the producer's loop as LLVM unrolled it (K = 96: both iterations)
    stores = ptx.count(".global.shared::cta.tile.bulk_group")
    loads = ptx.count("cp.async.bulk.tensor") - stores
    assert loads and loads % (5 if consumers == 2 else 2) == 0
    assert stores == 2 * consumers and "cp.async.bulk.wait_group.read" in ptx
    assert ("bar.sync \t%r" in ptx) == (consumers == 2)  # a slab's barrier: 2 + its warpgroup
    # with private tiles, the only barriers over the consumers are the store's two (one
    # warpgroup: named barrier 1 over its 128 threads); the statements touch no shared memory
    # but the ring's slots and the staging tile, so none around the loop or between tiles
    # (_tma_ring's private_tiles); else one ahead of the loop, one after its drain, one per tile too
    over_consumers = ptx.count(f"bar.sync \t1, {threads - 128}")
    if private:
        assert over_consumers == (2 if consumers == 1 else 0)
    else:
        assert over_consumers >= (2 if consumers == 1 else 0) + 3
    for needed in (f".maxntid {threads}, 1, 1", "mbarrier.try_wait.parity",
                   "mbarrier.arrive.expect_tx"):
        assert needed in ptx
    # registers move to two consumer warpgroups (384 threads: 168 a thread, 232 after it)
    # whose epilogue loads the bias; one warpgroup's 256 threads may hold 255 each: no cap,
    # no setmaxnreg (as the whole-kernel GEMM's quickstart)
    moves = ("setmaxnreg.dec.sync.aligned.u32 \t40", "setmaxnreg.inc.sync.aligned.u32 \t232",
             ".maxnreg 168")
    assert all((needed in ptx) == (consumers == 2) for needed in moves)
    assert consumers == 2 or ".maxnreg" not in ptx
    assert "cp.async.cg.shared.global" not in ptx
    # thread 0 prefetches each map while it initializes the mbarriers, as the whole-kernel
    # GEMM does: the producer's first copy and the first TMA store find them cached
    assert ptx.count("prefetch.tensormap") == len(launch["tma"])
    assert ptx.index("prefetch.tensormap") < ptx.index("fence.mbarrier_init")


@needs_ptxas
def test_two_consumers_keep_their_registers_where_the_accumulator_fits() -> None:
    """A 128 x 256 GEMM on two consumer warpgroups (384 threads: 168 registers a thread): its
    ring loop holds the accumulator alone (128 registers) and its epilogue computes on it
    alone (halves it, casts it), so no registers move (no setmaxnreg or .maxnreg, as the
    whole-kernel GEMM); ptxas fits it under the cap without spilling."""
    from tilec.compiler.tensorcore.ptx import ptxas_check

    kernel = tilec.compile(transposed(1024, 1024, 1024, block_M=128, block_N=256, block_K=64),
                           out_idx=[-1], target="cuda:sm_90a")
    ptx = kernel.asm["ptx"]
    assert "tile.tma_ring = {consumers = 2" in kernel.asm["tile-cuda"]
    assert "setmaxnreg" not in ptx and ".maxnreg" not in ptx
    report = ptxas_check(ptx, "sm_90a")
    assert report.ok and report.spill_bytes == 0 and report.registers <= 168, report.log


@needs_ptxas
@pytest.mark.parametrize("knobs,stages", [
    ({"block_N": 256, "block_K": 64, "threads": 256}, 4),  # 4 x 48 KiB fill shared memory
    # the quickstart's 128 x 128 x 32, widened to 64 columns: 6 x 32 KiB beside 32 KiB of
    # staging
    ({}, 6),
])
def test_ring_gemms_keep_their_wgmmas_pipelined(knobs: dict, stages: int) -> None:
    """The accumulator's registers (a T.clear's zeros, the epilogue's writes of the tile
    before) are final before wgmma.fence: ptxas injects no warpgroup.arrive / wait and does
    not serialize the wgmmas (C7520, which the plain per-op GEMM had), and nothing spills. A
    one-gemm ring is deeper than the user's stages where shared memory holds it beside the
    staging tile, up to 1 KiB of K in flight (the quickstart's 3 slots of 64 bytes, before
    widen-k-tiles, left TMA's latency exposed)."""
    from tilec.compiler.tensorcore.ptx import ptxas_check

    kernel = tilec.compile(bias_relu(1024, 1024, 1024, **knobs), out_idx=[-1],
                           target="cuda:sm_90a")
    report = ptxas_check(kernel.asm["ptx"], "sm_90a")
    assert report.ok and report.spill_bytes == 0, report.log
    for warning in ("C7519", "C7517", "C7520"):
        assert warning not in report.log, report.log
    assert f"overlap = true, persistent = true, stages = {stages} : i64}}" in \
        kernel.asm["tile-cuda"]


@needs_ptxas
@pytest.mark.parametrize("knobs,consumers,span", [
    ({"block_N": 256, "block_K": 64, "threads": 256}, 2, 128),
    ({}, 1, 64),  # the quickstart's 32 columns: 64-byte rows, TMA's 64B swizzle
])
def test_register_a_chain_runs_on_a_tma_ring(knobs: dict, consumers: int, span: int,
                                             monkeypatch, tmp_path) -> None:
    """T.copy(A_shared, A_frag) then T.gemm(A_frag, B_shared, C): A's tile, read by no gemm,
    is filled by TMA in wgmma's K-major swizzled layout (tile.shared_layout written by
    plan-tma-pipelines) and the consumers load their A registers from the ring's slot; the
    wgmmas take A from registers, B by descriptor; no cp.async is left. Without the K steps
    (TILEC_REGISTER_A_STEPS=0; the default is the next test's) the gemm's group is waited for
    in its own iteration (overlap = false): the next iteration rewrites the A registers it
    reads. ptxas serializes nothing and spills nothing."""
    from tilec.compiler.tensorcore.ptx import ptxas_check

    monkeypatch.setenv("TILEC_REGISTER_A_STEPS", "0")
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    kernel = tilec.compile(bias_relu(1000, 1016, 520, register_a=True, **knobs), out_idx=[-1],
                           target="cuda:sm_90a")
    tile_ir = kernel.asm["tile-cuda"]
    assert f"tile.tma_ring = {{consumers = {consumers} : i64, overlap = false" in tile_ir
    assert f"tile.shared_layout = {{k_major = true, m_atoms = 0 : i64, span = {span} : i64, " \
        "warpgroups = 0 : i64}" in tile_ir
    ptx = kernel.asm["ptx"]
    wgmmas = [line for line in ptx.splitlines() if "wgmma.mma_async" in line]
    assert wgmmas and all("}, {%r" in line for line in wgmmas)  # A's four registers
    assert "cp.async.bulk.tensor.2d.shared::cluster.global" in ptx
    assert "cp.async.cg.shared.global" not in ptx and "ld.shared" in ptx
    assert "wgmma.wait_group.sync.aligned \t1" not in ptx
    report = ptxas_check(ptx, "sm_90a")
    assert report.ok and report.spill_bytes == 0, report.log
    for warning in ("C7519", "C7517", "C7520"):
        assert warning not in report.log, report.log


@needs_ptxas
@pytest.mark.parametrize("step_groups,in_flight", [(None, 3), ("1", 1), ("7", 3)])
def test_register_a_steps_keep_the_chains_groups_in_flight(monkeypatch, tmp_path,
                                                           step_groups: str | None,
                                                           in_flight: int) -> None:
    """By default (tile.register_a_steps) the register-A chain's gemm loads each 32-byte K step's A
    registers from the ring's slot right before that step's wgmmas, after wait_group 3 (the
    same step's group of the iteration before has read those registers), and commits each
    step as a group; the ring keeps 4 groups of an iteration in flight into the next one and
    hands a slot back after wait_group 4. With TILEC_REGISTER_A_STEP_GROUPS=1 a step's loads
    wait until one group is left (the whole-kernel GEMM's schedule); more than 3 is 3. ptxas
    serializes nothing and spills nothing."""
    from tilec.compiler.tensorcore.ptx import ptxas_check

    if step_groups is not None:
        monkeypatch.setenv("TILEC_REGISTER_A_STEP_GROUPS", step_groups)
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    kernel = tilec.compile(bias_relu(1000, 1016, 520, register_a=True, block_N=256,
                                     block_K=64, threads=256), out_idx=[-1],
                           target="cuda:sm_90a")
    tile_ir = kernel.asm["tile-cuda"]
    assert "groups = 4 : i64, overlap = true" in tile_ir and "{tile.a_step_loads}" in tile_ir
    ptx = kernel.asm["ptx"]
    lines = [line.strip() for line in ptx.splitlines()
             if "wgmma." in line or line.strip().startswith("ld.shared.b32")]
    first = lines.index(f"wgmma.wait_group.sync.aligned \t{in_flight};")
    # one K step: the wait, its atom's four A registers, the fence, its wgmma, the commit
    assert [line.split()[0] for line in lines[first:first + 8]] == [
        "wgmma.wait_group.sync.aligned", *["ld.shared.b32"] * 4, "wgmma.fence.sync.aligned;",
        "{", "wgmma.commit_group.sync.aligned;"]
    assert "wgmma.wait_group.sync.aligned \t4;" in ptx
    report = ptxas_check(ptx, "sm_90a")
    assert report.ok and report.spill_bytes == 0, report.log
    for warning in ("C7519", "C7517", "C7520", "C7515"):
        assert warning not in report.log, report.log


@needs_ptxas
@pytest.mark.parametrize("register_a", [False, True])
def test_folded_clear_leaves_the_accumulator_to_the_first_wgmma(monkeypatch, tmp_path,
                                                                 register_a: bool) -> None:
    """By default (TILEC_FOLD_ACCUMULATOR_CLEARS=0 turns it off) the T.clear before the ring
    loop is gone, the gemm clears in the ring's first iteration (scale-d 0), so no thread
    writes zeros into its 128 accumulator registers before each tile (unfolded: 127 register
    moves of one zero in the PTX); shared A and the register-A chain alike. ptxas serializes
    nothing and spills nothing."""
    from tilec.compiler.tensorcore.ptx import ptxas_check

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    moves = re.compile(r"^\s+mov\.b32\s+%r\d+, %r\d+;", re.MULTILINE)
    counts = {}
    for folded in (False, True):
        monkeypatch.setenv("TILEC_FOLD_ACCUMULATOR_CLEARS", "1" if folded else "0")
        kernel = tilec.compile(bias_relu(1000, 1016, 520, register_a=register_a, block_N=256,
                                         block_K=64, threads=256), out_idx=[-1],
                               target="cuda:sm_90a")
        tile_ir = kernel.asm["tile-cuda"]
        assert ("tile.clear_first_iteration" in tile_ir) == folded
        assert ("tile.fill" in tile_ir) != folded
        counts[folded] = len(moves.findall(kernel.asm["ptx"]))
        report = ptxas_check(kernel.asm["ptx"], "sm_90a")
        assert report.ok and report.spill_bytes == 0, report.log
        for warning in ("C7519", "C7517", "C7520", "C7515"):
            assert warning not in report.log, report.log
    assert counts[False] - counts[True] >= 127, counts
