"""Every CUDA arch resolves through one target description: the jit's name for a GPU, the
driver's stages and the scheduling passes agree on which chips exist and what they can do."""

from __future__ import annotations

import importlib

import pytest

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path
from tilec.compiler.targets.description import DESCRIPTIONS, describe
from tilec.errors import CompileError


def quickstart(M: int = 256, N: int = 256, K: int = 256):  # noqa: N803 - TileLang's spelling
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16),
             C: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(N, 128), T.ceildiv(M, 128), threads=128) as (bx, by):
            A_s = T.alloc_shared((128, 32), T.float16)
            B_s = T.alloc_shared((32, 128), T.float16)
            C_f = T.alloc_fragment((128, 128), T.float32)
            T.clear(C_f)
            for k in T.Pipelined(T.ceildiv(K, 32), num_stages=3):
                T.copy(A[by * 128, k * 32], A_s)
                T.copy(B[k * 32, bx * 128], B_s)
                T.gemm(A_s, B_s, C_f)
            T.copy(C_f, C[by * 128, bx * 128])

    return main


def test_unknown_arch_names_the_known_ones() -> None:
    with pytest.raises(CompileError, match=r"unsupported CUDA arch 'sm_75' \(supported: sm_80"):
        describe("sm_75")


def test_capabilities() -> None:
    hopper, ampere = describe("sm_90a"), describe("sm_80")
    assert hopper.has_wgmma and hopper.has_tma and hopper.max_shared_bytes == 232448
    assert not ampere.has_wgmma and not ampere.has_tma and ampere.mma == "mma.sync"
    assert not describe("sm_90").has_wgmma  # wgmma and setmaxnreg need the arch-specific sm_90a
    assert all(d.warp_size == 32 for d in DESCRIPTIONS.values())


@pytest.mark.parametrize(("capability", "target"), [
    ((8, 0), "cuda:sm_80"), ((8, 6), "cuda:sm_86"), ((8, 9), "cuda:sm_89"),
    ((9, 0), "cuda:sm_90a"), ((10, 0), "cuda:sm_100a"), ((12, 0), "cuda:sm_120a"),
])
def test_the_jit_names_every_gpu_by_a_known_description(monkeypatch, capability, target) -> None:
    """What `tilec.jit` calls the current GPU is a chip the compiler accepts."""
    jit = importlib.import_module("tilec.jit")  # the module; `tilec.jit` is also the decorator

    class FakeCuda:
        @staticmethod
        def is_available() -> bool:
            return True

        @staticmethod
        def get_device_capability() -> tuple[int, int]:
            return capability

    class FakeTorch:
        cuda = FakeCuda

    monkeypatch.setattr(jit, "_torch", lambda: FakeTorch)
    monkeypatch.delenv("TILEC_TARGET", raising=False)
    assert jit.resolve_target("cuda") == target
    describe(target.partition(":")[2])


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
@pytest.mark.parametrize(("arch", "instruction"), [
    ("sm_89", "mma.sync.aligned.m16n8k16"),
    ("sm_90", "mma.sync.aligned.m16n8k16"),
    ("sm_100a", "mma.sync.aligned.m16n8k16"),
    ("sm_90a", "wgmma.mma_async"),
])
def test_the_quickstart_assembles_for_each_family(arch, instruction, tmp_path, monkeypatch) -> None:
    """The scheduling passes pick the generator by the description's tensor-core family, and
    ptxas assembles the PTX for that chip (its PTX ISA version comes from the description)."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    kernel = tilec.compile(quickstart(), target=f"cuda:{arch}")
    assert kernel.artifact.binary_kind == "cubin"
    ptx = kernel.get_kernel_source()
    assert f".target {arch}" in ptx
    assert instruction in ptx
    assert kernel.artifact.launch["arch"] == arch


def test_shared_memory_beyond_the_chip_is_an_error_at_the_kernel(tmp_path, monkeypatch) -> None:
    """300 KB of shared tiles fit no NVIDIA block: the error names the kernel's line and the
    chip's limit instead of producing PTX that fails at launch."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))

    @T.prim_func
    def too_big(A: T.Tensor((1024,), T.float32), B: T.Tensor((1024,), T.float32)):
        with T.Kernel(1, threads=128):
            s = T.alloc_shared((300 * 256,), T.float32)
            T.copy(A[0:1024], s[0:1024])
            T.copy(s[0:1024], B[0:1024])

    for arch, limit in (("sm_90a", 232448), ("sm_89", 101376)):
        with pytest.raises(CompileError, match=f"307200 bytes .* on {arch} has at most {limit}"
                           ) as caught:
            tilec.compile(too_big, target=f"cuda:{arch}")
        assert caught.value.filename == __file__
