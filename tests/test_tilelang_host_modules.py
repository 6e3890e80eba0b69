"""TileLang's host modules examples import: tilelang.engine, tilelang.env, tilelang.cuda's
intrinsic helpers, tilelang.language.fp8 / dtypes and transform.simplify_prim_func; each name
works as in TileLang or raises at the caller's line saying what tilec lacks."""

from __future__ import annotations

import inspect
import itertools
from pathlib import Path

import pytest
import torch

import tilec as tilelang
import tilec.language as T
from tilec.errors import TilecError

THIS_FILE = str(Path(__file__).resolve())


def _line_of(text: str) -> int:
    """The line of this file holding `text` (once)."""
    lines = [n for n, line in enumerate(Path(THIS_FILE).read_text().splitlines(), 1)
             if text in line and "_assert_raised_here" not in line]
    assert len(lines) == 1, lines
    return lines[0]


def _assert_raised_here(error: TilecError, marker: str) -> None:
    assert Path(error.filename).resolve() == Path(THIS_FILE) and error.lineno == _line_of(marker)


# ---------------------------------------------------------------------------------------------
# tilelang.engine, tilelang.env


def test_postproc_callbacks_import_but_refuse_to_register() -> None:
    from tilec.engine.callback import register_cuda_postproc_callback

    with pytest.raises(TilecError, match="generates no CUDA source") as raised:
        @register_cuda_postproc_callback  # marker: register
        def edit(code, _target):
            return code
    _assert_raised_here(raised.value, "marker: register")
    assert not hasattr(tilelang.engine, "lower")


def test_iket_has_tilelangs_names() -> None:
    """tilelang/tools/cuda/iket/__init__.py's public names (tests/test_iket.py compiles them)."""
    from tilec.tools.cuda import iket

    tilelang_names = {
        "PayloadSpec", "disable", "disable_runtime_payloads", "enable",
        "enable_runtime_payloads", "event_table", "is_enabled", "mark", "output_dir",
        "output_path", "payload", "profile_command", "range", "range_end", "range_pop",
        "range_push", "range_start", "reset", "runtime_payloads_enabled", "session",
        "set_output_dir", "trace_files"}
    assert tilelang_names <= set(dir(iket))
    with pytest.raises(TilecError, match=r"iket\.mark is a statement of a kernel") as raised:
        iket.mark("before_store")  # marker: iket mark
    _assert_raised_here(raised.value, "marker: iket mark")
    with pytest.raises(AttributeError, match="no attribute 'not_an_iket_name'"):
        iket.not_an_iket_name  # noqa: B018


def test_env_cache_dir_is_tilecs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    assert tilelang.env.TILELANG_CACHE_DIR == str(tmp_path)
    assert tilelang.env.TILELANG_TMP_DIR == str(tmp_path / "tmp")
    with pytest.raises(AttributeError, match="TILELANG_PRINT_ON_COMPILATION has no counterpart"):
        tilelang.env.TILELANG_PRINT_ON_COMPILATION  # noqa: B018


# ---------------------------------------------------------------------------------------------
# tilelang.language.fp8, tilelang.language.dtypes


def test_determine_fp8_type_is_cudas_formats(monkeypatch: pytest.MonkeyPatch) -> None:
    from tilec.language.fp8 import determine_fp8_type, determine_torch_fp8_type

    assert determine_fp8_type() is T.float8_e4m3fn and determine_fp8_type("e5m2") is T.float8_e5m2
    assert determine_torch_fp8_type("e5m2") is torch.float8_e5m2
    with pytest.raises(TilecError, match="unknown FP8 format 'e3m4'") as raised:
        determine_fp8_type("e3m4")  # marker: format
    _assert_raised_here(raised.value, "marker: format")
    monkeypatch.setattr(torch.version, "hip", "6.2")
    with pytest.raises(TilecError, match="ROCm"):
        determine_fp8_type()


def test_dtypes_module_maps_torch_dtypes_both_ways() -> None:
    import tilec.language.dtypes as dtypes

    assert dtypes.float is T.float32 and dtypes.dtype is T.dtype
    for torch_dtype, name in dtypes._TORCH_DTYPE_TO_STR.items():
        assert T.dtype(name).as_torch() is torch_dtype
        assert dtypes._STR_TO_TORCH_DTYPE[name] is torch_dtype
    assert dtypes._TORCH_DTYPE_TO_STR[torch.float32] == "float32"  # not tfloat32
    assert dtypes._TORCH_DTYPE_TO_STR[torch.float8_e4m3fn] == "float8_e4m3fn"
    assert {torch.float16, torch.bfloat16, torch.int8, torch.bool} <= set(
        dtypes._TORCH_DTYPE_TO_STR)


