"""Property: any small tile program hypothesis makes computes on the CPU target what torch
computes. Shapes (ragged against the blocks), block sizes, thread counts, dtypes (float32,
float16, bfloat16, int32, int8) and the kind of program (an elementwise expression tree; a
row reduction: sum, max, min, abssum, absmax of a float32 fragment loaded from a tensor of any
float dtype; column sums staged through shared memory, updated there in place and added into
the output atomically) are drawn; a failing program shrinks to a small one. The same programs
compile for the GPU targets (sm_90a, sm_80, gfx942) without an error.

The programs are written out as Python source into a temporary module (tilec reads a kernel's
source from its file); the expression trees are those of test_bad_inputs_random_programs.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import torch

import tilec

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from test_bad_inputs_random_programs import (  # noqa: E402
    ELEMENTWISE,
    Program,
    float_expression,
    int_expression,
    load_program,
)

REDUCTION = '''
import tilec.language as T


def make():
    @T.prim_func
    def main(X: T.Tensor(({m}, {n}), "{dtype}"), R: T.Tensor(({m},), "float32")):
        with T.Kernel(T.ceildiv({m}, {bm}), threads={threads}) as bx:
            xs = T.alloc_fragment(({bm}, {n}), "float32")
            row = T.alloc_fragment(({bm},), "float32")
            T.copy(X[bx * {bm}, 0], xs)
            T.reduce_{kind}(xs, row, dim=1)
            T.copy(row, R[bx * {bm}])

    return main
'''
COLUMN_SUM = '''
import tilec.language as T


def make():
    @T.prim_func
    def main(X: T.Tensor(({m}, {n}), "{dtype}"), S: T.Tensor(({n},), "float32")):
        with T.Kernel(T.ceildiv({n}, {bn}), T.ceildiv({m}, {bm}), threads={threads}) as (bx, by):
            tile = T.alloc_shared(({bm}, {bn}), "{dtype}")
            xs = T.alloc_fragment(({bm}, {bn}), "float32")
            sums = T.alloc_fragment(({bn},), "float32")
            T.copy(X[by * {bm}, bx * {bn}], tile)
            for i, j in T.Parallel({bm}, {bn}):
                tile[i, j] = tile[i, j] * {scale}
            T.copy(tile, xs)
            T.reduce_{kind}(xs, sums, dim=0)
            for j in T.Parallel({bn}):
                T.atomic_add(S[bx * {bn} + j], sums[j])

    return main
'''
REDUCE = {"sum": lambda x: x.sum(1), "max": lambda x: x.amax(1), "min": lambda x: x.amin(1),
          "abssum": lambda x: x.abs().sum(1), "absmax": lambda x: x.abs().amax(1)}
FLOATS = ["float32", "float16", "bfloat16"]
# ||out - ref|| / (1 + |ref|) per element, for results rounded to the dtype once per operation
TOLERANCE = {"float32": 1e-4, "float16": 3e-2, "bfloat16": 1.5e-1}
SETTINGS = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
FEWER = settings(max_examples=12, deadline=None, derandomize=True,
                 suppress_health_check=[HealthCheck.function_scoped_fixture])
COUNTER = iter(range(10**6, 10**9))  # module names apart from the seeded programs' ones


def _inputs(dtype: str, shape: tuple[int, int], generator: torch.Generator, count: int):
    if dtype in ("int32", "int8"):
        bound = 50 if dtype == "int32" else 8
        return [torch.randint(-bound, bound, shape, generator=generator).to(getattr(torch, dtype))
                for _ in range(count)]
    return [torch.randn(shape, generator=generator).to(getattr(torch, dtype))
            for _ in range(count)]


@SETTINGS
@given(m=st.integers(1, 70), n=st.integers(1, 70), bm=st.sampled_from([1, 4, 8, 16, 32]),
       bn=st.sampled_from([8, 16, 32]), threads=st.sampled_from([32, 64, 128]),
       dtype=st.sampled_from(["float32", "float16", "bfloat16", "int32", "int8"]),
       depth=st.integers(1, 3), tree=st.integers(0, 2**32 - 1))
def test_elementwise_program_matches_torch(m: int, n: int, bm: int, bn: int, threads: int,
                                           dtype: str, depth: int, tree: int,
                                           tmp_path: Path) -> None:
    integer = dtype in ("int32", "int8")
    chooser = random.Random(tree)
    expression = (int_expression if integer else float_expression)(chooser, depth)
    if dtype == "int8":  # keep int8 results in range: no products or quotients of products
        expression = int_expression(random.Random(tree), 1)
    source = ELEMENTWISE.format(m=m, n=n, bm=bm, bn=bn, threads=threads, dtype=dtype,
                                expression=expression.kernel)
    program = Program(source, expression.numpy, "elementwise", dtype, (m, n))
    kernel = tilec.compile(load_program(program, tmp_path, next(COUNTER)), target="cpu")
    x, y = _inputs(dtype, (m, n), torch.Generator().manual_seed(tree % 1000), 2)
    out = torch.full((m, n), 7 if integer else float("nan"), dtype=x.dtype)
    kernel(x, y, out)
    namespace = {"np": np}
    if integer:
        namespace.update(x=x.numpy(), y=y.numpy())
        with np.errstate(all="ignore"):
            want = np.broadcast_to(eval(expression.numpy, namespace), (m, n))  # noqa: S307
        np.testing.assert_array_equal(out.numpy(), want.astype(out.numpy().dtype),
                                      err_msg=source)
        return
    namespace.update(x=x.double().numpy(), y=y.double().numpy())
    with np.errstate(all="ignore"):
        want = np.broadcast_to(eval(expression.numpy, namespace), (m, n))  # noqa: S307
    error = np.abs(out.double().numpy() - want) / (1.0 + np.abs(want))
    assert np.all(error <= TOLERANCE[dtype]), f"max error {error.max()}\n{source}"


@SETTINGS
@given(m=st.integers(1, 70), n=st.sampled_from([1, 3, 8, 16, 17, 32, 64]),
       bm=st.sampled_from([1, 2, 4, 8, 16]), threads=st.sampled_from([32, 64, 128]),
       dtype=st.sampled_from(FLOATS), kind=st.sampled_from(list(REDUCE)),
       seed=st.integers(0, 1000))
def test_row_reduction_matches_torch(m: int, n: int, bm: int, threads: int, dtype: str,
                                     kind: str, seed: int, tmp_path: Path) -> None:
    source = REDUCTION.format(m=m, n=n, bm=bm, threads=threads, dtype=dtype, kind=kind)
    program = Program(source, "", kind, dtype, (m, n))
    kernel = tilec.compile(load_program(program, tmp_path, next(COUNTER)), target="cpu")
    (x,) = _inputs(dtype, (m, n), torch.Generator().manual_seed(seed), 1)
    out = torch.full((m,), float("nan"))
    kernel(x, out)
    want = REDUCE[kind](x.double())  # the fragment holds the inputs exactly (as float32)
    if kind in ("max", "min", "absmax"):  # exact: one of the inputs
        assert torch.equal(out.double(), want), source
        return
    error = ((out.double() - want).abs() / (1.0 + x.double().abs().sum(1))).max().item()
    assert error <= 1e-6 * n, f"max error {error}\n{source}"


def _column_sum(m: int, n: int, bm: int, bn: int, threads: int, dtype: str, kind: str,
                scale: float, tmp_path: Path):
    source = COLUMN_SUM.format(m=m, n=n, bm=bm, bn=bn, threads=threads, dtype=dtype, kind=kind,
                               scale=scale)
    return source, load_program(Program(source, "", kind, dtype, (m, n)), tmp_path,
                                next(COUNTER))


COLUMNS = dict(m=st.integers(1, 70), n=st.integers(1, 70), bm=st.sampled_from([1, 2, 4, 8, 16]),
               bn=st.sampled_from([4, 8, 16, 32]), threads=st.sampled_from([32, 64, 128]),
               dtype=st.sampled_from(FLOATS), kind=st.sampled_from(["sum", "abssum"]),
               scale=st.sampled_from([1.0, -0.5, 2.0]))


@FEWER
@given(**COLUMNS, seed=st.integers(0, 1000))
def test_column_sums_through_shared_memory_match_torch(m: int, n: int, bm: int, bn: int,
                                                       threads: int, dtype: str, kind: str,
                                                       scale: float, seed: int,
                                                       tmp_path: Path) -> None:
    """A tile updated in place in shared memory (T.Parallel over fewer points than threads
    when the tile is small), reduced along its rows, the block's sums added atomically."""
    source, prim = _column_sum(m, n, bm, bn, threads, dtype, kind, scale, tmp_path)
    kernel = tilec.compile(prim, target="cpu")
    (x,) = _inputs(dtype, (m, n), torch.Generator().manual_seed(seed), 1)
    out = torch.zeros(n)
    kernel(x, out)
    # the tile holds x * scale rounded to the dtype
    scaled = (x.float() * scale).to(x.dtype).double()
    want = (scaled.abs() if kind == "abssum" else scaled).sum(0)
    error = ((out.double() - want).abs() / (1.0 + scaled.abs().sum(0))).max().item()
    assert error <= 1e-5, f"max error {error}\n{source}"


GPU_TARGETS = ["cuda:sm_90a", "cuda:sm_80", "hip:gfx942", "vulkan", "metal", "webgpu"]


@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(**COLUMNS, target=st.sampled_from(GPU_TARGETS))
def test_programs_compile_for_every_gpu_target(m: int, n: int, bm: int, bn: int, threads: int,
                                               dtype: str, kind: str, scale: float, target: str,
                                               tmp_path: Path) -> None:
    """What runs on the CPU target compiles for the GPUs too: never an internal error or an
    MLIR failure."""
    source, prim = _column_sum(m, n, bm, bn, threads, dtype, kind, scale, tmp_path)
    assert tilec.compile(prim, target=target).artifact.binary, source
