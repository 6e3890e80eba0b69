"""A kernel's Python source as an AST whose line and column numbers are those of its file.

Pure Python (no MLIR): the JIT uses the source text for cache keys before any IR is built.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tilec.errors import TilecError


@dataclass
class KernelSource:
    """One kernel function: where it is, its AST, and the names it can see."""

    fn: Callable
    filename: str
    text: str
    tree: ast.FunctionDef
    col_shift: int
    env: dict[str, Any] = field(default_factory=dict)  # the defining scope's locals

    @property
    def def_line(self) -> int:
        return self.tree.lineno

    def outer_names(self) -> dict[str, Any]:
        """Closure variables over globals over builtins: what a free name of the kernel means."""
        names: dict[str, Any] = dict(vars(builtins))
        names.update(self.fn.__globals__)
        names.update(self.env)
        code = self.fn.__code__
        for name, cell in zip(code.co_freevars, self.fn.__closure__ or (), strict=True):
            try:
                names[name] = cell.cell_contents
            except ValueError:  # a closure cell not yet assigned
                continue
        return names


def source_text(fn: Callable) -> str:
    """The function's source text (the cache key's main ingredient)."""
    try:
        return textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError) as error:
        raise TilecError(
            f"cannot read the source of {getattr(fn, '__name__', fn)!r}: tilec kernels must be "
            "defined in a .py file"
        ) from error


def parse_kernel(fn: Callable, env: dict[str, Any] | None = None) -> KernelSource:
    """Parse `fn`'s source; line numbers are made those of its file."""
    try:
        lines, first_line = inspect.getsourcelines(fn)
        filename = inspect.getsourcefile(fn) or "<unknown>"
    except (OSError, TypeError) as error:
        raise TilecError(
            f"cannot read the source of {getattr(fn, '__name__', fn)!r}: tilec kernels must be "
            "defined in a .py file"
        ) from error
    raw = "".join(lines)
    text = textwrap.dedent(raw)
    col_shift = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
    module = ast.parse(text)
    ast.increment_lineno(module, first_line - 1)
    tree = module.body[0]
    if not isinstance(tree, ast.FunctionDef):
        raise TilecError("a tilec kernel must be a plain `def` function", filename, first_line)
    return KernelSource(fn, filename, text, tree, col_shift, dict(env or {}))