def test_sparse_layout_metadata() -> None:
    from tilec.cuda.intrinsics.sparse_layout import (
        GROUP_CONFIG,
        get_e_factor,
        get_e_replicate_factor,
    )

    # an int16 holds four 4-bit group descriptors: 4 groups of 4 halves, or of 2 floats
    assert get_e_factor(T.float16, T.int16) == 16 and get_e_factor("float32", T.int16) == 8
    assert get_e_factor(T.int8, T.int32) == 32
    assert get_e_replicate_factor(T.int8) == 1 and get_e_replicate_factor(T.bfloat16) == 2
    assert GROUP_CONFIG[T.dtype("float16")] == (2, 4)


# ---------------------------------------------------------------------------------------------
# tilelang.cuda.intrinsics


@pytest.mark.parametrize(("row_size", "dtype", "swizzle_bytes"), [
    (64, "float16", None), (32, "float16", None), (128, "int8", 64), (96, "float16", None),
    (16, "float32", None),
])
def test_swizzle_layout_permutes_16_byte_vectors_by_row(row_size: int, dtype: str,
                                                        swizzle_bytes: int | None) -> None:
    from tilec.cuda.intrinsics import get_swizzle_layout

    bits = T.dtype(dtype).bits
    per_vector = 128 // bits
    group = min(128, row_size * bits // 8) if swizzle_bytes is None else swizzle_bytes
    vectors = group // 16
    images = set()
    for row, col in itertools.product(range(16), range(row_size)):
        tile, out_row, out_col = get_swizzle_layout(row, col, row_size, dtype, swizzle_bytes)
        images.add((tile, out_row, out_col))
        # the element keeps its row and its place in its 16-byte vector; its vector in the
        # group is XORed with the row's phase (rows repeat every 8)
        assert out_row == row and out_col % per_vector == col % per_vector
        vector = col // per_vector
        assert tile == vector // vectors
        assert out_col // per_vector == (vector % vectors) ^ (row % 8 // (8 // vectors))
    assert len(images) == 16 * row_size  # a permutation


def test_swizzle_layout_rejects_rows_of_odd_bytes() -> None:
    from tilec.cuda.intrinsics import get_swizzle_layout

    with pytest.raises(TilecError, match="a row of 40 bytes") as raised:
        get_swizzle_layout(0, 0, 20, T.float16)  # marker: row bytes
    _assert_raised_here(raised.value, "marker: row bytes")


@tilelang.transform.simplify_prim_func
def scaled_copy(rows: int, cols: int, dtype: str, scale: float):
    """TileLang's style: a factory returning a T.prim_func, its shared tile swizzled as
    TileLang's MMA operand tiles are."""
    from tilec.cuda.intrinsics import make_mma_swizzle_layout

    @T.prim_func
    def kernel(A: T.Tensor((rows, cols), dtype), B: T.Tensor((rows, cols), dtype)):
        with T.Kernel(1, threads=128):
            staged = T.alloc_shared((rows, cols), dtype)
            T.annotate_layout({staged: make_mma_swizzle_layout(staged)})
            T.copy(A, staged)
            for i, j in T.Parallel(rows, cols):
                B[i, j] = staged[i, j] * scale

    return kernel


def test_mma_swizzled_shared_tile_numerics_on_the_cpu() -> None:
    kernel = tilelang.compile(scaled_copy(32, 64, "float16", 3.0), out_idx=[1], target="cpu")
    a = torch.randn(32, 64, dtype=torch.float16)
    torch.testing.assert_close(kernel(a).float(), a.float() * 3.0, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize(("cols", "swizzle"), [(64, "128B"), (32, "64B"), (16, "none")])
def test_mma_swizzle_of_a_shared_tile_reaches_the_cuda_ir(cols: int, swizzle: str) -> None:
    kernel = tilelang.compile(scaled_copy(32, cols, "float16", 2.0), out_idx=[1],
                              target="cuda:sm_80")
    assert f"tile.swizzle_request = #tile.swizzle<{swizzle}>" in kernel.asm["tile"]


def test_simplify_prim_func_takes_only_kernel_factories() -> None:
    @tilelang.transform.simplify_prim_func
    def not_a_factory():
        return 3

    with pytest.raises(TilecError, match=r"not_a_factory\(\) must return a T.prim_func"):
        not_a_factory()
    assert inspect.signature(scaled_copy).parameters.keys() == {"rows", "cols", "dtype", "scale"}


def test_removed_mma_emitters_raise_at_the_callers_line() -> None:
    from tilec.cuda.intrinsics.macro.mma_macro_generator import INT4TensorCoreIntrinEmitter

    with pytest.raises(TilecError, match="INT4TensorCoreIntrinEmitter .* TileLang removed it "
                                         r".* write T.gemm on T.int4 tiles") as raised:
        INT4TensorCoreIntrinEmitter(a_dtype=T.int8, b_dtype=T.int8)  # marker: emitter
    _assert_raised_here(raised.value, "marker: emitter")
    with pytest.raises(AttributeError, match="not implemented by tilec"):
        tilelang.cuda.intrinsics.mma_store_index_map  # noqa: B018
    with pytest.raises(AttributeError, match="TVM-based CUDA backend"):
        tilelang.cuda.codegen  # noqa: B018
