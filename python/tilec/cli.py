"""`tilec FILE.py`: compile the kernels a Python file defines and print a stage's text.

Kernels are the module-level `@tilec.jit` functions, `@T.prim_func` objects and functions that
return a `@T.prim_func` (factories). `--const NAME=VALUE` binds T.const sizes and factory or
kernel arguments. `--cache-dir DIR` fills a cache directory a GPU machine can use as is.

`tilec trace FILE.py [--kernel K] [--const ...] [--target T] -o trace.html` writes the lowering
trace of the file's kernels (every stage and pass, the IR after each, what each changed) as one
self-contained HTML page; `tilec diff A.mlir B.mlir [--html OUT]` diffs two IR files, source
locations left out.

Exit codes: 0 success, 1 a compile error (its text on stderr), 2 a usage error.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from typing import Any

import tilec.language as T
from tilec.errors import CompileError, TilecError, called_from_the_command_line
from tilec.jit import JITFunction, Specialization, _is_factory, prim_func_specialization

USAGE_ERROR = 2


class UsageError(Exception):
    """Bad command-line input (exit code 2)."""


def _parse_consts(texts: list[str]) -> dict[str, Any]:
    """The --const values by name; a name given twice is a usage error (the last one would win
    without a word)."""
    consts: dict[str, Any] = {}
    for text in texts:
        name, value = _parse_const(text)
        if name in consts:
            raise UsageError(f"--const {name} given twice ({consts[name]!r} and {value!r})")
        consts[name] = value
    return consts


def _write_output(path: Path, text: str) -> None:
    """Write an output file; a path that cannot be written is a usage error naming why."""
    try:
        path.write_text(text)
    except OSError as error:
        raise UsageError(f"cannot write {path}: {error.strerror or error}") from None


def _parse_const(text: str) -> tuple[str, Any]:
    name, sep, value = text.partition("=")
    if not sep or not name.isidentifier():
        raise UsageError(f"--const takes NAME=VALUE, got {text!r}")
    try:
        return name, ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return name, value  # a bare word: a dtype name such as float16


def _load_module(path: Path) -> Any:
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(f"_tilec_user_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent.resolve()))
    try:
        spec.loader.exec_module(module)
    except TilecError:
        raise
    except Exception as error:
        raise TilecError(f"importing {path} failed: {type(error).__name__}: {error}") from None
    finally:
        sys.path.pop(0)
    return module


def find_kernels(module: Any) -> dict[str, Any]:
    """The kernels a module defines at its top level, in definition order."""
    found: list[tuple[int, str, Any]] = []
    for name, value in vars(module).items():
        if isinstance(value, JITFunction):
            line = value.fn.__code__.co_firstlineno
        elif isinstance(value, T.PrimFunc):
            line = value.fn.__code__.co_firstlineno
        elif (inspect.isfunction(value) and value.__module__ == module.__name__
              and _is_factory(value)):
            line = value.__code__.co_firstlineno
        else:
            continue
        found.append((line, name, value))
    return {name: value for _, name, value in sorted(found, key=lambda item: item[0])}


def _factory_arguments(fn: Any, consts: dict[str, Any], name: str) -> dict[str, Any]:
    parameters = inspect.signature(fn).parameters
    arguments = {k: v for k, v in consts.items() if k in parameters}
    missing = [p for p, info in parameters.items()
               if info.default is inspect.Parameter.empty and p not in arguments]
    if missing:
        raise UsageError(f"kernel factory '{name}' needs " + ", ".join(
            f"--const {p}=..." for p in missing))
    return arguments


def _check_consts_are_taken(kernels: dict[str, Any], consts: dict[str, Any]) -> None:
    """A --const no selected kernel takes is a usage error (a plain prim_func takes none, a
    factory its parameters); it was dropped without a word. An eager @tilec.jit kernel checks
    its own (its T.const sizes are known once its prologue runs)."""
    taken: set[str] = set()
    for kernel in kernels.values():
        if isinstance(kernel, JITFunction) and not kernel.is_factory:
            return
        if not isinstance(kernel, T.PrimFunc):
            fn = kernel.fn if isinstance(kernel, JITFunction) else kernel
            taken.update(inspect.signature(fn).parameters)
    unused = [name for name in consts if name not in taken]
    if unused:
        raise UsageError(f"--const {unused[0]}: no kernel compiled here ({', '.join(kernels)}) "
                         "takes it (a @T.prim_func takes none, a factory its parameters: "
                         f"{', '.join(sorted(taken)) or 'none here'})")


def specialization(name: str, kernel: Any, consts: dict[str, Any], target: str,
                   out_idx: list[int] | None) -> Specialization:
    """What to compile for one kernel of the file, from the command line's constants."""
    if isinstance(kernel, JITFunction):
        if kernel.is_factory:
            return kernel.specialize((), _factory_arguments(kernel.fn, consts, name), target)
        return kernel.specialize((), dict(consts), target)
    if isinstance(kernel, T.PrimFunc):
        return prim_func_specialization(kernel, out_idx, target)
    prim = kernel(**_factory_arguments(kernel, consts, name))
    if not isinstance(prim, T.PrimFunc):
        raise TilecError(f"factory '{name}' did not return a @T.prim_func")
    return prim_func_specialization(prim, out_idx, target)


