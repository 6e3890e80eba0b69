"""Pass configs: TileLang's `pass_configs=` keys, and what tilec does with each.

`@tilec.jit(pass_configs=...)`, `tilec.compile(..., pass_configs=...)` and the autotuner take a
mapping from `PassConfigKey` members (or their string values, "tl.disable_tma_lower") to values.
Keys that change the generated code are honoured:

- `TL_ENABLE_FAST_MATH`: the `apply-fast-math` pass marks every floating-point arith/math op
  `fastmath<fast>`, so the backends may use approximate instructions (on CUDA, `ex2.approx` for
  exp instead of libdevice's exact expf; on the CPU, LLVM's fast-math folds).
  `TL_DISABLE_FAST_MATH` (older TileLang) keeps it off, which is tilec's default.
- `TL_DISABLE_TMA_LOWER` and `TL_DISABLE_WARP_SPECIALIZED`: the CUDA target sets the module
  attribute `tile.disable_tma`, and pipeline-async-copies then streams every pipelined loop by
  cp.async. tilec's TMA ring is always fed by a producer warpgroup (specialize-warps acts only on
  TMA loops), so the kernel without warp specialization is the cp.async one.
- `TILEC_BOUNDS_CHECK` ("tilec.bounds_check", tilec's own key): the checked mode. Every access
  of a shared, fragment or local buffer at an index the compiler cannot prove inside is tested
  at run time (insert-bounds-checks); outside, the thread prints the kernel's file:line, its
  block and thread, the index and the buffer's shape, and traps (CUDA: the launch fails with an
  illegal-instruction error; CPU: the process ends with SIGILL) before the access happens. Off
  by default, the documented unchecked mode: such an access is not tested.

Every other TileLang key is accepted, checked to be one TileLang knows, and reported by the kernel
(`kernel.ignored_pass_configs`): they tune TileLang's own TVM passes (simplifier, storage rewrite,
checks, dumps) or nvcc, which tilec does not run. A key TileLang does not know is a TilecError.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from tilec.errors import TilecError


class PassConfigKey(str, Enum):
    """TileLang's pass-config keys, with TileLang's string values."""

    TL_SIMPLIFY = "tl.Simplify"
    TL_SIMPLIFY_TRANSITIVELY_PROVE_INEQUALITIES = "transitively_prove_inequalities"
    TL_SIMPLIFY_CONVERT_BOOLEAN_TO_AND_OF_ORS = "convert_boolean_to_and_of_ors"
    TL_SIMPLIFY_APPLY_CONSTRAINTS_TO_BOOLEAN_BRANCHES = "apply_constraints_to_boolean_branches"
    TL_SIMPLIFY_PROPAGATE_KNOWNS_TO_PROVE_CONDITIONAL = "propagate_knowns_to_prove_conditional"
    TL_SIMPLIFY_PROPAGATE_KNOWNS_TO_SIMPLIFY_EXPRESSIONS = (
        "propagate_knowns_to_simplify_expressions")
    TL_SIMPLIFY_ENABLE_LET_INLINE = "enable_simplify_let_inline"
    TL_DISABLE_BUFFER_INIT_CHECK = "tl.disable_buffer_init_check"
    TL_DISABLE_DATA_RACE_CHECK = "tl.disable_data_race_check"
    TL_DISABLE_PRELOWER_SEMANTIC_CHECK = "tl.disable_prelower_semantic_check"
    TL_DISABLE_WARP_SPECIALIZED = "tl.disable_warp_specialized"
    TL_ENABLE_FAST_MATH = "tl.enable_fast_math"
    TL_DISABLE_FAST_MATH = "tl.disable_fast_math"
    TL_PTXAS_REGISTER_USAGE_LEVEL = "tl.ptxas_register_usage_level"
    TL_ENABLE_PTXAS_VERBOSE_OUTPUT = "tl.enable_ptxas_verbose_output"
    TL_DEVICE_COMPILE_FLAGS = "tl.device_compile_flags"
    TL_EMIT_LINE_DIRECTIVES = "tl.emit_line_directives"
    TL_CONFIG_INDEX_BITWIDTH = "tl.config_index_bitwidth"
    TL_ENABLE_REDUCER_PLAN_VERBOSE = "tl.enable_reducer_plan_verbose"
    TL_LAYOUT_COST_MODEL = "tl.layout_cost_model"
    TL_REDUCER_FORCE_BASELINE = "tl.reducer_force_baseline"
    TL_DISABLE_TMA_LOWER = "tl.disable_tma_lower"
    TL_DISABLE_SAFE_MEMORY_ACCESS = "tl.disable_safe_memory_legalize"
    TL_DISABLE_VECTORIZE_256 = "tl.disable_vectorize_256"
    TL_ENABLE_ASYNC_COPY = "tl.enable_async_copy"
    TL_ENABLE_LOWER_LDGSTG = "tl.enable_lower_ldgstg"
    TL_ENABLE_LOWER_LDGSTG_PREDICATED = "tl.enable_lower_ldgstg_predicated"
    TL_DISABLE_LOWER_LDGSTG_PREDICATED = "tl.disable_lower_ldgstg_predicated"
    TL_ENABLE_VECTORIZE_PLANNER_VERBOSE = "tl.enable_vectorize_planner_verbose"
    TL_DISABLE_WGMMA = "tl.disable_wgmma"
    TL_DEBUG_MERGE_SHARED_MEMORY_ALLOCATIONS = "tl.debug_merge_shared_memory_allocations"
    TL_ENABLE_AGGRESSIVE_SHARED_MEMORY_MERGE = "tl.enable_aggressive_shared_memory_merge"
    TL_DISABLE_SHARED_MEMORY_REUSE = "tl.disable_shared_memory_reuse"
    TL_DISABLE_SHUFFLE_ELECT = "tl.disable_shuffle_elect"
    TL_DISABLE_LOOP_UNSWITCHING = "tl.disable_loop_unswitching"
    TL_LOOP_UNSWITCHING_ALLOW_NON_TRIVIAL_ELSE = "tl.loop_unswitching_allow_non_trivial_else"
    TL_IF_STMT_BINDING_INLINE_REPLAYABLE_BINDS = "tl.if_stmt_binding_inline_replayable_binds"
    TL_DISABLE_THREAD_STORAGE_SYNC = "tl.disable_thread_storage_sync"
    TL_DEBUG_THREAD_STORAGE_SYNC_SUMMARY = "tl.debug_thread_storage_sync_summary"
    TL_FORCE_LET_INLINE = "tl.force_let_inline"
    TL_AST_PRINT_ENABLE = "tl.ast_print_enable"
    TL_LAYOUT_VISUALIZATION_ENABLE = "tl.layout_visualization_enable"
    TL_LAYOUT_VISUALIZATION_FORMATS = "tl.layout_visualization_formats"
    TL_STORAGE_REWRITE_DETECT_INPLACE = "tl.storage_rewrite_detect_inplace"
    TL_DYNAMIC_ALIGNMENT = "tl.dynamic_alignment"
    TL_DISABLE_DYNAMIC_TAIL_SPLIT = "tl.disable_dynamic_tail_split"
    TIR_ENABLE_EQUIV_TERMS_IN_CSE = "tir.enable_equiv_terms_in_cse_tir"
    TIR_DISABLE_CSE = "tirx.disable_cse_tir"
    TIR_SIMPLIFY = "tirx.Simplify"
    TIR_DISABLE_STORAGE_REWRITE = "tirx.disable_storage_rewrite"
    TIR_DISABLE_VECTORIZE = "tirx.disable_vectorize"
    TIR_USE_ASYNC_COPY = "tirx.use_async_copy"
    TIR_ENABLE_DEBUG = "tirx.enable_debug"
    TIR_MERGE_STATIC_SMEM = "tirx.merge_static_smem"
    TIR_ADD_LOWER_PASS = "tirx.add_lower_pass"
    TIR_NOALIAS = "tirx.noalias"
    CUDA_KERNELS_OUTPUT_DIR = "cuda.kernels_output_dir"
    TL_DISABLE_OUT_OF_BOUND_WARNING = "tl.disable_out_of_bound_warning"
    TL_ENABLE_DUMP_IR = "tl.enable_dump_ir"
    TL_DUMP_IR_DIR = "tl.dump_ir_path"
    TL_PASS_PROFILE = "tl.pass_profile"
    TL_PASS_PROFILE_THRESHOLD_MS = "tl.pass_profile_threshold_ms"
    TILEC_BOUNDS_CHECK = "tilec.bounds_check"  # tilec's own key: the checked mode

    def __str__(self) -> str:
        return self.value


_BY_VALUE = {key.value: key for key in PassConfigKey}
_SIMPLIFY_OPTIONS = frozenset({
    PassConfigKey.TL_SIMPLIFY_TRANSITIVELY_PROVE_INEQUALITIES,
    PassConfigKey.TL_SIMPLIFY_CONVERT_BOOLEAN_TO_AND_OF_ORS,
    PassConfigKey.TL_SIMPLIFY_APPLY_CONSTRAINTS_TO_BOOLEAN_BRANCHES,
    PassConfigKey.TL_SIMPLIFY_PROPAGATE_KNOWNS_TO_PROVE_CONDITIONAL,
    PassConfigKey.TL_SIMPLIFY_PROPAGATE_KNOWNS_TO_SIMPLIFY_EXPRESSIONS,
    PassConfigKey.TL_SIMPLIFY_ENABLE_LET_INLINE,
})
# TileLang spelled TVM's keys "tir.*" before they became "tirx.*": both are accepted
_LEGACY_TIR_PREFIX, _TIR_PREFIX = "tir.", "tirx."

# the keys that change tilec's code, each a boolean
_FAST_MATH_ON = PassConfigKey.TL_ENABLE_FAST_MATH
_FAST_MATH_OFF = PassConfigKey.TL_DISABLE_FAST_MATH
_TMA_OFF = (PassConfigKey.TL_DISABLE_TMA_LOWER, PassConfigKey.TL_DISABLE_WARP_SPECIALIZED)
HONOURED = frozenset({_FAST_MATH_ON, _FAST_MATH_OFF, *_TMA_OFF,
                      PassConfigKey.TILEC_BOUNDS_CHECK})


def _canonical_key(key: Any) -> PassConfigKey:
    if isinstance(key, PassConfigKey):
        return key
    if not isinstance(key, str):
        raise TilecError(f"pass_configs keys are tilec.PassConfigKey members or their string "
                         f"values, got {key!r} ({type(key).__name__})")
    found = _BY_VALUE.get(key)
    if found is None and key.startswith(_LEGACY_TIR_PREFIX):
        found = _BY_VALUE.get(_TIR_PREFIX + key.removeprefix(_LEGACY_TIR_PREFIX))
    if found is None:
        close = difflib.get_close_matches(key, list(_BY_VALUE), n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise TilecError(f"unknown pass config {key!r}: not a TileLang pass-config key{hint}")
    return found


def normalize_pass_configs(configs: Mapping[Any, Any] | None) -> dict[str, Any]:
    """The configs keyed by TileLang's string values, checked: unknown keys, a tl.Simplify
    option given outside tl.Simplify and non-boolean values for the honoured keys are errors."""
    if configs is None:
        return {}
    if not isinstance(configs, Mapping):
        raise TilecError(f"pass_configs must be a dict, got {type(configs).__name__}")
    normalized: dict[str, Any] = {}
    for raw_key, value in configs.items():
        key = _canonical_key(raw_key)
        if key in _SIMPLIFY_OPTIONS:
            raise TilecError(f"{key.name} ({key.value!r}) is an option of "
                             f"PassConfigKey.TL_SIMPLIFY: pass it as "
                             f"{{PassConfigKey.TL_SIMPLIFY: {{{key.value!r}: ...}}}}")
        if key is PassConfigKey.TL_SIMPLIFY:
            value = _simplify_options(value)
        elif key in HONOURED and not isinstance(value, bool):
            raise TilecError(f"pass config {key.value!r} takes True or False, got {value!r}")
        normalized[key.value] = value
    if normalized.get(_FAST_MATH_ON.value) and normalized.get(_FAST_MATH_OFF.value):
        raise TilecError(f"pass configs {_FAST_MATH_ON.value!r} and {_FAST_MATH_OFF.value!r} "
                         "are both True")
    return dict(sorted(normalized.items()))


def _simplify_options(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise TilecError(f"pass config 'tl.Simplify' takes a dict of simplifier options, got "
                         f"{value!r}")
    options = {}
    for raw_key, option in value.items():
        key = _canonical_key(raw_key)
        if key not in _SIMPLIFY_OPTIONS:
            known = ", ".join(sorted(k.value for k in _SIMPLIFY_OPTIONS))
            raise TilecError(f"{key.value!r} is not a tl.Simplify option; known: {known}")
        options[key.value] = option
    return dict(sorted(options.items()))


@dataclass(frozen=True)
class CodegenSettings:
    """What the honoured configs ask of the compiler (tilec.compiler.pipeline.CompileOptions)."""

    fast_math: bool = False
    disable_tma: bool = False
    bounds_check: bool = False


def codegen_settings(configs: Mapping[str, Any]) -> CodegenSettings:
    """The compiler settings of normalized configs (see the module docstring)."""
    return CodegenSettings(
        fast_math=bool(configs.get(_FAST_MATH_ON.value, False)),
        disable_tma=any(configs.get(key.value, False) for key in _TMA_OFF),
        bounds_check=bool(configs.get(PassConfigKey.TILEC_BOUNDS_CHECK.value, False)),
    )


def _has_tma(target: str) -> bool:
    """A CUDA target of sm_90 or later ("cuda:sm_90a"); a bare "cuda" names no arch."""
    found = re.fullmatch(r"cuda:sm_(\d+)[a-z]?", target)
    return found is not None and int(found.group(1)) >= 90


def ignored_pass_configs(configs: Mapping[str, Any], target: str) -> dict[str, Any]:
    """The configs that do not change a kernel for `target`: TileLang-only knobs everywhere,
    the TMA ones where the target has no TMA (the CPU, sm_80)."""
    honoured = {key.value for key in HONOURED}
    if not _has_tma(target):
        honoured -= {key.value for key in _TMA_OFF}
    return {key: value for key, value in configs.items() if key not in honoured}


def simplify_prim_func(factory: Callable[..., Any]) -> Callable[..., Any]:
    """TileLang's decorator of a kernel factory, simplifying the `T.prim_func` it returns. The
    simplification is no separate step in tilec: every compile canonicalizes the kernel's IR
    (MLIR's canonicalize and CSE), so the factory's kernel is returned as it is; anything but a
    `T.prim_func` is an error, as it is in TileLang."""
    from tilec.language import PrimFunc

    @functools.wraps(factory)
    def simplified(*args: Any, **kwargs: Any) -> PrimFunc:
        made = factory(*args, **kwargs)
        if not isinstance(made, PrimFunc):
            raise TilecError(f"simplify_prim_func: {factory.__name__}() must return a "
                             f"T.prim_func, got {type(made).__name__}", *_where(factory))
        return made

    return simplified


def _where(fn: Callable[..., Any]) -> tuple[str | None, int | None]:
    code = getattr(fn, "__code__", None)
    return (code.co_filename, code.co_firstlineno) if code is not None else (None, None)


def __getattr__(name: str) -> Any:
    """TileLang's other TVM passes (PassContext, Simplify...) are not tilec's: say so."""
    if name.startswith("__"):
        raise AttributeError(name)
    from tilec.tvm import NotInTilec

    raise NotInTilec(f"tilelang.transform.{name} is one of TileLang's TVM passes or pass "
                     "tools; tilec runs its own passes (tilec-opt --list-passes) and takes only "
                     "PassConfigKey configs here")
