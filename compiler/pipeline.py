"""Pipelines as data: each target is an ordered list of named stages.

A stage takes the previous stage's product (an `ir.Module`, changed in place, or text/bytes
for the stages past MLIR) and returns its own. The driver keeps every stage's text, so
`kernel.asm[stage]` and `tilec --emit=STAGE` show any point of the way.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mlir import ir
from mlir.passmanager import PassManager

from tilec.compiler.passes._ir_walk import LOCATION, op_error, walk
from tilec.errors import CompileError


class PassObserver(Protocol):
    """Sees the module after every pass and every stage's product (`tilec trace` records them).

    `after_pass` gets the module itself (read it, do not change it) and the pass's seconds;
    `after_stage` the stage's product (a module, text or bytes) and the stage's seconds.
    """

    def after_pass(self, name: str, module: ir.Module, seconds: float) -> None: ...

    def after_stage(self, name: str, product: Any, seconds: float) -> None: ...


@dataclass
class CompileOptions:
    """What a stage may consult: the target string ("cpu", "cuda:sm_90a"...) and knobs.

    `fast_math` runs apply-fast-math before a target's own passes; `disable_tma` keeps the CUDA
    target's pipelined loops off TMA (both come from the user's pass configs, tilec.transform).
    With `print_ir_after_all` or an `observer`, upstream pipelines run one pass at a time so
    that both see the module after each of them.
    """

    target: str
    print_ir_after_all: bool = False
    observer: PassObserver | None = None
    fast_math: bool = False
    bounds_check: bool = False  # insert-bounds-checks first (the checked mode)
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
            start = time.perf_counter()
            get_pass(pass_name)().run(module)
            verify(module, f"after {pass_name}")
            after_pass(options, pass_name, module, time.perf_counter() - start)

    return Stage(name, run, doc or ", ".join(passes))


def verify(module: ir.Module, where: str) -> None:
    """Verify before going on: the wheel is an assertions build, so bad IR must stop here."""
    try:
        module.operation.verify()
    except ir.MLIRError as error:
        raise located_error(f"invalid IR {where}", error) from None


_MESSAGE_LINES = 40  # of an MLIR error's text, whose notes may print a whole module


def _shortened(text: str) -> str:
    """The MLIR error's text, cut after its first lines: a note's 'see current operation' can
    print the whole gpu.module (1300 lines for one kernel), burying the diagnostic."""
    lines = text.splitlines()
    if len(lines) <= _MESSAGE_LINES:
        return text
    return "\n".join([*lines[:_MESSAGE_LINES], f"... ({len(lines) - _MESSAGE_LINES} more lines of "
                      "the operation; `tilec FILE.py --print-ir-after-all` prints every stage)"])


def located_error(what: str, error: ir.MLIRError) -> CompileError:
    """A CompileError at the user's line that the first diagnostic with one names (else at
    no line), so a failure deep in the pipeline still points at the statement it came from."""
    text = _shortened(str(error))
    for diagnostic in getattr(error, "error_diagnostics", []):
        found = LOCATION.search(str(diagnostic.location))
        if found is not None:
            return CompileError(f"{what}: {text}", found.group(1), int(found.group(2)))
    return CompileError(f"{what}: {text}")


def after_pass(options: CompileOptions, name: str, module: ir.Module, seconds: float) -> None:
    """What follows every pass, tilec's or upstream's: the IR dump and the observer."""
    if options.print_ir_after_all:
        print(f"// -----// IR Dump After {name} //----- //\n{module}", file=sys.stderr)
    if options.observer is not None:
        options.observer.after_pass(name, module, seconds)


def _split_top_level(text: str) -> list[str]:
    """`a{x=1,2},b(c,d)` -> ["a{x=1,2}", "b(c,d)"]: commas outside brackets and braces."""
    parts, depth, start = [], 0, 0
    for position, char in enumerate(text):
        if char in "({":
            depth += 1
        elif char in ")}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:position].strip())
            start = position + 1
    parts.append(text[start:].strip())
    return [part for part in parts if part]


def _single_passes(element: str) -> Iterator[tuple[str, str]]:
    """(name, pipeline) of each pass of an expanded pipeline element, nested ones in their
    anchor: `gpu.module(a,b{o=1})` -> ("gpu.module(a)", "gpu.module(a)"), ("gpu.module(b)",
    "gpu.module(b{o=1})")."""
    brace, paren = element.find("{"), element.find("(")
    if paren != -1 and (brace == -1 or paren < brace):
        anchor = element[:paren]
        for name, inner in (p for part in _split_top_level(element[paren + 1:-1])
                            for p in _single_passes(part)):
            yield f"{anchor}({name})", f"{anchor}({inner})"
        return
    yield (element[:brace] if brace != -1 else element), element


_TO_LLVM_PASS = re.compile(r"to-(llvm|nvvm|rocdl)\b")


def check_llvm_memory_spaces(module: ir.Module, pipeline: str) -> None:
    """Before a pipeline that lowers memrefs to LLVM: no memref may still be in one of tile's
    memory spaces ("fragment", "shared", ...: string attributes). The upstream type converter
    reports them with an error it does not fail on, and the bindings then abort the process."""
    if not _TO_LLVM_PASS.search(pipeline):
        return
    for op in walk(module.operation):
        types = [result.type for result in op.results] + [
            argument.type for region in op.regions for block in region.blocks
            for argument in block.arguments]
        for value_type in types:
            if not isinstance(value_type, ir.MemRefType):
                continue
            space = ir.MemRefType(value_type).memory_space
            if isinstance(space, ir.StringAttr):
                raise op_error(op, f"{op.name} has a memref in tile's memory space "
                                   f"{space} ({value_type}) where the pipeline lowers memrefs "
                                   "to LLVM: tile's lowering passes place buffers first")


# dialects whose ops translate to LLVM IR (the module op itself aside)
TRANSLATED_DIALECTS = ("llvm.", "nvvm.", "rocdl.")


def check_translatable(module: ir.Module) -> None:
    """Before translating to LLVM IR: every op is one the translation takes. An op a
    conversion left behind (an unrealized cast of a type the LLVM lowering has no rule for, a
    gpu op the target cannot lower) fails the translation, and the bindings then crash the
    process instead of raising; this names the op and its source line instead."""
    for op in walk(module.operation):
        if op.name == "builtin.module" or op.name.startswith(TRANSLATED_DIALECTS):
            continue
        raise op_error(op, f"{op.name} is left where the kernel is translated to LLVM IR: no "
                           "conversion lowers it for this target")


def run_pass_pipeline(module: ir.Module, pipeline: str, options: CompileOptions) -> None:
    check_llvm_memory_spaces(module, pipeline)
    pm = PassManager.parse(f"builtin.module({pipeline})", context=module.context)
    try:
        if not (options.print_ir_after_all or options.observer is not None):
            pm.run(module.operation)
            return
        expanded = str(pm)  # named pipelines expanded, every option spelled out
        inner = expanded[expanded.index("(") + 1:-1]
        for part in _split_top_level(inner):
            for name, single in _single_passes(part):
                start = time.perf_counter()
                PassManager.parse(f"builtin.module({single})", context=module.context).run(
                    module.operation)
                after_pass(options, name, module, time.perf_counter() - start)
    except ir.MLIRError as error:
        raise located_error("pass pipeline failed", error) from None


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
        start = time.perf_counter()
        result = stage.run(product, options)
        product = product if result is None else result
        texts[stage.name] = product_text(product)
        if options.observer is not None:
            options.observer.after_stage(stage.name, product, time.perf_counter() - start)
        if stage.name == stop_after:
            break
    return product, texts