def emit(spec: Specialization, stage: str | None, print_ir_after_all: bool,
         debug_info: bool) -> str:
    """The text of `stage` (default: the final device source) for one specialization."""
    result = spec.build()
    if stage == "tile" and not print_ir_after_all:
        return result.module.operation.get_asm(enable_debug_info=debug_info)
    from tilec.compiler.driver import compile_module

    artifact = compile_module(result.module, result.params, spec.target, launch=result.launch,
                              stop_after=stage, print_ir_after_all=print_ir_after_all)
    if stage is not None:
        return artifact.asm[stage]
    from tilec.jit import JITKernel

    return JITKernel(artifact, spec.location).get_kernel_source()


def _arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tilec", description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path, help="a Python file defining tilec kernels")
    parser.add_argument("--kernel", action="append", help="compile only this kernel (repeatable)")
    parser.add_argument("--const", action="append", default=[], metavar="NAME=VALUE",
                        help="bind a T.const size or a kernel/factory argument (repeatable)")
    parser.add_argument("--target", default=None,
                        help="cpu | cuda | cuda:ARCH (sm_80, sm_89, sm_90a, ...) | hip | hip:ARCH "
                             "(gfx942, gfx90a; compiler/targets/description.py; default: "
                             "TILEC_TARGET, "
                             "else cuda with a GPU, else cpu)")
    parser.add_argument("--emit", default=None, metavar="STAGE",
                        help="print this stage's text (tile, loops, llvm, ...; default: the "
                             "final device source)")
    parser.add_argument("--out-idx", type=int, action="append", default=None,
                        help="output parameter positions of a plain prim_func (repeatable)")
    parser.add_argument("-o", "--output", type=Path, help="write the text here, not stdout")
    parser.add_argument("--print-ir-after-all", action="store_true",
                        help="print the IR after every pass to stderr")
    parser.add_argument("--mlir-print-debuginfo", action="store_true",
                        help="print source locations with --emit=tile")
    parser.add_argument("--cache-dir", type=Path,
                        help="compile into this cache directory (for machines without MLIR)")
    return parser


def selected_kernels(options: argparse.Namespace) -> dict[str, Any]:
    """The file's kernels, or those `--kernel` names."""
    module = _load_module(options.file)
    kernels = find_kernels(module)
    if options.kernel:
        unknown = [k for k in options.kernel if k not in kernels]
        if unknown:
            raise UsageError(f"no kernel named {', '.join(unknown)} in {options.file}; kernels: "
                             f"{', '.join(kernels) or 'none'}")
        kernels = {k: kernels[k] for k in options.kernel}
    if not kernels:
        raise UsageError(f"{options.file} defines no tilec kernel at module level")
    return kernels


def run(options: argparse.Namespace) -> int:
    consts = _parse_consts(options.const)
    kernels = selected_kernels(options)
    _check_consts_are_taken(kernels, consts)
    from tilec.jit import resolve_target

    only_tile = options.emit == "tile" and options.cache_dir is None
    # the tile IR is target-neutral: do not import torch just to find a GPU
    target = (options.target or "cpu") if only_tile else resolve_target(options.target)
    _check_target(target, options.emit)
    texts: list[str] = []
    if options.cache_dir is not None:
        try:
            options.cache_dir.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise UsageError(f"cannot make the cache directory {options.cache_dir}: "
                             f"{error.strerror or error}") from None
    for name, kernel in kernels.items():
        with called_from_the_command_line():
            spec = specialization(name, kernel, consts, target, options.out_idx)
        if options.cache_dir is not None:
            from tilec import cache
            from tilec.jit import compile_specialization

            os.environ["TILEC_CACHE_DIR"] = str(options.cache_dir)
            cache.enable_cache()
            compile_specialization(spec)
            if not (options.cache_dir / spec.key).is_dir():
                raise TilecError(f"{name} for {target} compiled, but its cache entry could not "
                                 f"be written under {options.cache_dir}")
            print(f"tilec: {name} for {target} cached as {options.cache_dir / spec.key}",
                  file=sys.stderr)
            continue
        text = emit(spec, options.emit, options.print_ir_after_all, options.mlir_print_debuginfo)
        texts.append(text if len(kernels) == 1 else f"// kernel {name}\n{text}")
    if texts:
        output = "\n".join(t.rstrip("\n") for t in texts) + "\n"
        if options.output is not None:
            _write_output(options.output, output)
        else:
            sys.stdout.write(output)
    return 0


