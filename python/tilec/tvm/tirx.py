"""`tvm.tirx` (`tvm.tir`) as tilec has it: TVM's scalar-expression calls as the `T` functions
they are, so kernel code written with them builds the same tile IR.

`const(value, dtype)`, `IntImm(dtype, value)` and `FloatImm(dtype, value)` are typed constants
(`T.cast`), `Cast(dtype, value)` a conversion, `reinterpret` a bit cast, `Select(cond, a, b)`
`T.if_then_else`, `Min` / `Max` `T.min` / `T.max`; the math functions are `T`'s. Like every `T`
function they mean something only inside a kernel. `PrimExpr` is there for annotations. Other
names are a TilecError naming them.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import tilec.language as T
from tilec.errors import TilecError

# TVM name -> the T functions that are it, in order of preference: (T name, the T parameter
# names in TVM's argument order, or None when the T function takes TVM's arguments as it is)
_FORWARDS: dict[str, list[tuple[str, tuple[str, ...] | None]]] = {
    "const": [("cast", ("value", "dtype"))],
    "IntImm": [("cast", ("dtype", "value"))],
    "FloatImm": [("cast", ("dtype", "value"))],
    "Cast": [("Cast", None), ("cast", ("dtype", "value"))],
    "reinterpret": [("reinterpret", None)],
    "Select": [("if_then_else", None)],
    "if_then_else": [("if_then_else", None)],
    "Min": [("min", None)],
    "Max": [("max", None)],
    **{name: [(name, None)] for name in (
        "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "sigmoid", "floor", "ceil", "sin",
        "cos", "erf", "abs", "pow", "max_value", "min_value", "infinity", "floordiv",
        "floormod")},
}


class PrimExpr:
    """TVM's scalar expression type; tilec's kernel values need no class, so this only
    annotates (`def f(x: tirx.PrimExpr)`)."""


def _reordered(tvm_name: str, marker: Callable, order: tuple[str, ...]) -> Callable:
    """`marker` taking its arguments in TVM's order: a signature the frontend binds calls
    against (parameter names stay the marker's, so its handler reads them)."""
    parameters = inspect.signature(marker).parameters
    signature = inspect.Signature([parameters[name].replace(
        kind=inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in order])

    @functools.wraps(marker)
    def forwarded(*args: Any, **kwargs: Any) -> Any:
        return marker(**signature.bind(*args, **kwargs).arguments)

    forwarded.__signature__ = signature  # type: ignore[attr-defined]
    forwarded.__name__ = tvm_name
    return forwarded


def _unsupported(tvm_name: str) -> Callable:
    def unsupported(*args: Any, **kwargs: Any) -> Any:
        raise TilecError(f"tvm.tirx.{tvm_name} is not supported by tilec yet")

    unsupported.__name__ = tvm_name
    return unsupported


def _forward(tvm_name: str) -> Callable:
    for t_name, order in _FORWARDS[tvm_name]:
        marker = getattr(T, t_name, None)
        if marker is None:
            continue
        return marker if order is None else _reordered(tvm_name, marker, order)
    return _unsupported(tvm_name)


globals().update({name: _forward(name) for name in _FORWARDS})


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    from tilec.tvm import NotInTilec

    raise NotInTilec(f"tvm.tirx.{name} is not part of tilec; tilec.tvm.tirx has "
                     f"{', '.join(sorted([*_FORWARDS, 'PrimExpr']))}")


__all__ = ["PrimExpr", *_FORWARDS]
