"""transpose-mn-major-operands (TILEC_TRANSPOSE_MN_MAJOR_OPERANDS=1): an fp8, int8 or tf32 gemm
whose B is stored K x N (or A K x M) reads a K-major copy a T.Parallel makes before it, and so
runs on wgmma where it ran on CUDA cores.

The frontend's IR of such GEMMs, rewritten by the pass as on sm_90a, is compiled for the CPU
target (the reference semantics) and run against float64 on fresh random inputs with the
output poisoned, ragged shapes included; on sm_90a the whole compile gives each type's wgmma,
the copy's 16-byte vector stores into the swizzled tile, and ptxas accepts it without spills.
tests/gpu/test_transpose_mn_major_operands_gpu.py runs it on the H200 against torch._scaled_mm
and torch._int_mm.
"""

from __future__ import annotations

import pytest
import torch
from conftest import TOLERANCES, randn
from mlir import ir
from test_wgmma_dtypes import TYPES  # tilec type, torch type, output, accumulator, wgmma

import tilec
import tilec.dialect as tile_dialect
import tilec.language as T
from tilec.compiler.driver import compile_module
from tilec.compiler.passes._scheduling import TRANSPOSE_OPERANDS_ATTR
from tilec.compiler.passes.transpose_mn_major_operands import TransposeMnMajorOperands
from tilec.compiler.targets.cuda import ptxas_path
from tilec.jit import JITKernel

OPT_IN = "TILEC_TRANSPOSE_MN_MAJOR_OPERANDS"


