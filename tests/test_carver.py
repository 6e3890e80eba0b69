"""tilec.carver: arch figures, MatmulTemplate hints from tilec's tensor-core tiles, and those
hints compiled (CPU numerics against float64, PTX on the tensor cores) the way TileLang's
autotuned GEMM examples turn them into configurations."""

import pytest
import torch
from conftest import assert_close, randn

import tilec
import tilec.language as T
from tilec.autotuner import AutoTuner
from tilec.carver import CPU, MatmulTemplate, auto_infer_current_arch, get_arch
from tilec.carver.arch import CDNA, CUDA, driver
from tilec.carver.roller.rasterization import NoRasterization
from tilec.errors import TilecError

HAS_GPU = torch.cuda.is_available()


def _template(m: int, n: int, k: int, target: str, **types) -> MatmulTemplate:
    types = {"in_dtype": T.float16, "out_dtype": T.float16, "accum_dtype": T.float32, **types}
    return MatmulTemplate(M=m, N=n, K=k, **types).with_arch(CUDA(target))


def _example_config(hint) -> dict:
    """A hint as TileLang's example_gemm_autotune.py turns it into kernel arguments."""
    block_m, block_n = hint.block
    warp_m, warp_n = hint.warp
    return {"block_M": block_m, "block_N": block_n, "block_K": hint.rstep[0],
            "num_stages": hint.pipeline_stage if hint.pipeline_stage > 1 else 0,
            "thread_num": (block_m // warp_m) * (block_n // warp_n) * 32,
            "enable_rasteration": not isinstance(hint.rasterization_plan, NoRasterization)}


def example_kernel(M, N, K, block_M=None, block_N=None, block_K=None, num_stages=None,
                   thread_num=None, enable_rasteration=None):
    """TileLang's autotuned GEMM example kernel (C = A @ B.T, staged through shared C)."""

    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((N, K), T.float16),
             C: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=thread_num) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_N, block_K), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            C_shared = T.alloc_shared((block_M, block_N), T.float16)
            T.use_swizzle(panel_size=10, enable=enable_rasteration)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return main


# ----- arch ------------------------------------------------------------------------------


def test_hopper_figures():
    arch = CUDA("cuda:sm_90a")
    assert (arch.sm_version, arch.arch, arch.target) == (90, "sm_90a", "cuda:sm_90a")
    if not HAS_GPU:  # on a GPU machine the present chip's own figures are read
        assert arch.compute_max_core == 132 and arch.smem_cap == 232448
        assert arch.l2_cache_size_bytes == 50 * 2**20
    assert arch.reg_cap == 65536 and arch.warp_size == 32 and arch.platform == "CUDA"


def test_ampere_figures():
    for target in ("cuda:sm_80", "sm_80", "cuda -arch=sm_80", "nvidia/nvidia-a100"):
        arch = CUDA(target)
        assert (arch.sm_version, arch.arch) == (80, "sm_80")
    if not HAS_GPU:
        assert arch.compute_max_core == 108 and arch.smem_cap == 166912
    assert arch.reg_cap == 65536 and arch.warp_size == 32


@pytest.mark.skipif(HAS_GPU, reason="describes a machine without a GPU")
def test_without_a_gpu():
    assert CUDA("cuda").arch == "sm_90a"  # the cuda target's default arch
    assert isinstance(auto_infer_current_arch(), CPU)
    with pytest.raises(TilecError, match="no CUDA device"):
        driver.get_num_sms()


def test_arch_errors():
    assert isinstance(get_arch("cpu"), CPU) and isinstance(get_arch("cuda:sm_80"), CUDA)
    with pytest.raises(TilecError, match="not for this device"):
        CDNA("hip")
    with pytest.raises(TilecError, match="cannot tell the chip"):
        CUDA("rocm gfx942")
    with pytest.raises(TilecError, match="unsupported CUDA arch 'sm_75'"):
        CUDA("cuda:sm_75")
    with pytest.raises(TilecError, match="tensor-core tiles for sm_90a, sm_90, sm_80"):
        _template(256, 256, 256, "cuda:sm_86").recommend_hints()


# ----- hints -----------------------------------------------------------------------------


