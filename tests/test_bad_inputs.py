"""Bad input, family by family: each case is one exact tilec error class, raised at the kernel's
file and line (marked `# error: TAG`), with a message naming the problem.

A bad kernel never compiles to a silent wrong result, an MLIR abort or a Python traceback from
inside tilec. Frontend errors come before any target code, so most families run for the CPU
target and one CUDA target; families whose checks live in a target's lowering run for each.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from pathlib import Path

import error_tags
import pytest
import torch

import tilec
import tilec.language as T
from tilec.errors import CompileError, TilecError
from tilec.runtime.artifact import Artifact

THIS_FILE = Path(__file__).resolve()
TARGETS = ["cpu", "cuda:sm_90a"]


line_of = functools.partial(error_tags.line_of, THIS_FILE)


def check_error(error: TilecError, kind: type[TilecError], tag: str, *fragments: str) -> None:
    """`error` is exactly `kind`, placed at the tagged line, and says every fragment."""
    error_tags.check_error(error, THIS_FILE, tag, *fragments, kind=kind)


def compile_error(kernel, target: str = "cpu", **options) -> TilecError:
    with pytest.raises(TilecError) as info:
        tilec.compile(kernel, target=target, **options)
    return info.value


ALLOCATORS = {"shared": T.alloc_shared, "fragment": T.alloc_fragment, "local": T.alloc_local}


# ------------------------------------------------------------------ constant indices out of bounds


def read_tensor_element(index):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=1) as _:
            B[0] = A[index]  # error: read-tensor

    return main


def write_tensor_element(index):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=1) as _:
            A[index] = 123.0  # error: write-tensor

    return main


def read_tensor_element_2d(row, column):
    @T.prim_func
    def main(A: T.Tensor((16, 32), "float16"), B: T.Tensor((16, 32), "float16")):
        with T.Kernel(1, threads=1) as _:
            B[0, 0] = A[row, column]  # error: read-tensor-2d

    return main


def index_through_arithmetic():
    base = 60

    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(4, threads=1) as bx:
            A[bx - bx + base + 4] = 1.0  # error: folded-index

    return main


def read_buffer_element(scope, index):
    allocate = ALLOCATORS[scope]

    @T.prim_func
    def main(A: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=1) as _:
            buffer = allocate((16,), "float32")
            for i in T.serial(16):
                buffer[i] = A[i]
            A[0] = buffer[index]  # error: read-buffer

    return main


def write_buffer_element(scope, index):
    allocate = ALLOCATORS[scope]

    @T.prim_func
    def main(A: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=1) as _:
            buffer = allocate((4, 4), "float32")
            buffer[index, 1] = 2.0  # error: write-buffer
            A[0] = buffer[0, 0]

    return main


OUTSIDE_64 = [64, 65, 100, 2**40, -1, -64]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("index", OUTSIDE_64)
def test_constant_tensor_read_outside(index: int, target: str) -> None:
    error = compile_error(read_tensor_element(index), target)
    check_error(error, TilecError, "read-tensor", f"index {index} is out of bounds",
                "dimension 0 of tensor 'A' of shape (64,)")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("index", OUTSIDE_64)
def test_constant_tensor_write_outside(index: int, target: str) -> None:
    error = compile_error(write_tensor_element(index), target)
    check_error(error, TilecError, "write-tensor", f"index {index} is out of bounds",
                "tensor 'A' of shape (64,)")


@pytest.mark.parametrize("row, column, axis", [(16, 0, 0), (0, 32, 1), (-1, 0, 0), (3, 40, 1)])
def test_constant_index_outside_one_dimension(row: int, column: int, axis: int) -> None:
    error = compile_error(read_tensor_element_2d(row, column))
    check_error(error, TilecError, "read-tensor-2d", f"dimension {axis} of tensor 'A'",
                "(16, 32)")


def test_index_folded_to_a_constant_outside() -> None:
    check_error(compile_error(index_through_arithmetic()), TilecError, "folded-index",
                "index 64 is out of bounds")


@pytest.mark.parametrize("scope", list(ALLOCATORS))
@pytest.mark.parametrize("index", [16, 17, -1])
def test_constant_buffer_read_outside(scope: str, index: int) -> None:
    error = compile_error(read_buffer_element(scope, index))
    check_error(error, TilecError, "read-buffer", f"index {index} is out of bounds",
                f"{scope} buffer 'buffer' of shape (16,)")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("scope", list(ALLOCATORS))
@pytest.mark.parametrize("index", [4, -2])
def test_constant_buffer_write_outside(scope: str, index: int, target: str) -> None:
    error = compile_error(write_buffer_element(scope, index), target)
    check_error(error, TilecError, "write-buffer", f"index {index} is out of bounds",
                f"dimension 0 of {scope} buffer 'buffer' of shape (4, 4)")


@pytest.mark.parametrize("index", [0, 63])
def test_constant_index_inside_compiles_and_runs(index: int) -> None:
    kernel = tilec.compile(read_tensor_element(index), target="cpu")
    a, b = torch.randn(64), torch.full((64,), float("nan"))
    kernel(a, b)
    assert b[0] == a[index]


# ------------------------------------------------------------------ constant slices out of bounds


def copy_box_at_corner(row, column):
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as _:
            tile = T.alloc_shared((32, 32), "float32")
            T.copy(A[row, column], tile)  # error: corner
            T.copy(tile, B[0:32, 0:32])

    return main


def copy_fragment_box(row):
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as _:
            tile = T.alloc_fragment((64, 64), "float32")
            T.fill(tile, 1.0)
            T.copy(tile[row, 0], B[0:32, 0:64])  # error: fragment-corner

    return main


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("rows, columns, text, axis", [
    (slice(64, 128), slice(0, 64), "64:128", 0),
    (slice(0, 64), slice(64, 128), "64:128", 1),
    (slice(32, 96), slice(0, 64), "32:96", 0),
    (slice(-64, 0), slice(0, 64), "-64:0", 0),
])
def test_constant_slice_of_a_tensor_outside(rows: slice, columns: slice, text: str, axis: int,
                                            target: str) -> None:
    kernel = copy_slice_into_shared_text(rows, columns)
    error = compile_error(kernel, target)
    check_error(error, TilecError, "slice-src", f"slice {text} is out of bounds",
                f"dimension {axis} of tensor 'A' of shape (64, 64)")


def copy_slice_into_shared_text(rows: slice, columns: slice):
    """copy_slice_into_shared with the slices' bounds as kernel constants."""
    r0, r1, c0, c1 = rows.start, rows.stop, columns.start, columns.stop

    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as _:
            tile = T.alloc_shared((64, 64), "float32")
            T.copy(A[r0:r1, c0:c1], tile)  # error: slice-src
            T.copy(tile, B)

    return main