@tilec.jit
def matmul_stored(A, B, block_M=128, block_N=128, block_K=64, threads=128, num_stages=3,
                  in_dtype=T.float8_e4m3, out_dtype=T.bfloat16, accum_dtype=T.float32,
                  a_k_major=True, b_k_major=False):
    """C = A B with A stored M x K (`a_k_major`) or K x M, B stored N x K (`b_k_major`) or
    K x N."""
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K) if a_k_major else (K, M), in_dtype)
    B: T.Tensor((N, K) if b_k_major else (K, N), in_dtype)
    C = T.empty((M, N), out_dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
        A_s = T.alloc_shared((block_M, block_K) if a_k_major else (block_K, block_M), in_dtype)
        B_s = T.alloc_shared((block_N, block_K) if b_k_major else (block_K, block_N), in_dtype)
        C_f = T.alloc_fragment((block_M, block_N), accum_dtype)
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            if a_k_major:
                T.copy(A[by * block_M, k * block_K], A_s)
            else:
                T.copy(A[k * block_K, by * block_M], A_s)
            if b_k_major:
                T.copy(B[bx * block_N, k * block_K], B_s)
            else:
                T.copy(B[k * block_K, bx * block_N], B_s)
            T.gemm(A_s, B_s, C_f, transpose_A=not a_k_major, transpose_B=b_k_major)
        T.copy(C_f, C[by * block_M, bx * block_N])
    return C


def knobs(name: str, a_k_major: bool, b_k_major: bool) -> dict:
    element, _, out, accum, _ = TYPES[name]
    return {"in_dtype": element, "out_dtype": out, "accum_dtype": accum,
            "block_K": 32 if name == "tf32" else 64, "a_k_major": a_k_major,
            "b_k_major": b_k_major}


def operands(name: str, shape: tuple[int, int, int], a_k_major: bool, b_k_major: bool,
             rng: torch.Generator | None = None, device: str = "cpu"):
    """A and B as stored, random (int8 over its whole range), and the float64 product."""
    m, n, k = shape
    torch_type = TYPES[name][1]
    if device == "meta":
        a = torch.empty(m, k, dtype=torch_type, device="meta")
        b = torch.empty(k, n, dtype=torch_type, device="meta")
    elif name == "s8":
        a = torch.randint(-128, 128, (m, k), generator=rng, dtype=torch.int8)
        b = torch.randint(-128, 128, (k, n), generator=rng, dtype=torch.int8)
    else:
        a, b = randn((m, k), torch_type, rng), randn((k, n), torch_type, rng)
    expected = None if device == "meta" else a.double() @ b.double()
    stored_a = a if a_k_major else a.T.contiguous()
    stored_b = b.T.contiguous() if b_k_major else b
    return stored_a, stored_b, expected


def rewritten(tile_ir: str, arch: str = "sm_90a") -> tuple[ir.Module, str]:
    """The frontend's module after the pass (opted in, for `arch`), and its text."""
    with tile_dialect.new_context():
        module = ir.Module.parse(tile_ir)
        module.operation.attributes[TRANSPOSE_OPERANDS_ATTR] = ir.UnitAttr.get()
        TransposeMnMajorOperands(arch=arch).run(module)
        return module, str(module)


@pytest.mark.parametrize("name, a_k_major, b_k_major, shape, arch", [
    ("e4m3", True, False, (200, 136, 192), "sm_90a"),
    ("e5m2", True, False, (136, 264, 320), "sm_90a"),
    ("s8", True, False, (200, 136, 192), "sm_90a"),
    ("tf32", True, False, (136, 200, 96), "sm_90a"),
    ("e4m3", False, True, (200, 136, 192), "sm_90a"),  # A stored K x M
    ("s8", False, False, (136, 200, 160), "sm_90a"),  # both
    ("s8", False, False, (136, 200, 160), "sm_80"),  # as rewritten for mma.sync
    ("tf32", True, False, (200, 136, 96), "sm_80"),
])
def test_rewritten_gemm_computes_the_users_product(name, a_k_major, b_k_major, shape, arch,
                                                   rng, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    a, b, expected = operands(name, shape, a_k_major, b_k_major, rng)
    kernel = matmul_stored.compile(a, b, target="cpu", **knobs(name, a_k_major, b_k_major))
    module, text = rewritten(kernel.asm["tile"], arch)
    copies = text.count("tile.parallel") - kernel.asm["tile"].count("tile.parallel")
    assert copies == (not a_k_major) + (not b_k_major)
    assert "transpose_b = true" in text and "transpose_a = true" not in text
    with module.context:
        artifact = compile_module(module, kernel.params, "cpu")
    out = JITKernel(artifact, (__file__, 0)).get_profiler().run_poisoned(a, b)
    if name == "s8":
        assert out.dtype == torch.int32 and torch.equal(out.long(), expected.long())
    else:
        tolerance = TOLERANCES[torch.bfloat16 if name != "tf32" else torch.float32]
        torch.testing.assert_close(out.double(), expected, **tolerance)


needs_ptxas = pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")


def compile_sm90(name: str, shape: tuple[int, int, int], a_k_major: bool = True,
                 b_k_major: bool = False, arch: str = "sm_90a", **config):
    a, b, _ = operands(name, shape, a_k_major, b_k_major, device="meta")
    return matmul_stored.compile(a, b, target=f"cuda:{arch}",
                                 **knobs(name, a_k_major, b_k_major), **config)


@needs_ptxas
@pytest.mark.parametrize("name, a_k_major", [("e4m3", True), ("s8", True), ("tf32", True),
                                             ("s8", False)])
def test_opted_in_gemm_runs_on_its_wgmma(name, a_k_major, tmp_path, monkeypatch) -> None:
    """B stored K x N (and A K x M): the gemm's wgmma reads the K-major copies, which each
    thread writes in 16-byte vectors (one chunk of the swizzled tile) from the cp.async-filled
    tiles."""
    from tilec.compiler.tensorcore.ptx import ptxas_check

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_PER_OP_GEMMS", "1")
    monkeypatch.setenv(OPT_IN, "1")
    kernel = compile_sm90(name, (1024, 1024, 1024), a_k_major)
    tile_cuda, ptx = kernel.asm["tile-cuda"], kernel.asm["ptx"]
    assert f'dtype = "{name}"' in tile_cuda and "transpose_b = true" in tile_cuda
    lines = [line for line in ptx.splitlines() if "wgmma.mma_async" in line]
    assert lines and all(TYPES[name][4] in line for line in lines)
    assert "cp.async.cg.shared.global" in ptx and "st.shared.v4.b32" in ptx
    report = ptxas_check(ptx, "sm_90a")
    assert report.ok and report.spill_bytes == 0, report.log
    for warning in ("C7519", "C7517", "C7520"):
        assert warning not in report.log, report.log


@needs_ptxas
def test_without_the_opt_in_it_stays_on_cuda_cores(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_PER_OP_GEMMS", "1")
    monkeypatch.delenv(OPT_IN, raising=False)
    kernel = compile_sm90("e4m3", (256, 256, 512))
    assert "wgmma.mma_async" not in kernel.asm["ptx"]
    assert "tile.wgmma" not in kernel.asm["tile-cuda"]
    assert "transpose_b = true" not in kernel.asm["tile-cuda"]


MMA_SYNC_SHAPES = {"s8": "m16n8k32.row.col.s32.s8.s8.s32", "tf32": "m16n8k8.row.col.f32.tf32"}


@needs_ptxas
@pytest.mark.parametrize("name, a_k_major", [("s8", True), ("tf32", True), ("s8", False)])
def test_opted_in_gemm_runs_on_mma_sync(name, a_k_major, tmp_path, monkeypatch) -> None:
    """sm_80: ldmatrix.trans moves 16-bit elements only, so the int8 / tf32 gemm reads the
    K-major copies with ldmatrix and runs on mma.sync (CUDA cores without the opt-in)."""
    from tilec.compiler.tensorcore.ptx import ptxas_check

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    shape = (1024, 1024, 1024)
    monkeypatch.delenv(OPT_IN, raising=False)
    assert "mma.sync" not in compile_sm90(name, shape, a_k_major, arch="sm_80").asm["ptx"]
    monkeypatch.setenv(OPT_IN, "1")
    kernel = compile_sm90(name, shape, a_k_major, arch="sm_80")
    ptx = kernel.asm["ptx"]
    lines = [line for line in ptx.splitlines() if "mma.sync" in line]
    assert lines and all(MMA_SYNC_SHAPES[name] in line for line in lines)
    assert "ldmatrix" in ptx and "cp.async" in ptx
    report = ptxas_check(ptx, "sm_80")
    assert report.ok and report.spill_bytes == 0, report.log


def test_copy_past_the_chips_shared_memory_is_not_made(tmp_path, monkeypatch) -> None:
    """sm_89 (99 KiB a block): three stages of 128 x 32 tf32 tiles (96 KiB) leave no room for
    B's 16 KiB copy, so the gemm stays on CUDA cores and the kernel compiles; sm_80 (163 KiB)
    takes the copy. Without the guard the sm_89 kernel was plan-shared-memory's error."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(OPT_IN, "1")
    for arch, copied in (("sm_89", False), ("sm_80", True)):
        kernel = compile_sm90("tf32", (512, 512, 512), arch=arch, num_stages=3)
        assert ("transpose_b = true" in kernel.asm["tile-cuda"]) == copied, arch
        assert ("mma.sync" in kernel.asm["ptx"]) == copied, arch


@needs_ptxas
@pytest.mark.parametrize("name", ["e4m3", "s8", "tf32"])
def test_ring_transposes_read_the_slot_tma_filled(name, tmp_path, monkeypatch) -> None:
    """TILEC_RING_TRANSPOSES=1: the loop is a TMA ring (B's K x N tile by cp.async.bulk.tensor
    into 128-byte swizzled rows); the consumers transpose the slot into one of the K-major
    tile's two slots (iteration parity) between named barriers over their 128 threads, fence
    it for the async proxy before the wgmma, leave the group in flight and hand back the slot
    of the iteration before. Under the consumers' 240 registers (setmaxnreg) the 128 byte
    addresses each thread's copy precomputes beside its 128 accumulator registers spill
    around the loop (180 bytes e4m3, 212 s8; none in it: SASS)."""
    from tilec.compiler.tensorcore.ptx import ptxas_check

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TILEC_PER_OP_GEMMS", "1")
    monkeypatch.setenv(OPT_IN, "1")
    monkeypatch.setenv("TILEC_RING_TRANSPOSES", "1")
    kernel = compile_sm90(name, (1024, 1024, 1024))
    tile_cuda, ptx = kernel.asm["tile-cuda"], kernel.asm["ptx"]
    assert "overlap = true" in tile_cuda and "tile.ring_copy_slots = 2" in tile_cuda
    assert "transpose_b = true" in tile_cuda
    assert "cp.async.bulk.tensor" in ptx and "cp.async.cg" not in ptx
    consumer = ptx[ptx.rindex("mbarrier.try_wait"):]  # the consumers' loop, after the wait
    body = consumer[:consumer.index("mbarrier.arrive")]
    assert body.index("bar.sync \t1, 128") < body.index("st.shared.v4") < body.index(
        "fence.proxy.async") < body.index("wgmma.mma_async") < body.index(
        "wgmma.wait_group.sync.aligned \t1")
    report = ptxas_check(ptx, "sm_90a")
    assert report.ok and report.spill_bytes <= 256, report.log
