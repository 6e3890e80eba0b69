"""tilec-opt: mlir-opt with the tile dialect and every tilec pass, for lit tests and debugging.

    tilec-opt [FILE|-] [--PASS ...] [--pass-pipeline=PIPELINE] [--split-input-file]
              [--verify-diagnostics] [-o OUT] [--print-ir-after-all] [--mlir-print-debuginfo]
              [--run-target=TARGET [--stop-after=STAGE]]

`--NAME` runs the tilec pass NAME, or else the upstream pass NAME (`--canonicalize`); passes,
`--pass-pipeline` and `--run-target=TARGET` (a target's stages, `--stop-after=STAGE`) run in
the order given. The IR is verified after parsing and after each tilec
pass, so bad IR is reported, never an abort. Exit status: 0 on success, 1 on any error (or on
unmet `expected-error` lines with --verify-diagnostics), 2 on bad usage.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from mlir import ir

from tilec.compiler.pipeline import CompileOptions
from tilec.errors import CompileError

SPLIT_MARKER = re.compile(r"^// -----[ \t]*$", re.MULTILINE)
EXPECTATION = re.compile(
    r"//\s*expected-(error|warning|remark|note)\s*(@[+-]?\d+|@above|@below|@unknown)?\s*\{\{(.*?)\}\}"
)
SEVERITY_NAMES = {"ERROR": "error", "WARNING": "warning", "REMARK": "remark", "NOTE": "note"}


@dataclass
class Diagnostic:
    severity: str  # "error" | "warning" | "remark" | "note"
    line: int | None  # line in the input file; None when the location is elsewhere
    message: str
    where: str  # the location as printed


@dataclass
class Expectation:
    severity: str
    line: int | None
    message: str
    written_at: int
    met: bool = False


@dataclass
class Action:
    """One step of the pass list: a tilec pass, an upstream pipeline or a target's stages."""

    tilec_pass: str | None = None
    pipeline: str | None = None
    target: str | None = None


def _diagnostics_of(error: ir.MLIRError, source_name: str) -> list[Diagnostic]:
    found = []
    for info in error.error_diagnostics:
        for item in [info, *info.notes]:
            location = item.location
            line = None
            if location.is_a_file() and location.filename == source_name:
                line = location.start_line
            severity = SEVERITY_NAMES.get(str(item.severity).rpartition(".")[2], "error")
            found.append(Diagnostic(severity, line, item.message, str(location)))
    return found


def _diagnostic_of_compile_error(error: CompileError, source_name: str) -> Diagnostic:
    line = error.lineno if error.filename in (None, source_name) else None
    return Diagnostic("error", line, error.message, f"{error.filename}:{error.lineno}")


def _expectations(text: str, first_line: int) -> list[Expectation]:
    found = []
    for number, line in enumerate(text.splitlines(), start=first_line):
        for match in EXPECTATION.finditer(line):
            severity, anchor, message = match.groups()
            target: int | None = number
            if anchor == "@unknown":
                target = None
            elif anchor == "@above":
                target = number - 1
            elif anchor == "@below":
                target = number + 1
            elif anchor:
                target = number + int(anchor[1:])
            found.append(Expectation(severity, target, message, number))
    return found


def _run_actions(
    module: ir.Module, actions: Sequence[Action], args: argparse.Namespace
) -> str | None:
    """Runs the actions in order; returns the text of a target stage past MLIR, if one ran."""
    from tilec.compiler.passes import get_pass
    from tilec.compiler.pipeline import verify

    print_ir_after_all = args.print_ir_after_all
    options = CompileOptions(target="tilec-opt", print_ir_after_all=print_ir_after_all)
    for action in actions:
        if action.target is not None:
            text = _run_target(module, action.target, args.stop_after, print_ir_after_all)
            if text is not None:
                return text
            continue
        if action.tilec_pass is not None:
            get_pass(action.tilec_pass)().run(module)
            verify(module, f"after {action.tilec_pass}")
            if print_ir_after_all:
                print(f"// -----// IR Dump After {action.tilec_pass} //----- //", file=sys.stderr)
                print(module, file=sys.stderr)
        else:
            _run_pipeline(module, action.pipeline or "", options)


def _run_target(
    module: ir.Module, target: str, stop_after: str | None, print_ir_after_all: bool
) -> str | None:
    """Runs a target's stages (as the driver does, without "tile"); text once past MLIR."""
    from tilec.compiler.pipeline import product_text, run_stages
    from tilec.compiler.targets import get_target

    options = CompileOptions(target=target, print_ir_after_all=print_ir_after_all)
    stages = get_target(target).stages(options)
    product, _ = run_stages(stages, module, options, stop_after=stop_after)
    return None if isinstance(product, ir.Module) else product_text(product)


