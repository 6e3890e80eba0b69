"""T.rng_init / T.rng_rand / T.rng_rand_float as TileLang's CUDA code draws them from cuRAND's
Philox4x32-10 (curand_init(seed, subsequence, offset), curand, curand_uniform), checked against
a reference written here from the generator's definition, bit for bit on the CPU target; the
CUDA form assembles."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from conftest import poisoned
from curand_reference import curand_stream

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path


def rand_kernel(count: int, seed: int) -> T.PrimFunc:
    """TileLang's rand example's shape: one thread draws its points in order."""

    @T.prim_func
    def main(A: T.Tensor((count,), T.uint32), U: T.Tensor((count,), T.float32),
             D: T.Tensor((count,), T.float64)):
        with T.Kernel(1, threads=1) as bx:
            T.rng_init(seed, 7, bx * count + 2)
            for i, j in T.Parallel(1, count):
                A[i * count + j] = T.rng_rand()
            for j in T.Parallel(count):
                U[j] = T.rng_rand_float()
            for j in T.serial(count):
                D[j] = T.rng_rand_float(64)

    return main


def per_thread_kernel(threads: int) -> T.PrimFunc:
    @T.prim_func
    def main(A: T.Tensor((2 * threads * 4,), T.uint32)):
        with T.Kernel(2, threads=threads) as bx:
            tx = T.get_thread_binding()
            T.rng_init(5)  # a stream per thread of the grid
            for k in T.serial(4):
                A[(bx * threads + tx) * 4 + k] = T.rng_rand()

    return main


@pytest.mark.parametrize("seed", [42, 2**40 + 12345])
def test_rng_matches_curand_philox(seed: int) -> None:
    count = 64
    a = poisoned((count,), torch.int64).to(torch.uint32)
    u, d = poisoned((count,), torch.float32), poisoned((count,), torch.float64)
    tilec.compile(rand_kernel(count, seed), target="cpu")(a, u, d)
    stream = curand_stream(seed, 7, 2, 3 * count)
    assert a.to(torch.int64).tolist() == stream[:count]
    floats = np.array(stream[count:2 * count], dtype=np.float32).astype(np.float64)
    scale = np.float64(np.float32(2.3283064e-10))  # cuRAND's x * 2^-32 + 2^-33, one fma
    expected = (floats * scale + np.float64(np.float32(2.3283064e-10 / 2))).astype(np.float32)
    assert np.array_equal(u.numpy(), expected)
    doubles = np.array(stream[2 * count:], dtype=np.float64)
    assert np.array_equal(d.numpy(), doubles * 2.3283064365386963e-10 + 2.3283064365386963e-10)
    assert bool((u > 0).all() and (u <= 1).all())


def words_and_uniforms_kernel(count: int, seed: int) -> T.PrimFunc:
    """rand_kernel without the float64 draws (WebGPU has no float64)."""

    @T.prim_func
    def main(A: T.Tensor((count,), T.uint32), U: T.Tensor((count,), T.float32)):
        with T.Kernel(1, threads=1) as bx:
            T.rng_init(seed, 7, bx * count + 2)
            for j in T.Parallel(count):
                A[j] = T.rng_rand()
            for j in T.Parallel(count):
                U[j] = T.rng_rand_float()

    return main


@pytest.mark.parametrize("target", ["vulkan", "webgpu"])
def test_rng_on_lavapipe_matches_curand_philox(target: str) -> None:
    """The Philox rounds' 64-bit products (spirv-expand-mul-extended: wgpu takes no
    OpUMulExtended) on lavapipe, bit for bit against the reference."""
    from test_spirv_targets import require, require_device, require_naga

    require("spirv-val")
    require_device()
    if target == "webgpu":
        require_naga()
    count, seed = 64, 2**40 + 12345
    a = poisoned((count,), torch.int64).to(torch.uint32)
    u = poisoned((count,), torch.float32)
    tilec.compile(words_and_uniforms_kernel(count, seed), target=target)(a, u)
    stream = curand_stream(seed, 7, 2, 2 * count)
    assert a.to(torch.int64).tolist() == stream[:count]
    floats = np.array(stream[count:], dtype=np.float32).astype(np.float64)
    scale = np.float64(np.float32(2.3283064e-10))
    expected = (floats * scale + np.float64(np.float32(2.3283064e-10 / 2))).astype(np.float32)
    assert np.array_equal(u.numpy(), expected)


def test_rng_rejects() -> None:
    @T.prim_func
    def no_init(A: T.Tensor((4,), T.uint32)):
        with T.Kernel(1, threads=1) as _:
            A[0] = T.rng_rand()

    @T.prim_func
    def normal(A: T.Tensor((4,), T.float32)):
        with T.Kernel(1, threads=1) as _:
            T.rng_init(1)
            A[0] = T.rng_rand_float(dist="normal")

    @T.prim_func
    def other_generator(A: T.Tensor((4,), T.uint32)):
        with T.Kernel(1, threads=1) as _:
            T.rng_init(1, generator="curandStateXORWOW_t")

    @T.prim_func
    def spread(A: T.Tensor((64,), T.uint32)):
        with T.Kernel(1, threads=32) as _:
            T.rng_init(1)
            for i in T.Parallel(64):
                A[i] = T.rng_rand()

    for kernel, message in ((no_init, "needs a T.rng_init"), (normal, "Box-Muller"),
                            (other_generator, "Philox4_32_10_t only"),
                            (spread, "inside a T.Parallel of a block of several threads")):
        with pytest.raises(tilec.TilecError, match=message):
            tilec.compile(kernel, target="cpu")


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
def test_rng_assembles_for_cuda() -> None:
    for prim in (rand_kernel(256, 42), per_thread_kernel(64)):
        kernel = tilec.compile(prim, target="cuda:sm_90a")
        assert kernel.artifact.binary_kind == "cubin"
        assert "mul.hi.u32" in kernel.asm["ptx"] or "mul.wide.u32" in kernel.asm["ptx"]
        # the generator's state is indexed by constants only, so it stays in registers
        assert ".local" not in kernel.asm["ptx"]
