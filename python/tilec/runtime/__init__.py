"""The runtime: loads a compiled artifact and launches it, without MLIR or the compiler.

`load(artifact)` picks the loader of the artifact's target family (runtime/cpu.py,
runtime/cuda.py); `launch_grid` evaluates the grid the frontend recorded, whose dynamic entries
are Python expressions over the shape symbols and the integer scalar parameters, by name (e.g.
"((M + 127) // 128)", "((max_seqlen + 63) // 64)").
"""

from __future__ import annotations

import ast
import importlib
import operator
from collections.abc import Callable, Sequence
from typing import Any

from tilec.errors import LaunchError
from tilec.runtime.artifact import Artifact

Launcher = Callable[[list, dict], None]

_OPERATORS: dict[type, Callable[[int, int], int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
}


def load(artifact: Artifact) -> Launcher:
    """A launcher for `artifact`: `launcher(args, symbols)` runs it on checked arguments (an
    artifact of several kernels launches each in turn)."""
    if artifact.kernels:
        launchers = [load(kernel) for kernel in artifact.kernels]

        def in_turn(args: list, symbols: dict) -> None:
            for launcher in launchers:
                launcher(args, symbols)

        return in_turn
    family = artifact.target.partition(":")[0]
    try:
        loader = importlib.import_module(f"{__name__}.{family}")
    except ModuleNotFoundError as error:
        if error.name != f"{__name__}.{family}":
            raise
        raise LaunchError(f"no runtime for target '{artifact.target}' in this build") from None
    return loader.load(artifact)


def _evaluate(node: ast.AST, symbols: dict[str, int]) -> int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in symbols:
            raise LaunchError(f"grid size needs the value of '{node.id}'")
        return int(symbols[node.id])
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return _OPERATORS[type(node.op)](_evaluate(node.left, symbols),
                                         _evaluate(node.right, symbols))
    raise LaunchError(f"unsupported grid expression: {ast.dump(node)}")


def evaluate_size(size: int | str, symbols: dict[str, int]) -> int:
    """An int, or an expression over shape symbols as the frontend writes them."""
    if isinstance(size, int):
        return size
    return _evaluate(ast.parse(size, mode="eval").body, symbols)


def scalar_positions(artifact: Artifact) -> dict[str, int]:
    """Where each scalar parameter a grid expression may name sits among the arguments."""
    return {p.name: n for n, p in enumerate(artifact.params) if p.kind == "scalar"}


def checked_grid(artifact: Artifact, grid: Sequence[int], limits: Sequence[int]) -> bool:
    """Whether a grid evaluated from a call's arguments has blocks to run. A size below zero or
    past the target's `limits` (blocks along x, y, z) is a LaunchError naming the kernel and
    the grid's expressions (the CPU target would run no block, leaving the outputs unwritten;
    a GPU driver refuses with a code); a size of 0 runs nothing, as the native call does."""
    for axis, (size, limit) in enumerate(zip(grid, limits, strict=False)):
        if 0 <= size <= limit:
            continue
        why = "below 0" if size < 0 else f"past the {limit} blocks this target launches there"
        sizes = ", ".join(map(str, artifact.launch.get("grid", [1])))
        raise LaunchError(f"kernel '{artifact.name}' got a grid of {list(grid)} blocks from "
                          f"this call's arguments (grid: {sizes}): its size along "
                          f"{'xyz'[axis]}, {size}, is {why}")
    return 0 not in grid


def launch_grid(artifact: Artifact, symbols: dict[str, Any],
                args: list | None = None) -> list[int]:
    """The grid (blocks along x, y, z) of `artifact` for these symbol values and arguments."""
    names = dict(symbols)
    if args is not None:
        names.update((name, args[n]) for name, n in scalar_positions(artifact).items())
    return [evaluate_size(size, names) for size in artifact.launch.get("grid", [1])]