def _run_pipeline(module: ir.Module, pipeline: str, options: CompileOptions) -> None:
    """Runs an upstream pipeline; MLIR's own diagnostics (with locations) propagate."""
    from mlir.passmanager import PassManager

    from tilec.compiler.pipeline import check_llvm_memory_spaces

    check_llvm_memory_spaces(module, pipeline)
    manager = PassManager.parse(
        f"builtin.module({_strip_module(pipeline)})", context=module.context
    )
    if options.print_ir_after_all:
        manager.enable_ir_printing()
    manager.run(module.operation)


def _process_chunk(
    text: str, first_line: int, source_name: str, args: argparse.Namespace, actions: list[Action]
) -> tuple[str | None, list[Diagnostic]]:
    """Parses, verifies and transforms one chunk; returns its output text and its diagnostics."""
    padded = "\n" * (first_line - 1) + text  # diagnostics then carry the file's line numbers
    with ir.Location.unknown():
        try:
            module = ir.Module.parse(padded)
            module.operation.verify()
            text_output = _run_actions(module, actions, args)
            if text_output is None:
                module.operation.verify()
        except ir.MLIRError as error:
            return None, _diagnostics_of(error, source_name)
        except CompileError as error:
            return None, [_diagnostic_of_compile_error(error, source_name)]
    if text_output is not None:
        return text_output, []
    if args.mlir_print_debuginfo:
        return module.operation.get_asm(enable_debug_info=True), []
    return str(module), []


def _check_expectations(
    expectations: list[Expectation], diagnostics: list[Diagnostic], input_name: str
) -> int:
    """Matches diagnostics to `expected-*` lines the way mlir-opt does; returns the failures."""
    failures = 0
    for diagnostic in diagnostics:
        for expected in expectations:
            if (
                not expected.met
                and expected.severity == diagnostic.severity
                and expected.line == diagnostic.line
                and expected.message in diagnostic.message
            ):
                expected.met = True
                break
        else:
            if diagnostic.severity == "note":
                continue  # notes need no expectation, as in mlir-opt
            failures += 1
            print(
                f"{input_name}:{diagnostic.line}: error: unexpected {diagnostic.severity}: "
                f"{diagnostic.message}",
                file=sys.stderr,
            )
    for expected in expectations:
        if not expected.met:
            failures += 1
            print(
                f"{input_name}:{expected.written_at}: error: expected {expected.severity} "
                f'"{expected.message}" was not produced',
                file=sys.stderr,
            )
    return failures


def _parse_arguments(argv: Sequence[str]) -> tuple[argparse.Namespace, list[Action]]:
    parser = argparse.ArgumentParser(
        prog="tilec-opt", description="mlir-opt with the tile dialect and tilec's passes"
    )
    parser.add_argument("input", nargs="?", default="-", help="input .mlir file (- for stdin)")
    parser.add_argument("-o", dest="output", default="-", help="output file (- for stdout)")
    parser.add_argument("--pass-pipeline", action="append", default=[], help="upstream pipeline")
    parser.add_argument("--split-input-file", action="store_true")
    parser.add_argument("--verify-diagnostics", action="store_true")
    parser.add_argument("--print-ir-after-all", action="store_true")
    parser.add_argument("--mlir-print-debuginfo", action="store_true")
    parser.add_argument(
        "--run-target", action="append", default=[], help="run a target's stages (cpu, cuda:...)"
    )
    parser.add_argument("--stop-after", help="with --run-target: the last stage to run")
    parser.add_argument("--list-passes", action="store_true", help="list tilec's passes")
    args, rest = parser.parse_known_args(argv)

    from tilec.compiler.passes import all_passes

    tilec_passes = all_passes()
    actions: list[Action] = []
    # keep the command line's order between passes and pipelines
    pipeline_index = target_index = 0
    for flag in argv:
        if flag.startswith("--pass-pipeline"):
            actions.append(Action(pipeline=args.pass_pipeline[pipeline_index]))
            pipeline_index += 1
        elif flag.startswith("--run-target"):
            actions.append(Action(target=args.run_target[target_index]))
            target_index += 1
        elif flag in rest:
            if not flag.startswith("--"):
                parser.error(f"unexpected argument '{flag}'")
            name = flag[2:]
            if name in tilec_passes:
                actions.append(Action(tilec_pass=name))
            else:
                actions.append(Action(pipeline=name))
    return args, actions