@pytest.mark.parametrize("rows, text", [((128, 192), "128:192"), ((100, 164), "100:164"),
                                        ((-1, 63), "-1:63")])
def test_constant_slice_of_a_destination_outside(rows: tuple[int, int], text: str) -> None:
    start, stop = rows
    error = compile_error(copy_shared_into_slice_text(start, stop))
    check_error(error, TilecError, "slice-dst-text", f"slice {text} is out of bounds",
                "tensor 'B' of shape (128, 64)")


def copy_shared_into_slice_text(start: int, stop: int):
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((128, 64), "float32")):
        with T.Kernel(1, threads=128) as _:
            tile = T.alloc_shared((64, 64), "float32")
            T.copy(A, tile)
            T.copy(tile, B[start:stop, 0:64])  # error: slice-dst-text

    return main


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("row, column, axis, offset", [(64, 0, 0, 64), (0, 64, 1, 64),
                                                       (-32, 0, 0, -32), (0, 100, 1, 100)])
def test_corner_box_starting_outside_a_tensor(row: int, column: int, axis: int, offset: int,
                                              target: str) -> None:
    error = compile_error(copy_box_at_corner(row, column), target)
    check_error(error, TilecError, "corner", f"at offset {offset} is out of bounds",
                f"dimension {axis} of tensor 'A'")


def test_corner_box_running_past_a_tensor_is_a_ragged_tile() -> None:
    """A box that starts inside and runs past the end reads zeros there (as TileLang's
    bounds-checked copies do): the last tile of a ragged tensor."""
    kernel = tilec.compile(copy_box_at_corner(48, 40), target="cpu")
    a, b = torch.randn(64, 64), torch.full((64, 64), float("nan"))
    kernel(a, b)
    expected = torch.zeros(32, 32)
    expected[:16, :24] = a[48:, 40:]
    torch.testing.assert_close(b[:32, :32], expected)


