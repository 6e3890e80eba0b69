"""A small writer of MLIR text in SSA form, for kernels too regular to build op by op.

Index constants are hoisted to the function entry and shared; every other value gets a fresh,
readable name. `asm` wraps `llvm.inline_asm`, used for the PTX that upstream ops cannot express.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class KernelInterface:
    """The gpu.func's name and parameters, and prologue lines that bind the names a generator
    reads (pointers and i32 M, N, K) from those parameters; lets a pass fit the runtime's ABI."""

    name: str
    params: list[tuple[str, str]]
    prologue: list[str] = field(default_factory=list)

    def signature(self) -> str:
        return ", ".join(f"{value}: {type_}" for value, type_ in self.params)


class Emitter:
    """Collects the lines of one function body."""

    def __init__(self, indent: int = 3) -> None:
        self.lines: list[str] = []
        self.head: list[str] = []
        self.counter = 0
        self.depth = indent
        self.constants: dict[tuple[int, str], str] = {}

    def fresh(self, hint: str = "v") -> str:
        self.counter += 1
        return f"%{hint}{self.counter}"

    def line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def value(self, rhs: str, hint: str = "v") -> str:
        """Emit `%new = rhs` and return `%new`."""
        name = self.fresh(hint)
        self.line(f"{name} = {rhs}")
        return name

    def open(self, text: str) -> None:
        self.line(text)
        self.depth += 1

    def close(self, text: str = "}") -> None:
        self.depth -= 1
        self.line(text)

    def const(self, value: int, type_: str = "index") -> str:
        key = (value, type_)
        if key not in self.constants:
            name = f"%c{value}_{type_}".replace("-", "m")
            self.constants[key] = name
            self.head.append("  " * 3 + f"{name} = arith.constant {value} : {type_}")
        return self.constants[key]

    def arith(self, op: str, lhs: str, rhs: str, type_: str = "index", hint: str = "v") -> str:
        return self.value(f"arith.{op} {lhs}, {rhs} : {type_}", hint)

    def cmp(self, predicate: str, lhs: str, rhs: str, type_: str = "index") -> str:
        return self.value(f"arith.cmpi {predicate}, {lhs}, {rhs} : {type_}", "p")

    def add(self, lhs: str, rhs: str | int, hint: str = "v") -> str:
        if isinstance(rhs, int):
            if rhs == 0:
                return lhs
            rhs = self.const(rhs)
        return self.arith("addi", lhs, rhs, hint=hint)

    def mul(self, lhs: str, rhs: str | int, hint: str = "v") -> str:
        if isinstance(rhs, int):
            if rhs == 1:
                return lhs
            rhs = self.const(rhs)
        return self.arith("muli", lhs, rhs, hint=hint)

    def cast(self, value: str, src: str, dst: str) -> str:
        op = "arith.index_cast" if "index" in (src, dst) else "arith.trunci"
        return self.value(f"{op} {value} : {src} to {dst}")

    def asm(
        self,
        text: str,
        constraints: str,
        operands: Sequence[tuple[str, str]] = (),
        result: str | None = None,
        hint: str = "r",
    ) -> str | None:
        """Inline PTX with side effects (keeps program order); operands are (value, type)."""
        names = ", ".join(value for value, _ in operands)
        types = ", ".join(type_ for _, type_ in operands)
        escaped = text.replace("\\", "\\\\").replace('"', '\\"')
        rhs = (
            f'llvm.inline_asm has_side_effects asm_dialect = att "{escaped}", "{constraints}" '
            f"{names} : ({types}) -> {result or '()'}"
        )
        if result is None:
            self.line(rhs)
            return None
        return self.value(rhs, hint)

    def linear_block_id(self) -> str:
        """block_id.y * grid_dim.x + block_id.x: works for 1-d and 2-d grids alike."""
        x = self.value("gpu.block_id x", "bx")
        y = self.value("gpu.block_id y", "by")
        return self.arith(
            "addi", self.arith("muli", y, self.value("gpu.grid_dim x")), x, hint="bid"
        )

    def body(self, prologue: Sequence[str] = ()) -> str:
        indent = "  " * 3
        return "\n".join([indent + line for line in prologue] + self.head + self.lines)