def _check_target(target: str, emit: str | None) -> None:
    """--target's name and --emit's stage, before any kernel compiles: a usage error each."""
    from tilec.compiler.targets import stage_names

    try:
        names = ["tile", *stage_names(target)]
    except CompileError as error:
        raise UsageError(f"--target {target}: {error.message}") from None
    if emit is not None and emit not in names:
        raise UsageError(f"--emit {emit} is not a stage of {target}; its stages: "
                         f"{', '.join(names)}")


def _trace_arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tilec trace", description="write the lowering trace of a file's kernels as one "
        "self-contained HTML page")
    parser.add_argument("file", type=Path, help="a Python file defining tilec kernels")
    parser.add_argument("--kernel", action="append", help="trace only this kernel (repeatable)")
    parser.add_argument("--const", action="append", default=[], metavar="NAME=VALUE",
                        help="bind a T.const size or a kernel/factory argument (repeatable)")
    parser.add_argument("--target", default=None, help="as for tilec FILE.py")
    parser.add_argument("--out-idx", type=int, action="append", default=None,
                        help="output parameter positions of a plain prim_func (repeatable)")
    parser.add_argument("-o", "--output", type=Path, default=Path("trace.html"),
                        help="the page to write (default: trace.html)")
    return parser


def run_trace(options: argparse.Namespace) -> int:
    from tilec.jit import resolve_target
    from tilec.tools.trace import trace_specialization
    from tilec.tools.trace_page import render

    consts = _parse_consts(options.const)
    kernels = selected_kernels(options)
    _check_consts_are_taken(kernels, consts)
    target = resolve_target(options.target)
    _check_target(target, None)
    traces = [trace_specialization(specialization(name, kernel, consts, target, options.out_idx))
              for name, kernel in kernels.items()]
    _write_output(options.output, render(traces))
    steps = sum(len(trace.steps) for trace in traces)
    print(f"tilec: trace of {len(traces)} kernel(s), {steps} passes, written to {options.output}",
          file=sys.stderr)
    return 0


def _diff_arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tilec diff", description="diff two MLIR files, source locations left out")
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("-U", "--context", type=int, default=3, help="lines of context")
    parser.add_argument("--html", type=Path, help="also write the side-by-side diff page here")
    return parser


def run_diff(options: argparse.Namespace) -> int:
    from tilec.tools.trace import IRText, Step, Trace, unified_ir_diff
    from tilec.tools.trace_page import render

    texts = []
    for path in (options.before, options.after):
        if not path.is_file():
            raise UsageError(f"no such file: {path}")
        try:
            texts.append(path.read_text())
        except UnicodeDecodeError as error:
            raise UsageError(f"cannot read {path}: not UTF-8 text (byte "
                             f"{error.object[error.start]:#04x} at offset {error.start})"
                             ) from None
    sys.stdout.write(unified_ir_diff(*texts, str(options.before), str(options.after),
                                     options.context))
    if options.html is not None:
        pair = Trace(kernel=f"{options.before.name} → {options.after.name}", target="files")
        for path, text in zip((options.before, options.after), texts, strict=True):
            pair.steps.append(Step("files", str(path), 0.0, IRText.parse(text)))
        pair.stage_seconds["files"] = 0.0
        _write_output(options.html, render([pair]))
    return 0


SUBCOMMANDS = {"trace": (_trace_arguments, run_trace), "diff": (_diff_arguments, run_diff)}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in SUBCOMMANDS:
        parser, runner = SUBCOMMANDS[argv[0]]
        options = parser().parse_args(argv[1:])
    else:
        options, runner = _arguments().parse_args(argv), run
    try:
        return runner(options)
    except UsageError as error:
        print(f"tilec: error: {error}", file=sys.stderr)
        return USAGE_ERROR
    except TilecError as error:
        print(f"tilec: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