@pytest.mark.parametrize("rows, text", [((48, 80), "48:80"), ((64, 96), "64:96")])
def test_slice_of_a_shared_buffer_outside(rows: tuple[int, int], text: str) -> None:
    error = compile_error(copy_into_part_of_shared_text(*rows))
    check_error(error, TilecError, "shared-slice-text", f"slice {text} is out of bounds",
                "shared buffer 'tile' of shape (64, 64)")


def copy_into_part_of_shared_text(start: int, stop: int):
    @T.prim_func
    def main(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128) as _:
            tile = T.alloc_shared((64, 64), "float32")
            T.copy(A[0:32, 0:64], tile[start:stop, 0:64])  # error: shared-slice-text
            T.copy(tile, B)

    return main


@pytest.mark.parametrize("row", [40, 64])
def test_box_past_the_end_of_a_fragment(row: int) -> None:
    error = compile_error(copy_fragment_box(row))
    check_error(error, TilecError, "fragment-corner", f"at offset {row} is out of bounds",
                "fragment buffer 'tile' of shape (64, 64)")


# ------------------------------------------------------------------ grids and sizes


def kernel_on_grid(x, y, z, threads=1):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(x, y, z, threads=threads) as (bx, by, bz):  # error: grid
            A[0] = 1.0

    return main


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("grid, size", [((0, 1, 1), 0), ((1, 0, 1), 0), ((1, 1, -3), -3),
                                        ((-1, 4, 4), -1)])
def test_grid_size_not_positive(grid: tuple[int, int, int], size: int, target: str) -> None:
    error = compile_error(kernel_on_grid(*grid), target)
    check_error(error, TilecError, "grid", f"a grid size must be positive, got {size}")


@pytest.mark.parametrize("target", ["cuda:sm_80", "cuda:sm_90a"])
@pytest.mark.parametrize("grid, blocks, axis, limit", [
    ((1, 65536, 1), 65536, "y", 65535), ((1, 1, 70000), 70000, "z", 65535),
    ((2**31, 1, 1), 2**31, "x", 2**31 - 1)])
def test_grid_past_the_cuda_limit(grid: tuple[int, int, int], blocks: int, axis: str,
                                  limit: int, target: str) -> None:
    error = compile_error(kernel_on_grid(*grid), target)
    check_error(error, CompileError, "grid", f"the grid has {blocks} blocks along {axis}",
                f"at most {limit}")


def test_grid_at_the_cuda_limit_compiles() -> None:
    tilec.compile(kernel_on_grid(2, 65535, 65535), target="cuda:sm_90a")


@pytest.mark.parametrize("target, grid, threads, fragments", [
    ("hip:gfx942", (2**27, 1, 1), 32, ["134217728 blocks of 32 threads along x, 4294967296 "
                                       "threads", "HIP counts at most 4294967295"]),
    ("hip:gfx90a", (2**22, 1, 1), 1024, ["4194304 blocks of 1024 threads along x"]),
    ("vulkan", (70000, 1, 1), 32, ["70000 blocks along x; the vulkan target launches at most "
                                   "65535"]),
    ("vulkan", (1, 1, 65536), 1, ["65536 blocks along z"]),
    ("webgpu", (1, 65536, 1), 32, ["65536 blocks along y; the webgpu target launches at most "
                                   "65535"]),
    ("metal", (2**27, 1, 1), 32, ["4294967296 threads; the metal target counts at most "
                                  "4294967295"]),
])
def test_grid_past_the_limit_of_each_gpu_target(target: str, grid: tuple[int, int, int],
                                                threads: int, fragments: list[str]) -> None:
    """Each API's own limit: blocks along an axis, or the threads along it where HIP and Metal
    count them in 32 bits."""
    error = compile_error(kernel_on_grid(*grid, threads=threads), target)
    check_error(error, CompileError, "grid", *fragments)


@pytest.mark.parametrize("target, grid, threads", [
    ("hip:gfx942", (2**26 - 1, 65535, 65535), 64), ("vulkan", (65535, 65535, 65535), 64)])
def test_grid_at_the_limit_of_a_gpu_target_compiles(target: str, grid: tuple[int, int, int],
                                                    threads: int) -> None:
    tilec.compile(kernel_on_grid(*grid, threads=threads), target=target)