def test_hopper_hints_are_the_tiles_the_benchmarks_found_fastest():
    """benchmarks/gemm.py on the H200: 128x256x64 / 256 threads / 4 stages at 4096^3,
    64x128 (or 128x64) at 1024^3 and 128x8192x8192."""
    (best,) = _template(4096, 4096, 4096, "cuda:sm_90a").recommend_hints(topk=1)
    assert (best.block, best.rstep, best.threads, best.pipeline_stage) == ([128, 256], [64], 256, 4)
    for shape in ((1024, 1024, 1024), (128, 8192, 8192)):
        best = _template(*shape, "cuda:sm_90a").recommend_hints(topk=1)[0]
        assert sorted(best.block) == [64, 128] and best.waves == 1


@pytest.mark.parametrize("target", ["cuda:sm_90a", "cuda:sm_80"])
def test_hints_are_consistent_and_ranked(target):
    template = _template(2048, 1536, 1024, target)
    hints = template.recommend_hints(topk=8)
    assert len(hints) == 8
    cycles = [hint.estimated_cycles for hint in hints]
    assert cycles == sorted(cycles)
    for hint in hints:
        assert _example_config(hint)["thread_num"] == hint.threads
        assert 0 < hint.shared_memory_bytes <= template.arch.smem_cap
        assert 2 <= hint.pipeline_stage and hint.use_async and hint.use_tc


def test_template_errors():
    with pytest.raises(TilecError, match="accumulate in float32"):
        _template(256, 256, 256, "cuda:sm_90a", accum_dtype=T.float16).recommend_hints()
    with pytest.raises(TilecError, match="positive integers"):
        _template(0, 256, 256, "cuda:sm_90a").recommend_hints()
    with pytest.raises(TilecError, match="not CPU"):
        MatmulTemplate(256, 256, 256).with_arch(CPU()).recommend_hints()
    with pytest.raises(TilecError, match="no arch"):
        MatmulTemplate(256, 256, 256).recommend_hints()


# ----- hints compiled --------------------------------------------------------------------


@pytest.mark.parametrize("target", ["cuda:sm_90a", "cuda:sm_80"])
def test_hints_run_correctly_on_the_cpu(target, rng):
    """The example's kernel at each top hint, ragged small sizes, against float64."""
    m, n, k = 96, 80, 192
    for hint in _template(m, n, k, target).recommend_hints(topk=3):
        kernel = tilec.compile(example_kernel(m, n, k, **_example_config(hint)), out_idx=[-1],
                               target="cpu")
        a, b = randn((m, k), torch.float16, rng), randn((n, k), torch.float16, rng)
        c = kernel.get_profiler().run_poisoned(a, b)
        assert_close(c, a.double() @ b.double().T, torch.float16)


@pytest.mark.parametrize("target, instruction", [("cuda:sm_90a", "wgmma.mma_async"),
                                                 ("cuda:sm_80", "mma.sync")])
def test_equivalent_function_runs_on_the_tensor_cores(target, instruction, rng):
    template = _template(512, 384, 256, target)
    kernel = tilec.compile(template.equivalent_function(), out_idx=[-1], target=target)
    assert instruction in kernel.get_kernel_source()
    small = _template(72, 136, 128, target, trans_B=False)
    cpu = tilec.compile(small.equivalent_function(), out_idx=[-1], target="cpu")
    a, b = randn((72, 128), torch.float16, rng), randn((128, 136), torch.float16, rng)
    assert_close(cpu.get_profiler().run_poisoned(a, b), a.double() @ b.double(), torch.float16)


def test_hints_feed_the_autotuner(rng):
    """example_gemm_autotune.py's with_roller path: hints -> configs -> AutoTuner."""
    m, n, k = 64, 64, 128
    configs = [_example_config(hint)
               for hint in _template(m, n, k, "cuda:sm_90a").recommend_hints(topk=2)]
    result = (AutoTuner.from_kernel(kernel=lambda **config: example_kernel(m, n, k, **config),
                                    configs=configs)
              .set_compile_args(out_idx=[-1], target="cpu")
              .set_profile_args(ref_prog=lambda a, b: a @ b.T)
              .run(warmup=1, rep=2))
    assert result.config in configs
    a, b = randn((m, k), torch.float16, rng), randn((n, k), torch.float16, rng)
    assert_close(result.kernel.get_profiler().run_poisoned(a, b), a.double() @ b.double().T,
                 torch.float16)
