"""The compile driver: the frontend's tile IR in, an Artifact (every stage's text + binary) out.

Targets are modules under compiler/targets/ (see its __init__ for the two functions each
defines); the driver is the same for all of them. A function with several `tile.kernel`s (one
per `with T.Kernel` block) is compiled as one module per kernel, each keeping the function's
parameters and only its own kernel; the artifact holds them as `kernels`, launched in order.
"""

from __future__ import annotations

from typing import Any

from mlir import ir

from tilec.cache import check_compile_settings
from tilec.compiler.passes._builders import entry_function
from tilec.compiler.pipeline import CompileOptions, PassObserver, Stage, run_stages
from tilec.compiler.targets import get_target
from tilec.errors import CompileError
from tilec.runtime.artifact import Artifact, Param

TILE_STAGE = Stage("tile", lambda module, options: None, "the frontend's tile IR, as given")


def stage_names(target: str) -> list[str]:
    """Every stage a compile for `target` goes through, in order (for `tilec --emit`)."""
    options = CompileOptions(target=target)
    return [TILE_STAGE.name] + [stage.name for stage in get_target(target).stages(options)]


def compile_module(
    module: ir.Module,
    params: list[Param],
    target: str,
    *,
    launch: dict | None = None,
    stop_after: str | None = None,
    print_ir_after_all: bool = False,
    fast_math: bool = False,
    disable_tma: bool = False,
    bounds_check: bool = False,
    observer: PassObserver | None = None,
) -> Artifact:
    """Compiles the frontend's module for `target`.

    With `stop_after`, stops after that stage: the artifact then holds the texts so far and no
    binary (binary_kind "none"). The module is changed in place. `fast_math`, `disable_tma` and
    `bounds_check` are the CompileOptions the user's pass configs ask for (tilec.transform);
    `observer` sees every pass and stage (tilec.tools.trace).
    """
    check_compile_settings()
    kernels = _kernel_ops(module)
    if len(kernels) > 1:
        return _compile_kernels(module, params, target, launch or {}, len(kernels),
                                stop_after=stop_after, print_ir_after_all=print_ir_after_all,
                                fast_math=fast_math, disable_tma=disable_tma,
                                bounds_check=bounds_check, observer=observer)
    target_module = get_target(target)
    options = CompileOptions(target=target, print_ir_after_all=print_ir_after_all,
                             fast_math=fast_math, disable_tma=disable_tma,
                             bounds_check=bounds_check, observer=observer)
    with module.context, ir.Location.unknown():
        kernel_name = ir.StringAttr(entry_function(module).attributes["sym_name"]).value
        stages = [TILE_STAGE, *target_module.stages(options)]
        product, texts = run_stages(stages, module, options, stop_after=stop_after)
        merged_launch = dict(launch or {})
        if stop_after is not None and stop_after != stages[-1].name:
            binary, binary_kind = b"", "none"
        else:
            binary, binary_kind, target_launch = target_module.finish(product, options, kernel_name)
            merged_launch.update(target_launch)
    return Artifact(
        name=kernel_name,
        target=target,
        binary_kind=binary_kind,
        params=list(params),
        launch=merged_launch,
        asm=texts,
        binary=binary,
    )


def _kernel_ops(module: ir.Module) -> list[ir.Operation]:
    """The `tile.kernel`s of the entry function, in order."""
    with module.context:
        entry = entry_function(module)
        return [op.operation for op in entry.body.blocks[0].operations
                if op.operation.name == "tile.kernel"]


def _compile_kernels(module: ir.Module, params: list[Param], target: str, launch: dict,
                     count: int, **options: Any) -> Artifact:
    """One artifact per kernel, from copies of the module that keep only that kernel; their
    texts are joined per stage."""
    launches = launch.get("kernels", [{}] * count)
    if len(launches) != count:
        raise CompileError(f"the module has {count} tile.kernel ops but the launch metadata "
                           f"describes {len(launches)}")
    with module.context:
        name = ir.StringAttr(entry_function(module).attributes["sym_name"]).value
    parts = []
    for number in range(count):
        with module.context:
            copy = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
            entry = entry_function(copy)
            entry.attributes["sym_name"] = ir.StringAttr.get(f"{name}_{number}")
            for other, op in enumerate(_kernel_ops(copy)):
                if other != number:
                    op.erase()
        parts.append(compile_module(copy, params, target, launch=launches[number], **options))
    asm = {stage: "\n".join(part.asm[stage] for part in parts if stage in part.asm)
           for stage in parts[0].asm}
    return Artifact(name=name, target=target, binary_kind=parts[0].binary_kind,
                    params=list(params), launch={}, asm=asm, kernels=parts)