def tall_gemm(M):
    """A GEMM tile of the quickstart's over M rows, one block row of them per block along y."""

    @T.prim_func
    def main(A: T.Tensor((M, 64), "float16"), B: T.Tensor((64, 128), "float16"),
             C: T.Tensor((M, 128), "float16")):
        with T.Kernel(1, T.ceildiv(M, 128), threads=128) as (bx, by):  # error: tall-grid
            A_shared = T.alloc_shared((128, 64), "float16")
            B_shared = T.alloc_shared((64, 128), "float16")
            C_local = T.alloc_fragment((128, 128), "float32")
            T.clear(C_local)
            T.copy(A[by * 128, 0], A_shared)
            T.copy(B[0, 0], B_shared)
            T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * 128, 0])

    return main


def test_grid_of_a_tensor_core_gemm_past_the_cuda_limit() -> None:
    error = compile_error(tall_gemm(65536 * 128), "cuda:sm_90a")
    check_error(error, CompileError, "tall-grid", "the grid has 65536 blocks along y",
                "at most 65535")


def shared_tile(elements):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=64) as _:  # error: shared-limit
            tile = T.alloc_shared((elements,), "float32")
            T.copy(A, tile[0:64])
            T.copy(tile[0:64], A)

    return main


@pytest.mark.parametrize("target, kib, limit", [
    ("cuda:sm_90a", 300, 232448), ("cuda:sm_80", 200, 166912), ("cuda:sm_86", 120, 101376),
    ("cuda:sm_120a", 100, 101376), ("hip:gfx942", 128, 65536), ("vulkan", 40, 32768),
    ("webgpu", 20, 16384)])
def test_shared_memory_past_the_limit_of_each_target(target: str, kib: int, limit: int) -> None:
    error = compile_error(shared_tile(kib * 256), target)
    check_error(error, CompileError, "shared-limit", f"{kib * 1024} bytes of", f"{limit}")


@pytest.mark.parametrize("target", ["cpu", "cuda:sm_90a", "hip:gfx942", "vulkan"])
def test_threads_past_the_block_limit(target: str) -> None:
    error = compile_error(kernel_on_grid(1, 1, 1, threads=2048), target)
    check_error(error, TilecError, "grid", "a block has 1 to 1024 threads, got 2048")


@pytest.mark.parametrize("target, threads, axis, limit", [
    ("cuda:sm_90a", (1, 1, 128), "z", 64), ("cuda:sm_80", (1, 2, 65), "z", 64),
    ("vulkan", (2, 1, 96), "z", 64)])
def test_threads_along_an_axis_past_its_limit(target: str, threads: tuple[int, int, int],
                                              axis: str, limit: int) -> None:
    """A CUDA block has at most 64 threads along z (1024 along x and y): (1, 1, 128) passed
    the 1024-in-all check and compiled, and every launch would have failed."""
    error = compile_error(kernel_on_grid(1, 1, 1, threads=threads), target)
    check_error(error, CompileError, "grid",
                f"a block has {threads[2]} threads along {axis}", f"at most {limit}")


def test_threads_along_z_within_the_limits() -> None:
    tilec.compile(kernel_on_grid(1, 1, 1, threads=(2, 2, 64)), target="cuda:sm_90a")


def zero_size_tensor():
    @T.prim_func
    def main(
        A: T.Tensor((0, 4), "float32"),  # error: zero-tensor
        B: T.Tensor((4,), "float32"),
    ):
        with T.Kernel(1, threads=1) as _:
            B[0] = 1.0

    return main


def test_tensor_with_a_zero_size() -> None:
    check_error(compile_error(zero_size_tensor()), TilecError, "zero-tensor",
                "the shape of 'A' has a zero size: (0, 4)")


def zero_size_buffer(scope, shape):
    allocate = ALLOCATORS[scope]

    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=1) as _:
            buffer = allocate(shape, "float32")  # error: zero-buffer
            A[0] = buffer[0]

    return main


@pytest.mark.parametrize("scope", list(ALLOCATORS))
@pytest.mark.parametrize("shape", [(0,), (4, 0), (-2, 4)])
def test_buffer_with_a_size_not_positive(scope: str, shape: tuple[int, ...]) -> None:
    check_error(compile_error(zero_size_buffer(scope, shape)), TilecError, "zero-buffer",
                "a shape is a tuple of positive ints")


# ------------------------------------------------------------------ the cache key


FILL_VALUE = 1.0


def fill_with_a_global():
    @T.prim_func
    def main(A: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=8) as _:
            for i in T.Parallel(8):
                A[i] = FILL_VALUE

    return main


