"""The lowering trace: every stage and pass of a compile, the IR after each, what each changed.

A `TraceRecorder` is the compile's `PassObserver` (tilec.compiler.pipeline): it keeps the text
of the module after every pass and every stage's product, with each op's source location, the
seconds it took and the `tile.*` attributes (layouts, schedule decisions) found on its ops.
`Trace.html()` renders them as one self-contained page (tilec.tools.trace_page); `tilec trace
FILE.py` and `kernel.trace()` make it. `ir_diff` is the line diff the page and `tilec diff`
show, with locations left out so that only what an op does counts.
"""

from __future__ import annotations

import difflib
import linecache
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LOC_ALIAS = re.compile(r"^#(loc\d*) = loc\((.*)\)$")
FILE_LINE = re.compile(r'"([^"]+)":(\d+):\d+')
ALIAS_USE = re.compile(r"#(loc\d*)")
ATTRIBUTE = re.compile(r"\b(tile\.[A-Za-z_][\w.]*) = ")
VALUE_NAME = re.compile(r"^\s*(%[\w#:]+)(?:, %[\w#:]+)* = ")
OP_NAME = re.compile(r"^\s*(?:%[\w#:]+(?:, %[\w#:]+)* = )?\"?([A-Za-z_][\w]*\.[\w.]+)")
ASSIGNED_NAME = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]+)?=")
SSA_NAME = re.compile(r"%[\w$.#-]+|\^bb\d+")
MEMREF = re.compile(r"memref<[^>]*(?:<[^>]*>[^>]*)*>")

Location = tuple[str, int]  # (file, line)


def _closing(text: str, start: int) -> int:
    """The index after the bracket or quote that closes the one at `start` (quotes inside
    brackets respected)."""
    if text[start] == '"':
        position = start + 1
        while position < len(text) and text[position] != '"':
            position += 2 if text[position] == "\\" else 1
        return min(position + 1, len(text))
    depth, quoted, position = 0, False, start
    while position < len(text):
        char = text[position]
        if quoted:
            if char == "\\":
                position += 1
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "([{<":
            depth += 1
        elif char in ")]}>":
            depth -= 1
            if depth == 0:
                return position + 1
        position += 1
    return len(text)


def _strip_locations(line: str) -> tuple[str, list[str]]:
    """The line without its ` loc(...)` parts, and those parts' contents in order."""
    kept: list[str] = []
    found: list[str] = []
    position = 0
    while True:
        start = line.find("loc(", position)
        if start == -1 or (start > 0 and (line[start - 1].isalnum() or line[start - 1] in "_#")):
            if start == -1:
                kept.append(line[position:])
                break
            kept.append(line[position:start + 4])
            position = start + 4
            continue
        end = _closing(line, start + 3)
        found.append(line[start + 4:end - 1])
        kept.append(line[position:start].rstrip(" "))
        position = end
    return "".join(kept).rstrip(), found


@dataclass
class IRText:
    """An IR text as the page shows it: lines without locations, each line's source line."""

    lines: list[str]
    locations: list[Location | None]

    @classmethod
    def parse(cls, text: str) -> IRText:
        """Splits MLIR's debug-info form (`loc(#loc3)` and `#loc3 = loc(...)` aliases)."""
        aliases: dict[str, str] = {}
        body: list[str] = []
        for line in text.splitlines():
            match = LOC_ALIAS.match(line)
            if match:
                aliases[match[1]] = match[2]
            else:
                body.append(line)

        def resolve(content: str, depth: int = 0) -> Location | None:
            found = FILE_LINE.search(content)
            if found:
                return found[1], int(found[2])
            alias = ALIAS_USE.search(content)
            if alias and alias[1] in aliases and depth < 8:
                return resolve(aliases[alias[1]], depth + 1)
            return None

        lines: list[str] = []
        locations: list[Location | None] = []
        for line in body:
            stripped, parts = _strip_locations(line)
            lines.append(stripped)
            # an op's own location is the last one on its line (block arguments come first)
            locations.append(resolve(parts[-1]) if parts else None)
        return cls(lines, locations)

    @classmethod
    def plain(cls, text: str) -> IRText:
        lines = text.splitlines()
        return cls(lines, [None] * len(lines))


