"""Pipelines as data: each target is an ordered list of named stages.

A stage takes the previous stage's product (an `ir.Module`, changed in place, or text/bytes
for the stages past MLIR) and returns its own. The driver keeps every stage's text, so
`kernel.asm[stage]` and `tilec --emit=STAGE` show any point of the way.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mlir import ir
from mlir.passmanager import PassManager

from tilec.errors import CompileError


@dataclass
class CompileOptions:
    """What a stage may consult: the target string ("cpu", "cuda:sm_90a"...) and knobs.

    `fast_math` runs apply-fast-math before a target's own passes; `disable_tma` keeps the CUDA
    target's pipelined loops off TMA (both come from the user's pass configs, tilec.transform).
    """

    target: str
    print_ir_after_all: bool = False
    fast_math: bool = False
    disable_tma: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def arch(self) -> str:
        """The part after the colon: "sm_90a" for "cuda:sm_90a", "" for "cpu"."""
        return self.target.partition(":")[2]


@dataclass(frozen=True)
class Stage:
    """One named step; `run(product, options)` returns the next product (None: module changed)."""

    name: str
    run: Callable[[Any, CompileOptions], Any]
    doc: str = ""


def mlir_passes(name: str, pipeline: str, doc: str = "") -> Stage:
    """A stage that runs an upstream textual pass pipeline on the module."""

    def run(module: ir.Module, options: CompileOptions) -> None:
        run_pass_pipeline(module, pipeline, options)

    return Stage(name, run, doc or pipeline)


def tile_passes(name: str, passes: Sequence[str], doc: str = "") -> Stage:
    """A stage that runs tilec passes (by kebab-case name) in order."""
    from tilec.compiler.passes import get_pass

    def run(module: ir.Module, options: CompileOptions) -> None:
        for pass_name in passes:
            get_pass(pass_name)().run(module)
            verify(module, f"after {pass_name}")
            if options.print_ir_after_all:
                print(f"// -----// IR Dump After {pass_name} //----- //\n{module}", file=sys.stderr)

    return Stage(name, run, doc or ", ".join(passes))


def verify(module: ir.Module, where: str) -> None:
    """Verify before going on: the wheel is an assertions build, so bad IR must stop here."""
    try:
        module.operation.verify()
    except ir.MLIRError as error:
        raise CompileError(f"invalid IR {where}: {error}") from None


def run_pass_pipeline(module: ir.Module, pipeline: str, options: CompileOptions) -> None:
    pm = PassManager.parse(f"builtin.module({pipeline})", context=module.context)
    if options.print_ir_after_all:
        pm.enable_ir_printing()
    try:
        pm.run(module.operation)
    except ir.MLIRError as error:
        raise CompileError(f"pass pipeline failed: {error}") from None


def product_text(product: Any) -> str:
    if isinstance(product, ir.Module):
        return str(product)
    if isinstance(product, bytes):
        return f"<{len(product)} bytes>"
    return str(product)


def run_stages(
    stages: Sequence[Stage],
    module: ir.Module,
    options: CompileOptions,
    stop_after: str | None = None,
) -> tuple[Any, dict[str, str]]:
    """Run `stages` in order; returns the last product and the text of every stage."""
    names = [stage.name for stage in stages]
    if stop_after is not None and stop_after not in names:
        raise CompileError(f"unknown stage '{stop_after}' for {options.target}; stages: {names}")
    product: Any = module
    texts: dict[str, str] = {}
    for stage in stages:
        verify_first = isinstance(product, ir.Module)
        if verify_first:
            verify(product, f"before stage '{stage.name}'")
        result = stage.run(product, options)
        product = product if result is None else result
        texts[stage.name] = product_text(product)
        if stage.name == stop_after:
            break
    return product, texts