def test_a_changed_global_compiles_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two kernels of the same source that read a module global of different values are two
    cache entries: the second never runs the first one's code."""
    results = []
    for value in (1.0, 2.5):
        monkeypatch.setitem(globals(), "FILL_VALUE", value)
        kernel = tilec.compile(fill_with_a_global(), target="cpu")
        out = torch.full((8,), float("nan"))
        kernel(out)
        results.append(out)
    torch.testing.assert_close(results[0], torch.full((8,), 1.0))
    torch.testing.assert_close(results[1], torch.full((8,), 2.5))


# ------------------------------------------------------------------ a damaged disk cache


def doubler():
    @T.prim_func
    def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=16) as _:
            for i in T.Parallel(16):
                B[i] = A[i] * 2.0

    return main


def tripler():
    @T.prim_func
    def main(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
        with T.Kernel(1, threads=16) as _:
            for i in T.Parallel(16):
                B[i] = A[i] * 3.0

    return main


def compiled_entry(factory, cache_root: Path) -> Path:
    """Compile `factory`'s kernel into the cache; its entry's folder."""
    before = set(cache_root.iterdir()) if cache_root.exists() else set()
    tilec.compile(factory(), target="cpu")
    tilec.cache.clear_memory()
    (entry,) = set(cache_root.iterdir()) - before
    return entry


def runs_right(factory, scale: float) -> None:
    kernel = tilec.compile(factory(), target="cpu")
    a, b = torch.randn(16), torch.full((16,), float("nan"))
    kernel(a, b)
    torch.testing.assert_close(b, a * scale)


def truncate(entry: Path) -> None:
    binary = entry / "kernel.bin"
    binary.write_bytes(binary.read_bytes()[: binary.stat().st_size // 3])


def random_bytes(entry: Path) -> None:
    binary = entry / "kernel.bin"
    binary.write_bytes(bytes(torch.randint(0, 256, (binary.stat().st_size,),
                                           dtype=torch.uint8).tolist()))


def garbage_metadata(entry: Path) -> None:
    (entry / "kernel.json").write_text("{not json")


def missing_binary(entry: Path) -> None:
    (entry / "kernel.bin").unlink()


def empty_folder(entry: Path) -> None:
    for path in entry.iterdir():
        path.unlink()


@pytest.mark.parametrize("damage", [truncate, random_bytes, garbage_metadata, missing_binary,
                                    empty_folder])
def test_a_damaged_entry_is_reported_once_and_compiled_again(damage, private_cache: Path
                                                             ) -> None:
    entry = compiled_entry(doubler, private_cache)
    damage(entry)
    with pytest.warns(RuntimeWarning, match="is damaged"):
        runs_right(doubler, 2.0)
    tilec.cache.clear_memory()
    tilec.cache.lookup(entry.name)  # repaired: read again without a warning
    assert tilec.cache.lookup(entry.name) is not None
    assert sorted(p.name for p in private_cache.iterdir()) == [entry.name], "no staging left"


def test_swapped_binaries_are_found(private_cache: Path) -> None:
    """Two entries' binaries exchanged: each entry's checksum catches the other's binary, so
    neither runs the other kernel."""
    double, triple = compiled_entry(doubler, private_cache), compiled_entry(tripler,
                                                                            private_cache)
    first, second = (double / "kernel.bin").read_bytes(), (triple / "kernel.bin").read_bytes()
    (double / "kernel.bin").write_bytes(second)
    (triple / "kernel.bin").write_bytes(first)
    with pytest.warns(RuntimeWarning, match="does not match the checksum"):
        runs_right(doubler, 2.0)
        runs_right(tripler, 3.0)


def test_swapped_entries_are_found(private_cache: Path) -> None:
    """Two entry folders exchanged whole: each records its own key."""
    double, triple = compiled_entry(doubler, private_cache), compiled_entry(tripler,
                                                                            private_cache)
    double.rename(private_cache / "swap")
    triple.rename(double)
    (private_cache / "swap").rename(triple)
    with pytest.warns(RuntimeWarning, match="holds the entry of key"):
        runs_right(doubler, 2.0)
        runs_right(tripler, 3.0)


def test_a_damaged_entry_without_a_compiler_is_an_error(private_cache: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    entry = compiled_entry(doubler, private_cache)
    truncate(entry)
    monkeypatch.setattr(tilec.cache, "compiler_fingerprint", lambda: None)
    with pytest.raises(TilecError, match="is damaged .* no compiler is installed here"):
        tilec.cache.lookup(entry.name)


def test_an_unwritable_cache_directory_still_runs(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv("TILEC_CACHE_DIR", str(blocker / "cache"))
    monkeypatch.setattr(tilec.cache, "_reported", set())
    tilec.cache.clear_memory()
    with pytest.warns(RuntimeWarning, match="cannot write the kernel cache .* in memory only"):
        runs_right(doubler, 2.0)
    tilec.cache.clear_memory()


def test_entries_take_the_umask(private_cache: Path) -> None:
    """Folders readable by the group and others as the umask allows (mkdtemp makes 0o700)."""
    umask = os.umask(0o027)
    tilec.cache._folder_mode.cache_clear()
    try:
        entry = compiled_entry(doubler, private_cache)
    finally:
        os.umask(umask)
        tilec.cache._folder_mode.cache_clear()
    assert entry.stat().st_mode & 0o777 == 0o750


CONCURRENT = """
import sys, torch, tilec
sys.path.insert(0, {tests!r})
from test_bad_inputs import doubler
kernel = tilec.compile(doubler(), target="cpu")
a, b = torch.randn(16), torch.zeros(16)
kernel(a, b)
assert torch.equal(b, a * 2)
"""


def test_concurrent_compiles_leave_one_whole_entry(private_cache: Path) -> None:
    script = CONCURRENT.format(tests=str(THIS_FILE.parent))
    runs = [subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True)
            for _ in range(3)]
    for run in runs:
        assert run.wait(timeout=300) == 0, run.stderr.read()
    (entry,) = private_cache.iterdir()
    assert not entry.name.startswith(".")
    assert Artifact.load(entry).binary  # whole: its checksum holds
    assert (entry / tilec.cache.KEY_FILE).read_text() == entry.name


# ------------------------------------------------------------------ buffers past the registers


def large_fragment(size, threads):
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=threads) as _:
            buffer = T.alloc_fragment((size, size), "float32")  # error: large-fragment
            T.fill(buffer, 1.5)
            A[0] = buffer[5, 7]

    return main


def test_a_fragment_past_the_stack_runs_on_the_cpu() -> None:
    """16 MB of fragment lives on the heap on the CPU target (on the stack it segfaulted)."""
    kernel = tilec.compile(large_fragment(2048, 1), target="cpu")
    a = torch.full((64,), float("nan"))
    kernel(a)
    assert a[0] == 1.5


def huge_local():
    @T.prim_func
    def main(A: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=1) as _:
            buffer = T.alloc_local((2**40,), "float32")  # error: huge-local
            A[0] = buffer[5]

    return main


def test_a_buffer_past_4_gib_is_an_error_on_the_cpu() -> None:
    """4 TB of T.alloc_local was a malloc that gave no memory: the kernel segfaulted."""
    error = compile_error(huge_local(), "cpu")
    check_error(error, CompileError, "huge-local", "this buffer takes 4398046511104 bytes",
                "at most 4294967296 (4 GiB) on the CPU target")


@pytest.mark.parametrize("target", ["cuda:sm_80", "cuda:sm_90a"])
def test_a_fragment_past_the_registers_is_an_error_on_cuda(target: str) -> None:
    """On CUDA a fragment lives in registers; 16 MB per thread took minutes to build."""
    error = compile_error(large_fragment(2048, 1), target)
    check_error(error, CompileError, "large-fragment", "the fragment holds 4194304 elements "
                "per thread", "at most 255 per thread")


# ------------------------------------------------------------------ names that would mislead


def prints_in_kernel():
    @T.prim_func
    def main(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=1) as _:
            print("in the kernel")  # error: print
            A[0] = 1.0

    return main


@pytest.mark.parametrize("target", TARGETS)
def test_print_in_a_kernel(target: str) -> None:
    """print() would run once at build time, never when the kernel runs."""
    check_error(compile_error(prints_in_kernel(), target), TilecError, "print",
                "print() in a kernel would run once, while the kernel is built")


def atomic_add_into(dtype):
    @T.prim_func
    def main(A: T.Tensor((4,), dtype)):
        with T.Kernel(1, threads=1) as _:
            T.atomic_add(A[1], 1.0)  # error: atomic-dtype

    return main


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", ["float8_e4m3", "float8_e5m2"])
def test_atomic_add_of_8_bit_floats(dtype: str, target: str) -> None:
    check_error(compile_error(atomic_add_into(dtype), target), TilecError, "atomic-dtype",
                f"T.atomic_add into 'A' of {dtype}", "no atomic add of 8-bit floats")


def gemm_bf16_into_f16():
    @T.prim_func
    def main(A: T.Tensor((16, 16), "bfloat16"), C: T.Tensor((16, 16), "float16")):
        with T.Kernel(1, threads=128) as _:
            a = T.alloc_shared((16, 16), "bfloat16")
            c = T.alloc_fragment((16, 16), "float16")
            T.copy(A, a)
            T.clear(c)
            T.gemm(a, a, c)
            T.copy(c, C)

    return main


def test_gemm_between_float_types_of_one_width(rng: torch.Generator) -> None:
    """bf16 products into an fp16 accumulator convert through float32 (the CPU lowering built
    an invalid bf16 -> f16 truncf)."""
    a = torch.randn(16, 16, generator=rng).to(torch.bfloat16)
    c = torch.full((16, 16), float("nan"), dtype=torch.float16)
    tilec.compile(gemm_bf16_into_f16(), target="cpu")(a, c)
    torch.testing.assert_close(c.float(), (a.double() @ a.double()).float(), rtol=2e-2,
                               atol=1e-1)


def test_an_op_left_before_the_llvm_translation_is_an_error() -> None:
    """An op no conversion lowered (here an unrealized cast of a float8 value) is named at its
    line before the LLVM translation, which crashed the process on it."""
    from mlir import ir

    import tilec.dialect
    from tilec.compiler.pipeline import CompileOptions
    from tilec.compiler.targets.cpu import _translate

    with tilec.dialect.new_context():
        module = ir.Module.parse("""
          llvm.func @f(%a: i8) -> i8 {
            %0 = builtin.unrealized_conversion_cast %a : i8 to f8E4M3FN loc("kernel.py":7:3)
            %1 = builtin.unrealized_conversion_cast %0 : f8E4M3FN to i8
            llvm.return %1 : i8
          }""")
        with pytest.raises(CompileError) as caught:
            _translate(module, CompileOptions("cpu"))
    assert caught.value.filename == "kernel.py" and caught.value.lineno == 7
    assert "builtin.unrealized_conversion_cast is left where the kernel is translated" in str(
        caught.value)


def loop_by_a_loaded_step():
    @T.prim_func
    def main(Steps: T.Tensor((1,), "int32"), Count: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=1) as _:
            for _ in T.serial(3, 20, Steps[0]):
                Count[0] = Count[0] + 1

    return main


@pytest.mark.parametrize("step, trips", [(0, 0), (-2, 0), (1, 17), (4, 5), (100, 1)])
def test_a_run_time_loop_step_below_one_runs_no_iteration(step: int, trips: int) -> None:
    """A T.serial whose step is 0 at run time spun forever (scf.for takes the step as
    positive); a negative one too. Its trip count is otherwise range(3, 20, step)'s."""
    count = torch.zeros(1, dtype=torch.int32)
    tilec.compile(loop_by_a_loaded_step(), target="cpu")(
        torch.tensor([step], dtype=torch.int32), count)
    assert count.item() == trips == (len(range(3, 20, step)) if step > 0 else 0)


def math_of_constants():
    @T.prim_func
    def main(A: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=1) as _:
            A[0] = T.sqrt(-1.0)
            A[1] = T.log(0.0)
            A[2] = T.exp(1000.0)
            A[3] = T.sigmoid(-1000.0)
            A[4] = T.floor(float("nan"))
            A[5] = T.log(-2.0)
            A[6] = T.sigmoid(3.0)
            A[7] = T.rsqrt(0.0)

    return main


def test_math_of_constants_outside_the_domain_gives_ieee_values() -> None:
    """T.sqrt(-1.0), T.log(0.0), T.exp(1000.0) were folded by Python's math module, whose
    ValueError / OverflowError came out as an 'internal error of the tilec frontend'."""
    a = torch.zeros(8)
    tilec.compile(math_of_constants(), target="cpu")(a)
    expected = torch.tensor([float("nan"), float("-inf"), float("inf"), 0.0, float("nan"),
                             float("nan"), 1 / (1 + torch.exp(torch.tensor(-3.0))).item(),
                             float("inf")])
    torch.testing.assert_close(a, expected, equal_nan=True)


def math_of_a_buffer(negated: bool):
    @T.prim_func
    def main(A: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=1) as _:
            if negated:
                A[0] = -A  # error: negated-buffer
            else:
                A[0] = T.exp(A)  # error: math-buffer

    return main


def test_math_of_a_whole_buffer_is_named() -> None:
    """They were the math.exp and arith.negf verifiers' 'operand #0 must be
    floating-point-like, but got memref<8xf32>'."""
    check_error(compile_error(math_of_a_buffer(False)), TilecError, "math-buffer",
                "T.exp of a whole buffer is not supported: index elements")
    check_error(compile_error(math_of_a_buffer(True)), TilecError, "negated-buffer",
                "arithmetic on whole buffers is not supported: index elements")


def sum_of_elements():
    @T.prim_func
    def main(A: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=1) as _:
            A[0] = sum([A[1], A[2]])  # error: sum-of-elements

    return main


def test_a_python_builtin_on_a_list_of_kernel_values_is_named() -> None:
    """sum([A[1], A[2]]) ran sum at compile time and showed its TypeError: "unsupported operand
    type(s) for +: 'int' and 'Scalar'", a compiler object."""
    error = compile_error(sum_of_elements())
    check_error(error, TilecError, "sum-of-elements", "cannot call sum() on kernel values")
    assert "Scalar" not in error.message


def kernel_doing_nothing():
    @T.prim_func
    def main(A: T.Tensor((8,), "float32")):  # error: does-nothing
        with T.Kernel(1, threads=32) as _:
            if A is None:  # known when compiling: False
                A[0] = 1.0

    return main


@pytest.mark.parametrize("target", ["cuda:sm_90a", "cuda:sm_80", "vulkan"])
def test_a_kernel_that_does_nothing_is_named_on_a_gpu_target(target: str) -> None:
    """Its T.Kernel block was removed as dead code and the GPU lowering ended in a
    StopIteration traceback; the CPU target runs it (it does nothing)."""
    check_error(compile_error(kernel_doing_nothing(), target), CompileError, "does-nothing",
                "the kernel does nothing: its T.Kernel block stores, copies or prints nothing")
    tilec.compile(kernel_doing_nothing(), target="cpu")(torch.zeros(8))


def fragment_in_parallel(scope: str):
    @T.prim_func
    def main(A: T.Tensor((8, 8), "float32"), B: T.Tensor((8, 8), "float32")):
        with T.Kernel(1, threads=64) as _:
            for i, j in T.Parallel(8, 8):
                if scope == "fragment":
                    s = T.alloc_fragment((2,), "float32")  # error: fragment-in-parallel
                else:
                    s = T.alloc_local((2,), "float32")
                s[1] = A[i, j]
                B[i, j] = s[1] * 2.0

    return main


@pytest.mark.parametrize("target", ["cpu", "cuda:sm_90a"])
def test_a_fragment_allocated_inside_parallel_is_an_error(target: str) -> None:
    """The CUDA lowering crashed the process (SIGSEGV) on it; a per-point buffer is local."""
    check_error(compile_error(fragment_in_parallel("fragment"), target), TilecError,
                "fragment-in-parallel", "a fragment buffer allocated inside T.Parallel",
                "T.alloc_local for a buffer of each point")


def test_a_local_buffer_of_each_point_runs() -> None:
    a = torch.randn(8, 8)
    b = torch.full((8, 8), float("nan"))
    tilec.compile(fragment_in_parallel("local"), target="cpu")(a, b)
    torch.testing.assert_close(b, 2 * a)
    tilec.compile(fragment_in_parallel("local"), target="cuda:sm_90a")


def python_forms(form: str):
    @T.prim_func
    def main(A: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=1) as _:
            if form == "in":
                if A[0] in (1.0, 2.0):  # error: in-a-kernel-value
                    A[1] = 1.0
            else:
                first, *_rest = (1.0, 2.0, 3.0)  # error: starred
                A[1] = first

    return main


def test_in_and_starred_assignment_say_what_to_write() -> None:
    """They were 'unsupported comparison In in a kernel' and 'cannot unpack 3 values into 2
    names'."""
    check_error(compile_error(python_forms("in")), TilecError, "in-a-kernel-value",
                "`in` / `not in` of a kernel value is not supported: compare it with ==")
    check_error(compile_error(python_forms("starred")), TilecError, "starred",
                "starred assignment (a, *rest = ...) is not supported in a kernel")
