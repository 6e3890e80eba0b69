"""T.reduce_max / min / absmax / abssum of unsigned integers on the GPU (tile.reduce's "umax" /
"umin": the thread's registers, the butterfly shuffles and the cross-warp scratch all compare as
unsigned), `a or b` / `a and b` of numbers as Python's values, and a signed against an unsigned
integer compared (and T.max / T.min taken) in int64, against the answers
tests/test_bad_inputs_sweep.py checks on the CPU target. Rows of 64 over 64 threads (lanes
only) and a 8 x 256 tile over 256 threads reduced along either dimension (warps meet through
shared memory); values over the dtypes' whole ranges, outputs poisoned. Compiled in process
(the whole compiler on the GPU machine), or from the job's cache (`precompile`)."""

from __future__ import annotations

import zlib

import pytest

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU")]

import tilec  # noqa: E402
import tilec.language as T  # noqa: E402

TARGET = "cuda:sm_90a"
KINDS = ["max", "min", "absmax", "abssum", "sum"]
DTYPES = ["uint8", "uint16", "uint32", "int8", "int32"]
# (rows, columns, threads, dim)
SHAPES = [(4, 64, 64, 1), (8, 256, 256, 1), (8, 256, 256, 0)]


def reduction(kind: str, dtype: str, rows: int, columns: int, threads: int, dim: int):
    kept = (rows,) if dim == 1 else (columns,)

    @T.prim_func
    def main(A: T.Tensor((rows, columns), dtype), C: T.Tensor(kept, dtype)):
        with T.Kernel(1, threads=threads) as _:
            tile = T.alloc_fragment((rows, columns), dtype)
            reduced = T.alloc_fragment(kept, dtype)
            T.copy(A, tile)
            getattr(T, f"reduce_{kind}")(tile, reduced, dim=dim)
            T.copy(reduced, C)

    return main


def either_or(dtype: str, n: int = 256):
    @T.prim_func
    def main(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype), C: T.Tensor((n,), dtype),
             D: T.Tensor((n,), dtype)):
        with T.Kernel(1, threads=128) as _:
            for i in T.Parallel(n):
                C[i] = A[i] or B[i]
                D[i] = A[i] and B[i] or 7

    return main


def mixed_signs(left: str, right: str, n: int = 256):
    @T.prim_func
    def main(A: T.Tensor((n,), left), B: T.Tensor((n,), right), C: T.Tensor((n,), "int32"),
             D: T.Tensor((n,), "int64")):
        with T.Kernel(1, threads=128) as _:
            for i in T.Parallel(n):
                C[i] = T.if_then_else(A[i] < B[i], 1, 0) + T.if_then_else(A[i] == B[i], 2, 0)
                D[i] = T.max(A[i], B[i]) - T.min(A[i], B[i])

    return main


MIXED = [("uint32", "int32"), ("int8", "uint8"), ("int16", "uint32")]


def compiled(kernel) -> tilec.JITKernel:
    """The kernel from the cache or the compiler; skipped where neither has it (the AOT suite
    of tests/gpu runs without the compiler and without this file's cache entries)."""
    try:
        return tilec.compile(kernel, target=TARGET)
    except ModuleNotFoundError as error:
        if not (error.name or "").startswith("tilec.compiler"):
            raise
        pytest.skip("compiles at run time: needs the compiler or the rely4 job's cache")


def wrapped(values: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    info = torch.iinfo(dtype)
    return (values - info.min) % (info.max - info.min + 1) + info.min


def expected(kind: str, a: torch.Tensor, dim: int) -> list[int]:
    wide = a.to(torch.int64)
    terms = wrapped(wide.abs(), a.dtype) if kind.startswith("abs") else wide
    answer = terms.max(dim).values if kind.endswith("max") else (
        terms.min(dim).values if kind == "min" else terms.sum(dim))
    return wrapped(answer, a.dtype).tolist()


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", KINDS)
def test_integer_reduction_on_the_gpu(kind: str, dtype: str, shape: tuple) -> None:
    rows, columns, threads, dim = shape
    torch_dtype = getattr(torch, dtype)
    info = torch.iinfo(torch_dtype)
    generator = torch.Generator().manual_seed(zlib.crc32(repr((kind, dtype, shape)).encode()))
    a = torch.randint(info.min, info.max, (rows, columns), dtype=torch.int64,
                      generator=generator).to(torch_dtype)
    kept = rows if dim == 1 else columns
    c = torch.full((kept,), 77, dtype=torch_dtype)  # poisoned, made on the CPU
    a_gpu, c_gpu = a.cuda(), c.cuda()
    compiled(reduction(kind, dtype, *shape))(a_gpu, c_gpu)
    torch.cuda.synchronize()
    assert c_gpu.cpu().to(torch.int64).tolist() == expected(kind, a, dim)


@pytest.mark.parametrize("dtype", ["int32", "float32"])
def test_or_and_give_pythons_value_on_the_gpu(dtype: str) -> None:
    torch_dtype = getattr(torch, dtype)
    generator = torch.Generator().manual_seed(7)
    a = torch.randint(-3, 4, (256,), generator=generator).to(torch_dtype)  # zeros among them
    b = torch.randint(-50, 50, (256,), generator=generator).to(torch_dtype)
    c, d = (torch.full((256,), 99, dtype=torch_dtype, device="cuda") for _ in range(2))
    compiled(either_or(dtype))(a.cuda(), b.cuda(), c, d)
    torch.cuda.synchronize()
    pairs = list(zip(a.tolist(), b.tolist(), strict=True))
    assert c.cpu().tolist() == [x or y for x, y in pairs]
    assert d.cpu().tolist() == [x and y or 7 for x, y in pairs]


@pytest.mark.parametrize("left, right", MIXED)
def test_signed_against_unsigned_on_the_gpu(left: str, right: str) -> None:
    """Compared, and T.max / T.min taken, in int64 (as Python and torch do)."""
    generator = torch.Generator().manual_seed(zlib.crc32(f"{left}{right}".encode()))
    a, b = (torch.randint(torch.iinfo(getattr(torch, dtype)).min,
                          torch.iinfo(getattr(torch, dtype)).max, (256,), dtype=torch.int64,
                          generator=generator) for dtype in (left, right))
    b[:8] = a[:8].clamp(torch.iinfo(getattr(torch, right)).min,
                        torch.iinfo(getattr(torch, right)).max)  # some equal pairs
    c = torch.full((256,), 99, dtype=torch.int32, device="cuda")
    d = torch.full((256,), 99, dtype=torch.int64, device="cuda")
    compiled(mixed_signs(left, right))(a.to(getattr(torch, left)).cuda(),
                                       b.to(getattr(torch, right)).cuda(), c, d)
    torch.cuda.synchronize()
    assert c.cpu().tolist() == ((a < b).int() + 2 * (a == b).int()).tolist()
    assert d.cpu().tolist() == (torch.maximum(a, b) - torch.minimum(a, b)).tolist()


def precompile() -> None:
    """Compile every kernel the tests run into TILEC_CACHE_DIR (on the compiler machine)."""
    for kind in KINDS:
        for dtype in DTYPES:
            for shape in SHAPES:
                tilec.compile(reduction(kind, dtype, *shape), target=TARGET)
    for dtype in ("int32", "float32"):
        tilec.compile(either_or(dtype), target=TARGET)
    for left, right in MIXED:
        tilec.compile(mixed_signs(left, right), target=TARGET)


if __name__ == "__main__":
    precompile()
