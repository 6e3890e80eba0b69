"""Test inputs and output checks for kernels: TileLang's TensorSupplyType and torch_assert_close.

The kinds draw values as TileLang does, so a ported check sees the same distributions:

- Auto: floats (not float8) uniform in [-1, 1); everything else as Integer.
- Integer: -2..2 (unsigned 0..2, bool 0..1, float8 the integers -128..127 converted).
- Uniform: uniform in [-1, 1); Normal: normal with mean -1 and std 1; Randn: standard normal;
  each drawn in float32 and converted to the dtype, except that int8 gets ones under Uniform
  and Normal (TileLang's choices, kept so that tolerances tuned against TileLang hold).
- Zero, One: constant tensors.

Values come from torch's global
generator on the kernel's device: `tilec.testing.set_random_seed` makes them reproducible.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any

from tilec.errors import TilecError


class TensorSupplyType(Enum):
    """How the profiler fills a kernel's inputs (see the module docstring)."""

    Integer = 1
    Uniform = 2
    Normal = 3
    Randn = 4
    Zero = 5
    One = 6
    Auto = 7


def map_torch_type(dtype: Any) -> Any:
    """The torch dtype of a tilec / TileLang dtype name ("float16", T.bfloat16, "float8_e4m3")."""
    from tilec.jit import torch_dtype
    from tilec.language import dtype as tile_dtype

    return torch_dtype(tile_dtype(dtype).name)


def _static_shape(shape: Sequence[Any], name: str) -> list[int]:
    if any(not isinstance(dim, int) for dim in shape):
        raise TilecError(f"cannot make an input for '{name}' of shape {tuple(shape)}: its "
                         "dynamic sizes need values (get_profiler(symbols={...}))")
    return list(shape)


def random_tensor(supply_type: TensorSupplyType, dtype_name: str, shape: Sequence[int],
                  device: Any) -> Any:
    """One input of `dtype_name` and `shape` filled as `supply_type` says."""
    import torch

    from tilec.language import dtype as tile_dtype

    kind = tile_dtype(dtype_name)
    dtype = map_torch_type(kind)
    shape = list(shape)
    is_float8 = kind.name.startswith("float8")

    def integers(low: int, high: int) -> Any:
        if is_float8:
            return torch.randint(low, high, shape, device=device, dtype=torch.int8).to(dtype)
        return torch.randint(low, high, shape, device=device, dtype=dtype)

    def small_integers() -> Any:
        if kind.kind == "bool":
            return integers(0, 2)
        if kind.is_unsigned:
            return integers(0, 3)
        if is_float8:
            return integers(-128, 128)
        return integers(-2, 3)

    def in_float32() -> Any:
        return torch.empty(shape, device=device, dtype=torch.float32)

    if supply_type is TensorSupplyType.Auto:
        if kind.is_float and not is_float8:
            return in_float32().uniform_(-1.0, 1.0).to(dtype)
        return small_integers()
    if supply_type is TensorSupplyType.Integer:
        return small_integers()
    if supply_type in (TensorSupplyType.Uniform, TensorSupplyType.Normal) and dtype == torch.int8:
        return torch.ones(shape, device=device, dtype=dtype)
    if supply_type is TensorSupplyType.Uniform:
        return in_float32().uniform_(-1.0, 1.0).to(dtype)
    if supply_type is TensorSupplyType.Normal:
        return in_float32().normal_(-1.0, 1.0).to(dtype)
    if supply_type is TensorSupplyType.Randn:
        return torch.randn(shape, device=device).to(dtype)
    if supply_type is TensorSupplyType.Zero:
        return torch.zeros(shape, device=device, dtype=dtype)
    if supply_type is TensorSupplyType.One:
        return torch.ones(shape, device=device, dtype=dtype)
    raise TilecError(f"unknown tensor supply type {supply_type!r}")


def get_tensor_supply(supply_type: TensorSupplyType = TensorSupplyType.Integer,
                      device: Any = None) -> Callable[[Any], Any]:
    """A function making one input for a parameter (anything with `.dtype` and `.shape`, such
    as a kernel's `params[i]`), on `device` (the GPU when there is one, else the CPU)."""
    import torch

    chosen = device or ("cuda" if torch.cuda.is_available() else "cpu")

    def supply(param: Any) -> Any:
        name = getattr(param, "name", "?")
        return random_tensor(supply_type, str(param.dtype), _static_shape(param.shape, name),
                             chosen)

    return supply


def _first_mismatch(mismatched: Any) -> tuple[int, ...]:
    import torch

    flat = int(torch.argmax(mismatched.reshape(-1).to(torch.int8)))
    return tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), mismatched.shape))


def torch_assert_close(actual: Any, expected: Any, rtol: float = 1e-2, atol: float = 1e-3,
                       max_mismatched_ratio: float = 0.001, verbose: bool = False,
                       equal_nan: bool = True, check_device: bool = True,
                       check_dtype: bool = True, check_layout: bool = True,
                       check_stride: bool = False, base_name: str = "LHS",
                       ref_name: str = "RHS") -> bool:
    """`actual` and `expected` agree within atol + rtol * |expected| except for at most
    `max_mismatched_ratio` of their elements; else an AssertionError giving that ratio, the
    first mismatch and the largest errors. Values are compared in float64."""
    import torch

    actual, expected = torch.as_tensor(actual), torch.as_tensor(expected)
    checks = [("shape", True, tuple(actual.shape), tuple(expected.shape)),
              ("device", check_device, actual.device, expected.device),
              ("dtype", check_dtype, actual.dtype, expected.dtype),
              ("layout", check_layout, actual.layout, expected.layout),
              ("stride", check_stride, actual.stride(), expected.stride())]
    for attribute, wanted, left, right in checks:
        if wanted and left != right:
            raise AssertionError(f"{base_name} and {ref_name} differ in {attribute}: {left} != "
                                 f"{right}")
    left = actual.detach().to("cpu", torch.float64)
    right = expected.detach().to("cpu", torch.float64)
    mismatched = ~torch.isclose(left, right, rtol=rtol, atol=atol, equal_nan=equal_nan)
    count, total = int(mismatched.sum()), left.numel()
    allowed = int(total * max_mismatched_ratio)
    ratio = count / max(total, 1)
    if verbose:
        print(f"{base_name} vs {ref_name}: {count} of {total} elements mismatched "
              f"({ratio:.4%}, at most {allowed} allowed)")
    if count <= allowed:
        return True
    index = _first_mismatch(mismatched)
    error = (left - right).abs()
    finite = error.nan_to_num(float("inf"))
    relative = finite / (right.abs() + 1e-12)
    raise AssertionError(
        f"{count} of {total} elements mismatched ({ratio:.4%}; at most "
        f"{max_mismatched_ratio:.4%} allowed, atol {atol}, rtol {rtol}); first at {list(index)}: "
        f"{base_name} {left[index].item():.6g}, {ref_name} {right[index].item():.6g}; greatest "
        f"absolute error {finite.max().item():.6g}, relative {relative.max().item():.6g}")