def _check_pipelines(actions: Sequence[Action], context: ir.Context) -> str | None:
    """Parses every upstream pipeline once, before any input: returns the first error."""
    from mlir.passmanager import PassManager

    for action in actions:
        if action.pipeline is None:
            continue
        try:
            PassManager.parse(f"builtin.module({_strip_module(action.pipeline)})", context=context)
        except ValueError as error:
            return f"unknown pass or bad pipeline '{action.pipeline}': {error}"
    return None


def _check_targets(actions: Sequence[Action], stop_after: str | None) -> str | None:
    """Every --run-target's name and --stop-after's stage, before any input: the first error
    (a --stop-after without a --run-target did nothing, without a word)."""
    from tilec.compiler.targets import stage_names

    targets = [action.target for action in actions if action.target is not None]
    if stop_after is not None and not targets:
        return f"--stop-after {stop_after} needs --run-target (it names a stage of the target)"
    for target in targets:
        try:
            names = stage_names(target)
        except CompileError as error:
            return f"--run-target {target}: {error.message}"
        if stop_after is not None and stop_after not in names:
            return (f"--stop-after {stop_after} is not a stage of {target}; its stages: "
                    f"{', '.join(names)}")
    return None


def _strip_module(pipeline: str) -> str:
    text = pipeline.strip()
    if text.startswith("builtin.module(") and text.endswith(")"):
        return text[len("builtin.module(") : -1]
    return text


def _read_input(name: str) -> str:
    """The input's text, decoded as UTF-8 (UnicodeDecodeError where it is no text), with
    universal newlines as open() reads text."""
    if name == "-" and getattr(sys.stdin, "buffer", None) is None:  # a replaced text stream
        return sys.stdin.read()
    if name == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(name, "rb") as file:
            data = file.read()
    return data.decode().replace("\r\n", "\n").replace("\r", "\n")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args, actions = _parse_arguments(argv)
    if args.list_passes:
        from tilec.compiler.passes import all_passes

        for name, cls in all_passes().items():
            print(f"--{name:32} {cls.summary}")
        return 0
    try:
        text = _read_input(args.input)
    except OSError as error:
        print(f"tilec-opt: cannot read {args.input}: {error.strerror}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as error:
        print(f"tilec-opt: cannot read {args.input}: not UTF-8 text (byte "
              f"{error.object[error.start]:#04x} at offset {error.start}); tilec-opt reads MLIR's "
              "textual form", file=sys.stderr)
        return 2

    import tilec.dialect as tile_dialect

    source_name = "-" if args.input == "-" else args.input
    chunks = _split(text) if args.split_input_file else [(1, text)]

    outputs: list[str] = []
    failures = 0
    with tile_dialect.new_context() as context:
        problem = _check_pipelines(actions, context) or _check_targets(actions, args.stop_after)
        if problem:
            print(f"tilec-opt: {problem}", file=sys.stderr)
            return 2
        for first_line, chunk in chunks:
            output, diagnostics = _process_chunk(chunk, first_line, "-", args, actions)
            if args.verify_diagnostics:
                failures += _check_expectations(
                    _expectations(chunk, first_line), diagnostics, source_name
                )
            else:
                for diagnostic in diagnostics:
                    print(
                        f"{source_name}:{diagnostic.line or '?'}: {diagnostic.severity}: "
                        f"{diagnostic.message}",
                        file=sys.stderr,
                    )
                failures += sum(d.severity == "error" for d in diagnostics)
            if output is not None:
                outputs.append(output)

    result = "// -----\n".join(outputs)
    if args.output == "-":
        sys.stdout.write(result)
    else:
        try:
            with open(args.output, "w") as file:
                file.write(result)
        except OSError as error:
            print(f"tilec-opt: cannot write {args.output}: {error.strerror}", file=sys.stderr)
            return 2
    return 1 if failures else 0


def _split(text: str) -> list[tuple[int, str]]:
    """Chunks between `// -----` lines, each with the line number it starts on."""
    chunks = []
    start, line = 0, 1
    for match in SPLIT_MARKER.finditer(text):
        chunks.append((line, text[start : match.start()]))
        line += text[start : match.end()].count("\n")
        start = match.end()
    chunks.append((line, text[start:]))
    return chunks


if __name__ == "__main__":
    sys.exit(main())