def _without_names(line: str) -> str:
    """What a line says besides its value names and indentation."""
    return SSA_NAME.sub("%", line).strip()


def ir_diff(before: list[str], after: list[str]) -> list[tuple[str, int, int, int, int]]:
    """The changes between two line lists as (tag, i1, i2, j1, j2): difflib's replace, delete
    and insert, matched on the lines with SSA names left out (so that a pass renumbering the
    values after the op it adds does not misalign the rest, nor one flattening regions
    re-indent it), and "rename" for a matched run whose lines differ in value names or
    indentation only."""
    matcher = difflib.SequenceMatcher(None, [_without_names(line) for line in before],
                                      [_without_names(line) for line in after], autojunk=False)
    changes: list[tuple[str, int, int, int, int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            changes.append((tag, i1, i2, j1, j2))
            continue
        for offset in range(i2 - i1):
            i, j = i1 + offset, j1 + offset
            if before[i] == after[j]:
                continue
            last = changes[-1] if changes else None
            if last and last[0] == "rename" and last[2] == i and last[4] == j:
                changes[-1] = ("rename", last[1], i + 1, last[3], j + 1)
            else:
                changes.append(("rename", i, i + 1, j, j + 1))
    return changes


def unified_ir_diff(before: str, after: str, before_name: str, after_name: str,
                    context: int = 3) -> str:
    """The unified diff of two IR texts, locations left out (what `tilec diff` prints)."""
    a = IRText.parse(before).lines
    b = IRText.parse(after).lines
    return "".join(line + "\n" for line in difflib.unified_diff(
        a, b, before_name, after_name, n=context, lineterm=""))


def _attribute_value(line: str, start: int) -> str:
    """The attribute value starting at `start`, up to the `,` or `}` that ends it."""
    position = start
    while position < len(line):
        char = line[position]
        if char in "([{<\"":
            position = _closing(line, position)
            continue
        if char in ",}" or line.startswith(" : ", position):
            break
        position += 1
    return line[start:position].strip()


@dataclass
class Decision:
    """The `tile.*` attributes on one op: a layout, a swizzle, a pipeline or warp plan."""

    op: str
    value: str  # the SSA result it defines ("%0"), or ""
    type: str  # the buffer's memref type for an allocation, else ""
    attributes: dict[str, str]
    location: Location | None
    name: str = ""  # the Python name the source line assigns (A_shared = T.alloc_shared(...))


def decisions(text: IRText) -> list[Decision]:
    """Every op of the text that carries `tile.*` attributes with values, and every buffer."""
    found: list[Decision] = []
    for line, location in zip(text.lines, text.locations, strict=True):
        is_alloc = "tile.alloc" in line or "memref.alloc" in line
        if "tile." not in line:
            continue
        attributes = {m[1]: _attribute_value(line, m.end()) for m in ATTRIBUTE.finditer(line)}
        op = OP_NAME.match(line)
        if not attributes and not is_alloc:
            continue
        value = VALUE_NAME.match(line)
        memref = MEMREF.search(line) if is_alloc else None
        assigned = ASSIGNED_NAME.match(linecache.getline(*location)) if location else None
        found.append(Decision(op[1] if op else "", value[1] if value else "",
                              memref[0] if memref else "", attributes, location,
                              assigned[1] if assigned and is_alloc else ""))
    return found


@dataclass
class Step:
    """One pass (or a stage with no passes of its own) and the IR after it."""

    stage: str
    name: str
    seconds: float
    text: IRText
    decisions: list[Decision] = field(default_factory=list)


@dataclass
class Trace:
    """A compile of one kernel, pass by pass."""

    kernel: str
    target: str
    steps: list[Step] = field(default_factory=list)
    stage_seconds: dict[str, float] = field(default_factory=dict)
    location: Location | None = None  # the kernel's definition

    @property
    def stages(self) -> list[str]:
        return list(self.stage_seconds)

    def step(self, name: str) -> Step:
        """The first step called `name` (a pass name, or a stage's for a stage without passes)."""
        for step in self.steps:
            if step.name == name:
                return step
        raise KeyError(f"no pass {name!r} in the trace; passes: "
                       f"{', '.join(s.name for s in self.steps)}")

    def changes(self, name: str) -> list[tuple[str, list[str], list[str]]]:
        """What pass `name` changed: (tag, old lines, new lines) per change (ir_diff's tags)."""
        index = self.steps.index(self.step(name))
        before = self.steps[index - 1].text.lines if index else []
        after = self.steps[index].text.lines
        return [(tag, before[i1:i2], after[j1:j2])
                for tag, i1, i2, j1, j2 in ir_diff(before, after)]

    def html(self) -> str:
        """The self-contained page (no network: CSS, JS and data inline)."""
        from tilec.tools.trace_page import render

        return render([self])

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(self.html())
        return path


class TraceRecorder:
    """The compile's observer: turns every pass and stage into a Step of `trace`."""

    def __init__(self, trace: Trace):
        self.trace = trace
        self.pending: list[Step] = []
        self.part = 0  # a function with several T.Kernel blocks compiles one module per kernel

    def _stage_name(self, name: str) -> str:
        return f"{name} #{self.part}" if self.part else name

    def after_pass(self, name: str, module: Any, seconds: float) -> None:
        text = IRText.parse(module.operation.get_asm(enable_debug_info=True))
        self.pending.append(Step("", name, seconds, text, decisions(text)))

    def after_stage(self, name: str, product: Any, seconds: float) -> None:
        from mlir import ir

        if name == "tile" and self.trace.stage_seconds:
            self.part += 1
        stage = self._stage_name(name)
        if isinstance(product, ir.Module):
            text = IRText.parse(product.operation.get_asm(enable_debug_info=True))
        elif isinstance(product, bytes):
            text = IRText.plain(f"<{len(product)} bytes of {name}>")
        else:
            text = IRText.plain(str(product))
        passes_seconds = sum(step.seconds for step in self.pending)
        for step in self.pending:
            step.stage = stage
        self.trace.steps.extend(self.pending)
        if not self.pending or self.pending[-1].text.lines != text.lines:
            # the stage's own work besides its passes (or a stage that is not a pass pipeline)
            self.trace.steps.append(Step(stage, stage, max(seconds - passes_seconds, 0.0), text,
                                         decisions(text)))
        self.trace.stage_seconds[stage] = seconds
        self.pending = []


def trace_specialization(spec: Any) -> Trace:
    """Builds and compiles one specialization (tilec.jit.Specialization) with a recorder."""
    from mlir import ir

    from tilec.compiler.driver import compile_module
    from tilec.compiler.passes._builders import entry_function
    from tilec.transform import codegen_settings

    start = time.perf_counter()
    result = spec.build()
    frontend_seconds = time.perf_counter() - start
    with result.module.context:
        name = ir.StringAttr(entry_function(result.module).attributes["sym_name"]).value
    trace = Trace(kernel=name, target=spec.target, location=tuple(spec.location))
    recorder = TraceRecorder(trace)
    settings = codegen_settings(spec.pass_configs)
    compile_module(result.module, result.params, spec.target, launch=result.launch,
                   fast_math=settings.fast_math, disable_tma=settings.disable_tma,
                   observer=recorder)
    if trace.steps and trace.steps[0].name == "tile":
        trace.steps[0].seconds = frontend_seconds  # the frontend built what "tile" shows
    return trace
