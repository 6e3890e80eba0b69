"""T.reshape / T.view of fragment, shared and local buffers (TileLang's DeepSeek indexer and
HISA kernels reshape a gemm's accumulator to reduce over heads) and copies between parts of
fragments (its flash-decoding combine copies a row of a fragment into another): CPU numerics
against float64 torch references, writes through a view seen by its source and back, clear
errors at the kernel's line for what a view cannot be, PTX for sm_90a assembled."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from conftest import assert_close, randn

import tilec
import tilec.language as T
from tilec.compiler.targets.cuda import ptxas_path
from tilec.errors import TilecError


@tilec.jit
def head_logits(X, W, block_N=8, Q=4, H=4):
    """The indexer's pattern: scale a [rows, Q * H] fragment through its [rows, Q, H] view,
    then sum each query's heads (T.reduce_sum over the view's last dimension)."""
    N = T.const("N")
    X: T.Tensor((N, Q * H), T.float32)
    W: T.Tensor((Q, H), T.float32)
    logits = T.empty((N, Q), T.float32)
    scaled = T.empty((N, Q * H), T.float32)
    with T.Kernel(T.ceildiv(N, block_N), threads=64) as bx:
        s = T.alloc_fragment((block_N, Q * H), T.float32)
        s_reshaped = T.reshape(s, (block_N, Q, H))
        weights = T.alloc_fragment((Q, H), T.float32)
        out = T.alloc_fragment((block_N, Q), T.float32)
        T.copy(X[bx * block_N, 0], s)
        T.copy(W, weights)
        for n, q, h in T.Parallel(block_N, Q, H):
            s_reshaped[n, q, h] = T.max(s_reshaped[n, q, h], 0) * weights[q, h]
        T.reduce_sum(s_reshaped, out, dim=-1, clear=True)
        T.copy(out, logits[bx * block_N, 0])
        T.copy(s, scaled[bx * block_N, 0])
    return logits, scaled


def test_fragment_view_is_the_fragment_reshaped(rng: torch.Generator) -> None:
    x = randn((24, 16), torch.float32, rng)
    w = randn((4, 4), torch.float32, rng)
    logits, scaled = head_logits(x, w)
    expected = x.double().clamp(min=0).reshape(24, 4, 4) * w.double()
    assert_close(scaled, expected.reshape(24, 16), torch.float32)
    assert_close(logits, expected.sum(-1), torch.float32)


@tilec.jit
def shared_views(X, rows=4, cols=8):
    """A shared tile written through a merged 1-d view and a split 3-d view, read through the
    tile itself; a local buffer's view accumulates into the local buffer; T.clear of a view
    clears its source; a reduce writes its result through a view of the destination."""
    X: T.Tensor((rows, cols), T.float32)
    Y = T.empty((rows, cols), T.float32)
    totals = T.empty((rows,), T.float32)
    acc_out = T.empty((2,), T.float32)
    with T.Kernel(1, threads=32):
        tile = T.alloc_shared((rows, cols), T.float32)
        flat = T.view(tile, shape=(rows * cols,))
        split = T.reshape(tile, (rows, 2, cols // 2))
        acc = T.alloc_local((2,), T.float32)
        acc_pairs = T.reshape(acc, (1, 2))
        sums = T.alloc_fragment((rows,), T.float32)
        sums_2d = T.reshape(sums, (2, rows // 2))
        T.clear(split)
        T.clear(acc_pairs)
        for i, j in T.Parallel(rows, cols):
            flat[i * cols + j] = flat[i * cols + j] + X[i, j] * 2.0
        for i, h, k in T.Parallel(rows, 2, cols // 2):
            split[i, h, k] += h * 100.0
        for k in T.serial(rows * cols):
            acc_pairs[0, k % 2] += flat[k]
        T.copy(tile, Y)
        T.reduce_sum(tile, sums, dim=1)
        for a, b in T.Parallel(2, rows // 2):
            sums_2d[a, b] = sums_2d[a, b] + 0.5
        T.copy(sums, totals)
        T.copy(acc, acc_out)
    return Y, totals, acc_out


def test_shared_and_local_views_alias_their_buffers(rng: torch.Generator) -> None:
    x = randn((4, 8), torch.float32, rng)
    y, totals, acc = shared_views(x)
    expected = x.double() * 2
    expected[:, 4:] += 100.0
    assert_close(y, expected, torch.float32)
    assert_close(totals, expected.sum(1) + 0.5, torch.float32)
    flat = expected.reshape(-1)
    assert_close(acc, torch.stack([flat[0::2].sum(), flat[1::2].sum()]), torch.float32)


@tilec.jit
def reduce_into_view(X, rows=8, cols=16):
    """T.reduce_max into a [2, rows // 2] view of a [rows] fragment, accumulating (clear=False)
    onto what the fragment held."""
    X: T.Tensor((rows, cols), T.float32)
    Y = T.empty((rows,), T.float32)
    with T.Kernel(1, threads=32):
        data = T.alloc_fragment((2, rows // 2, cols), T.float32)
        data_rows = T.reshape(data, (rows, cols))
        best = T.alloc_fragment((rows,), T.float32)
        best_2d = T.view(best, shape=(2, rows // 2))
        T.copy(X, data_rows)
        T.fill(best, 1.5)
        T.reduce_max(data, best_2d, dim=2, clear=False)
        T.copy(best, Y)
    return Y


def test_reduce_into_a_view_keeps_clear_false(rng: torch.Generator) -> None:
    x = randn((8, 16), torch.float32, rng)
    y = reduce_into_view(x)
    assert_close(y, x.double().amax(1).clamp(min=1.5), torch.float32)


@tilec.jit
def combine_splits(LSE, splits=4, block_M=16):
    """The flash-decoding combine: T.copy of row k of a [splits, block_M] fragment into a
    [block_M] one (a runtime row), and of a [block_M] fragment into a [1, block_M] one."""
    M = T.const("M")
    LSE: T.Tensor((splits, M), T.float32)
    total = T.empty((M,), T.float32)
    last = T.empty((1, M), T.float32)
    with T.Kernel(T.ceildiv(M, block_M), threads=32) as bx:
        lse = T.alloc_fragment((splits, block_M), T.float32)
        row = T.alloc_fragment((block_M,), T.float32)
        acc = T.alloc_fragment((block_M,), T.float32)
        row_2d = T.alloc_fragment((1, block_M), T.float32)
        T.copy(LSE[0, bx * block_M], lse)
        T.clear(acc)
        for k in T.Pipelined(splits):
            T.copy(lse[k, :], row)
            for i in T.Parallel(block_M):
                acc[i] += row[i] * (k + 1)
        T.copy(acc, total[bx * block_M])
        T.copy(row, row_2d)
        T.copy(row_2d, last[0, bx * block_M])
    return total, last


def test_copies_between_parts_of_fragments(rng: torch.Generator) -> None:
    lse = randn((4, 48), torch.float32, rng)
    total, last = combine_splits(lse)
    weights = torch.arange(1, 5, dtype=torch.float64)[:, None]
    assert_close(total, (lse.double() * weights).sum(0), torch.float32)
    assert_close(last, lse[3:].double(), torch.float32)


@tilec.jit
def reinterpreted_scratch(X, Y, rows=16, cols=32):
    """sparse_mla_bwd's reuse of a bf16 shared tile as float32 scratch: the tile, loaded and
    stored as bf16, then written and read through [rows // 2, cols] and default-shaped
    ([rows, cols // 2]) float32 views; its raw bf16 contents show the float32 bytes; T.clear of
    a view zeroes the tile; a local int8 buffer read as int32."""
    X: T.Tensor((rows, cols), T.bfloat16)
    Y: T.Tensor((rows // 2, cols), T.float32)
    passed = T.empty((rows, cols), T.bfloat16)
    scratch = T.empty((rows // 2, cols), T.float32)
    raw = T.empty((rows, cols), T.bfloat16)
    halves = T.empty((rows, cols // 2), T.float32)
    cleared = T.empty((rows, cols), T.bfloat16)
    words = T.empty((2,), T.int32)
    with T.Kernel(1, threads=64):
        tile = T.alloc_shared((rows, cols), T.bfloat16)
        wide = T.view(tile, shape=[rows // 2, cols], dtype=T.float32)
        wide_rows = T.view(tile, dtype=T.float32)
        small = T.alloc_local((8,), T.int8)
        small_words = T.view(small, dtype=T.int32)
        T.copy(X, tile)
        T.copy(tile, passed)
        for i, j in T.Parallel(rows // 2, cols):
            wide[i, j] = Y[i, j] * 2.0
        for i, j in T.Parallel(rows // 2, cols):
            scratch[i, j] = wide[i, j] + 1.0
        T.copy(tile, raw)
        for i, j in T.Parallel(rows, cols // 2):
            halves[i, j] = wide_rows[i, j]
        T.clear(wide)
        T.copy(tile, cleared)
        for k in T.serial(8):
            small[k] = k + 1
        for k in T.serial(2):
            words[k] = small_words[k]
    return passed, scratch, raw, halves, cleared, words


def test_a_view_of_another_dtype_reinterprets_the_bytes(rng: torch.Generator) -> None:
    x = randn((16, 32), torch.bfloat16, rng)
    y = randn((8, 32), torch.float32, rng)
    passed, scratch, raw, halves, cleared, words = reinterpreted_scratch(x, y)
    assert torch.equal(passed, x)
    assert_close(scratch, y.double() * 2 + 1, torch.float32)
    assert torch.equal(raw.view(torch.float32).reshape(8, 32), y * 2)  # the same bytes
    assert torch.equal(halves, (y * 2).reshape(16, 16))
    assert torch.equal(cleared, torch.zeros(16, 32, dtype=torch.bfloat16))
    expected = torch.arange(1, 9, dtype=torch.int8).view(torch.int32)
    assert torch.equal(words, expected)


def _error_kernel(body: str, tmp_path: Path):
    path = tmp_path / "bad_view.py"
    path.write_text(
        "import tilec.language as T\n\n"
        "@T.prim_func\n"
        "def main(A: T.Tensor((16, 16), 'float16'), C: T.Tensor((16, 16), 'float32')):\n"
        "    with T.Kernel(1, threads=128):\n"
        "        S = T.alloc_shared((16, 16), 'float16')\n"
        "        F = T.alloc_fragment((16, 16), 'float32')\n"
        f"        {body}\n"
        "        T.copy(F, C)\n")
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace["main"], str(path)


@pytest.mark.parametrize(("body", "message"), [
    ("V = T.view(S, shape=(16, 16), dtype='float32')", "takes 1024 bytes, but buffer 'S'"),
    ("V = T.view(S, dtype='int8')", "as wide as its own or wider"),
    ("V = T.view(F, dtype='float64')", "not of a fragment one"),
    ("V = T.view(S, shape=(15, 3), dtype='float16')", "has 45 elements"),
    ("T.view(T.alloc_shared((3, 3), 'float16'), dtype='float32')", "give the view's shape"),
    ("V = T.view(S, dtype='float32'); T.atomic_add(V[0, 0], 1.0)",
     "no single atomic covers"),
    ("V = T.reshape(F, (16, 8))", "has 128 elements, but buffer 'F'"),
    ("V = T.reshape(S, (256,)); T.gemm(V, S, F)", "T.gemm does not take"),
    ("V = T.reshape(F, (256,)); T.cumsum(V)", "T.cumsum does not take"),
    ("V = T.reshape(F, (256,)); T.annotate_layout({V: T.Fragment((256,), "
     "forward_thread_fn=lambda i: i % 128, forward_index_fn=lambda i: i // 128)})",
     "takes no layout of its own"),
])
def test_bad_buffer_views_name_the_line(body: str, message: str, tmp_path: Path) -> None:
    kernel, path = _error_kernel(body, tmp_path)
    with pytest.raises(TilecError, match=message) as caught:
        tilec.compile(kernel, target="cpu")
    assert caught.value.filename == path and caught.value.lineno == 8


@pytest.mark.skipif(ptxas_path() is None, reason="ptxas (CUDA toolkit) not found")
def test_fragment_views_assemble_for_sm90a(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    logits = head_logits.compile(N=64, target="cuda:sm_90a")
    # the T.Parallel over the view runs over the fragment's own [8, 16] points, indexing it
    # with its loop variables (its registers, not a shared copy)
    assert "tile.parallel [8, 16]" in logits.asm["tile"]
    for kernel in (logits, reduce_into_view.compile(target="cuda:sm_90a"),
                   reinterpreted_scratch.compile(target="cuda:sm_90a"),
                   combine_splits.compile(M=64, target="cuda:sm_90a")):
        assert kernel.artifact.binary.startswith(b"\x7fELF")
