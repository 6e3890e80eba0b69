"""TileLang's own examples run on tilec with only their imports changed: the conformance runner.

    python benchmarks/tilelang_examples.py --examples DIR [--out JSON] [--timeout S]
        [--retry-timeout S] [--only PATTERN]... [--part K/N] [--mode run|compile|cpu] [--jobs N]
        [--budget S]
    python benchmarks/tilelang_examples.py --merge JSON... --out JSON
    python benchmarks/tilelang_examples.py --regroup JSON

DIR is a checkout of TileLang's public `examples/` folder (never part of this repository).

Selection. Every `.py` file under DIR is either run or left out with its reason, both recorded in
the JSON. Left out: pytest files (`test_*.py`, `regression_*.py`, `conftest.py`); files for other
hardware (AMD/HIP/ROCm, sm_100/sm_120 Blackwell: `tcgen05`, `alloc_tmem`...); files with no
TileLang kernel (Triton-only, torch-only, model and evaluation scripts); helper modules that
define kernels but do nothing when run (no `__main__` block and no top-level calls: they are
imported by the examples beside them); and the few files named in `LEFT_OUT` (with why).

The rewrite, the only change made to an example's text (every `.py` file of DIR is copied into a
scratch folder with it, so an example imports its sibling helpers rewritten the same way). Only
import statements whose module is `tilelang` or `tilelang.*` change, each on its own line, so line
numbers stay the original's:

    import tilelang                      ->  import tilec as tilelang
    import tilelang as tl                ->  import tilec as tl
    import tilelang.language as T        ->  import tilec.language as T
    import tilelang.testing              ->  import tilec.testing, tilec as tilelang
    from tilelang import language as T   ->  from tilec import language as T
    from tilelang.profiler import X      ->  from tilec.profiler import X

Nothing else changes: `import tvm`, `import tilelang_utils` (a sibling module), strings and
comments stay as they are.

Running. Each selected file runs in its own Python process (`python FILE ARGS` in its folder of the
scratch copy) with a timeout; ARGS come from `SMALL_SIZES` (small sizes through the file's own
argparse flags), otherwise the file runs as is. `--jobs` files run at once (each alone in its
process; the GPU is shared); `--budget` bounds the whole suite: files not started by then are
recorded as not run, as are those stopped by a SIGTERM to the runner, which still writes its JSON.
Files in `RUN_ALONE` (those that take most of the GPU's memory) run after the others, one at a time
with nothing beside them. A file that timed out gets a second chance once the first pass is over: it
runs again (the retried files `--jobs` at a time) with `--retry-timeout` seconds (clipped to what is
left of the budget); its record is then the second run's, with `retried` and the first run's status,
seconds and reason under `first_try`. A file's status: passed (exit status 0), failed (a Python
exception, or a nonzero exit), timeout, crashed (killed by a signal or died without a Python
exception: an abort inside native code), not run. For a failure the JSON keeps the exception's type
and message, the place in the example where it arose (file:line, the innermost frame inside the
example folder, or the place a tilec error names) and a short reason that groups failures alike
("T.annotate_layout missing"). A file about to time out dumps its threads' stacks into its log
(faulthandler): its record keeps the example's line the main thread was at and what it was busy in
("tilec's compiler", "Triton (the example's reference)", "torch"), and its reason says the latter.

`--mode compile` is for a machine without a GPU: the examples compile for CUDA
(`TILEC_TARGET=cuda`, sm_90a) and stop at the first kernel launch. To get there, tensors the
example puts on "cuda" are made on the CPU, CUDA generators are CPU ones,
`torch.cuda.init`/`synchronize`/`manual_seed`/`empty_cache` do nothing and `torch.cuda` reports one
H200 (`is_available`, `device_count`, `current_device`, `get_device_capability` 9.0,
`get_device_name`); a kernel call raises instead of launching. Statuses then: compiled (reached
a kernel launch), needs-gpu (stopped by something else that needs the GPU), passed (ran to the
end: it needed no GPU), failed, timeout, crashed. Its output is a triage, not a pass count.

`--mode cpu` is the same without the stop: the kernels compile for the CPU target
(`TILEC_TARGET=cpu`) and run there, so the examples' own checks against their references run
without a GPU and find wrong results (at the examples' small sizes; slow, and CUDA-only
features are errors there).

Splitting the suite over two commands (a device command has 600 s): `--part 1/2` and `--part 2/2`
each run every second selected file (the same selection, split by position), each writing its
own JSON; `--merge A.json B.json --out ALL.json` then joins them into one result, counts and
failure groups redone, as if one command had run them all.

`--regroup JSON` redoes the reasons and their groups in a JSON written earlier, by the rules of
`failure_reason` as they are now (after refining them), without running anything.

The examples' own dependencies. Some examples check tilec against flash-linear-attention (`fla`:
pure Python + Triton) and its helpers; a GPU machine without network cannot install them. On a
machine with network,

    python benchmarks/tilelang_examples.py --stage-deps [DIR]

downloads the wheels of `EXAMPLE_DEPS` (pure Python, without their own dependencies: the examples
import only these) and unpacks them into DIR, by default `.devbundle/b/example-deps` (git-ignored;
about 3 MiB beside the bundle's 36 MiB, so it travels with `.devbundle/b` to the H200). A run
puts `--deps DIR` (by default that folder, when it exists) at the end of each example's sys.path:
the machine's own packages come first, the staged ones fill what it lacks. A folder whose examples
were written against another release of a dependency has its own set in `FOLDER_DEPS`, staged
into DIR/by-folder/FOLDER and put at the front of sys.path for that folder's examples only: gdn's
references call flash-linear-attention as it was at commit f03cb3ae (their comments say so; it
lies between releases 0.2.2 and 0.3.0, whose `chunk_fwd_o`, `chunk_bwd_dqkwg`,
`chunk_scaled_dot_kkt_fwd` and `recompute_w_u_fwd` take other arguments), which is staged from
that commit's source (`--fla-source`: a clone or mirror of flash-linear-attention, by default
GitHub's). The JSON's `environment.example_deps` lists what was staged.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import datetime
import fnmatch
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"

# Per file (relative to DIR): command-line flags for small problem sizes, for files whose argparse
# defaults are large. Every flag is one the file's own argparse takes (checked before it runs);
# sizes stay multiples of the file's block sizes and keep its head/group ratios; where TileLang's
# own tests call the example's main() with sizes, these are those sizes.
_ATTENTION = ["--batch", "1", "--heads", "4", "--seq_q", "256", "--seq_kv", "256"]
_VARLEN_GQA = ["--batch", "2", "--heads", "8", "--groups", "2", "--q_seqlen", "256",
               "--k_seqlen", "256"]
_MLA = ["--batch", "4", "--kv_ctx", "1024"]
_GEMM_1K = ["--m", "1024", "--n", "1024", "--k", "1024"]
SMALL_SIZES: dict[str, list[str]] = {
    "attention_sink/benchmark_mha_sink_fwd.py": _ATTENTION,
    "attention_sink/example_mha_sink_fwd_bhsd.py": _ATTENTION,
    "attention_sink/example_gqa_sink_bwd_bhsd.py": ["--batch", "1", "--h", "8", "--n_ctx", "256",
                                                   "--groups", "2"],
    "attention_sink/example_mha_sink_bwd_bhsd.py": ["--batch", "1", "--h", "4", "--n_ctx", "256"],
    "attention_sink/example_gqa_sink_bwd_varlen.py": _VARLEN_GQA,
    "attention_sink/example_gqa_sink_fwd_varlen.py": _VARLEN_GQA,
    "blocksparse_attention/example_tilelang_sparse_gqa_decode_paged.py": [
        "--batch", "1", "--max_cache_seqlen", "2048", "--num_pages", "64"],
    "blocksparse_attention/example_tilelang_sparse_gqa_decode_varlen_indice.py": [
        "--batch", "1", "--max_cache_seqlen", "2048"],
    "blocksparse_attention/example_tilelang_sparse_gqa_decode_varlen_mask.py": [
        "--batch", "1", "--max_cache_seqlen", "2048"],
    "convolution/example_convolution.py": ["--n", "8"],
    "convolution/example_convolution_autotune.py": ["--n", "8"],
    # main()'s defaults (TileLang's test runs example_mla_decode's): at 1024 keys the outputs
    # are large enough that the examples' atol = rtol = 1e-4 is under two fp16 ulps of them
    # (2.5% of the elements then differ from their fp16 reference by that much, on the CPU
    # target as on the H200; the exact result rounded to fp16 differs as often, the reference
    # rounding its scores to fp16 twice)
    "deepseek_mla/example_mla_decode.py": ["--batch", "1", "--kv_ctx", "8192"],
    "deepseek_mla/example_mla_decode_persistent.py": _MLA,
    "deepseek_mla/example_mla_decode_ws.py": ["--batch", "1", "--kv_ctx", "8192"],
    "deepseek_mla/experimental/example_mla_decode_kv_fp8.py": _MLA,
    "deepseek_mla/example_mla_decode_paged.py": ["--batch", "4", "--cache_seqlen", "1024"],
    "deepseek_nsa/benchmark/benchmark_nsa_fwd.py": ["--batch", "2", "--seq_len", "256",
                                                    "--iterations", "2", "--warmup", "1"],
    "deepseek_v4/sparse_attn_fwd_sm90.py": ["--n_ctx", "256"],
    "flash_attention/example_gqa_bwd.py": ["--batch", "1", "--h", "8", "--n_ctx", "256",
                                           "--groups", "2"],
    "flash_attention/example_gqa_bwd_tma_reduce.py": ["--batch", "1", "--h", "8", "--n_ctx",
                                                      "256", "--groups", "2"],
    "flash_attention/example_gqa_bwd_tma_reduce_varlen.py": ["--batch", "1", "--h", "8",
                                                             "--n_ctx", "256", "--groups", "2"],
    "flash_attention/example_gqa_fwd_bshd.py": ["--batch", "1", "--heads", "16", "--seq_len",
                                                "1024", "--groups", "16"],
    "flash_attention/example_gqa_fwd_varlen.py": ["--batch", "4", "--heads", "16", "--q_seqlen",
                                                  "512", "--k_seqlen", "512", "--dim", "64"],
    "flash_attention/example_mha_bwd_bhsd.py": ["--batch", "1", "--h", "4", "--n_ctx", "256"],
    "flash_attention/example_mha_bwd_bshd.py": ["--batch", "1", "--h", "4", "--n_ctx", "256"],
    "flash_attention/example_mha_fwd_bshd.py": ["--batch", "1", "--seq_len", "256"],
    "flash_attention/example_mha_fwd_varlen.py": ["--batch", "4", "--heads", "16", "--seq_len",
                                                  "512", "--dim", "64"],
    "flash_decoding/example_gqa_decode.py": ["--kv_seqlen", "1024"],
    "flash_decoding/example_gqa_decode_varlen_logits.py": ["--k_seqlen", "1024"],
    "gemm/example_gemm_advanced_autotune.py": _GEMM_1K,
    "gemm/example_gemm_autotune.py": _GEMM_1K,
    "gemm/example_gemm_autotune_pass_configs.py": _GEMM_1K,
    "gemm/example_gemm_persistent.py": ["--M", "1024", "--N", "1024", "--K", "1024"],
    "gemm_sp/example_gemm_sp.py": _GEMM_1K,
    "grouped_gemm/example_grouped_gemm_bwd.py": ["--K", "1024", "--M", "1024"],
    "grouped_gemm/example_grouped_gemm_fwd.py": ["--K", "1024", "--M", "1024"],
    "grouped_gemm/example_grouped_gemm_fwd_ptr.py": ["--K", "1024", "--N", "1024"],
    "hadamard_transform/example_hadamard.py": ["--batch", "8"],
    "linear_attention/example_linear_attn_bwd.py": ["--B", "1", "--S", "256", "--H", "4"],
    "linear_attention/example_linear_attn_fwd.py": ["--B", "1", "--S", "256", "--H", "4"],
    "linear_attention/example_mamba_chunk_scan.py": ["--batch", "1", "--heads", "8",
                                                     "--seq_len", "512"],
    "linear_attention/example_mamba_chunk_state.py": ["--batch", "1", "--heads", "8",
                                                      "--seq_len", "512"],
    "linear_attention/example_retention_fwd.py": ["--B", "1", "--S", "512", "--H", "4"],
    "minference/example_vertical_slash_sparse_attn.py": ["--seq_len", "4096"],
}

# Files left out by name, with why (the rules in `exclusion_reason` cover the rest).
LEFT_OUT: dict[str, str] = {
    "autodd/tilelang_buggy.py": "input for TileLang's AutoDD bug minimizer: fails by design",
    "autodd/tilelang_minimized_expected.py": "AutoDD's expected minimized output: fails by design",
    "bitnet-1.58b/kernel_benchmark/tilelang_bitnet_158_int8xint2_prefill.py":
        "imports INT4TensorCoreIntrinEmitter, which TileLang itself removed (tilelang at the "
        "examples' commit a35008a4 has no such name): an ImportError under TileLang too",
    "gdn/example_chunk_delta_bwd.py":
        "calls do_bench(fn, Q, ..., scale, chunk_size=...) (line 480), forwarding its arguments "
        "as the example's old local do_bench did; TileLang's tilelang.profiler.do_bench (fn, "
        "warmup, rep, ...) takes no chunk_size=: a TypeError under TileLang too, before its check",
    "gdn/example_chunk_delta_h.py":
        "calls do_bench(fn, k=K, w=W, ...) (line 302), forwarding keywords as the example's old "
        "local do_bench did; TileLang's tilelang.profiler.do_bench (fn, warmup, rep, ...) takes "
        "no k=: a TypeError under TileLang too, after its 54-configuration autotune and before "
        "its check",
}

# The examples' own pure-Python dependencies (see the module docstring), flash-linear-attention at
# the version TileLang's own tests pin (its requirements-test.txt); fla-core holds the `fla.ops`,
# `fla.modules` and `fla.utils` the examples import (the flash-linear-attention wheel adds only
# models and layers, which pull in transformers).
EXAMPLE_DEPS = ("fla-core==0.3.2", "einops==0.8.2", "packaging==26.0")
DEPS_DEFAULT = ROOT / ".devbundle" / "b" / "example-deps"
DEPS_MANIFEST = "example-deps.txt"
FOLDER_DEPS_DIR = "by-folder"  # not an importable name: the common set's sys.path entry hides it


@dataclass(frozen=True)
class GitPackage:
    """A pure-Python package staged from its source at one commit (no release matches it)."""

    name: str
    commit: str
    package: str  # the top-level folder that is imported


FLA_SOURCE = "https://github.com/fla-org/flash-linear-attention"
FOLDER_DEPS: dict[str, tuple[GitPackage, ...]] = {
    "gdn": (GitPackage("flash-linear-attention", "f03cb3ae", "fla"),),
}

# Files that run after the others, one at a time: they take most of the GPU's memory. The
# pool_mqa_fp8 benchmark allocates 8-32 GiB and ran out beside eleven other examples;
# block_sparse_mqa_fp8 holds 66 GiB when it asks for 16 more (H100 at 878d7b7: more than an
# 80 GB card has; it passed on the H200 at ba7231a), and clean_and_maintain_logits ran out of
# its 1-4 GiB on the H100 at b3c290d and 878d7b7 with other examples' processes holding 15-32
# GiB (beside them on the H200's 140 GB it passed).
RUN_ALONE = frozenset({"dsa_hisa/pool_mqa_fp8.py", "dsa_hisa/block_sparse_mqa_fp8.py",
                       "dsa_hisa/clean_and_maintain_logits.py"})

STATUSES_RUN = ("passed", "failed", "timeout", "crashed")
STATUSES_COMPILE = ("passed", "compiled", "needs-gpu", "failed", "timeout", "crashed")


# ---------------------------------------------------------------------------------------------
# the rewrite


def _is_tilelang(module: str | None) -> bool:
    return module is not None and (module == "tilelang" or module.startswith("tilelang."))


def _tilec_name(module: str) -> str:
    return "tilec" + module.removeprefix("tilelang")


def _import_text(node: ast.Import) -> str:
    """The statement `node` with each tilelang module renamed, binding the same names."""
    parts = []
    for alias in node.names:
        if not _is_tilelang(alias.name):
            parts.append(alias.name + (f" as {alias.asname}" if alias.asname else ""))
        elif alias.asname:
            parts.append(f"{_tilec_name(alias.name)} as {alias.asname}")
        elif alias.name == "tilelang":
            parts.append("tilec as tilelang")
        else:  # `import tilelang.x` loads tilelang.x and binds `tilelang`
            parts.append(f"{_tilec_name(alias.name)}, tilec as tilelang")
    return "import " + ", ".join(parts)


def rewrite_imports(source: str) -> str:
    """`source` with its tilelang imports pointed at tilec (see the module docstring).

    Raises SyntaxError when `source` does not parse (such a file is copied unchanged).
    """
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []  # line (0-based), start col, end col, new text
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(_is_tilelang(a.name) for a in node.names):
            if node.end_lineno != node.lineno:
                raise SyntaxError(f"line {node.lineno}: an import continued over several lines")
            text = lines[node.lineno - 1]
            edits.append((node.lineno - 1, _char_column(text, node.col_offset),
                          _char_column(text, node.end_col_offset or 0), _import_text(node)))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _is_tilelang(node.module):
            line = node.lineno - 1
            start = _char_column(lines[line], node.col_offset)
            match = re.compile(r"from\s+tilelang\b").match(lines[line], start)
            if match is None:
                raise SyntaxError(f"line {node.lineno}: cannot find the module of this import")
            edits.append((line, match.start(), match.end(), "from tilec"))
    for line, start, end, text in sorted(edits, reverse=True):
        lines[line] = lines[line][:start] + text + lines[line][end:]
    return "".join(lines)


def _char_column(line: str, byte_column: int) -> int:
    """ast counts columns in UTF-8 bytes; the same place as an index into the str."""
    return len(line.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))


# ---------------------------------------------------------------------------------------------
# selection

_OTHER_HARDWARE = (
    (re.compile(r"(^|[/_])(amd|cdna\d*|hip|rocm)([/_.]|$)"), "AMD GPU (HIP/ROCm) only"),
    (re.compile(r"sm_?100|sm_?120|tcgen05|blackwell"), "needs sm_100/sm_120 (Blackwell)"),
)
_OTHER_HARDWARE_SOURCE = (
    (re.compile(r"tilelang\.rocm|target\s*=\s*[\"']hip"), "AMD GPU (HIP/ROCm) only"),
    (re.compile(r"tcgen05|alloc_tmem|\bT\.tmem|sm_100|sm100"), "needs sm_100 (Blackwell: tcgen05 / "
     "tensor memory)"),
    (re.compile(r"target\s*=\s*[\"'](metal|webgpu|c|llvm)[\"']"), "not a CUDA target (metal/cpu)"),
)
_KERNEL = re.compile(r"\bT\.Kernel\(|prim_func|tilelang\.jit|@jit\b|\btl\.jit")


def _imports(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


_SETUP_CALLS = {"manual_seed", "set_random_seed", "disable_cache", "basicConfig",
                "filterwarnings", "set_printoptions", "seed", "set_log_level"}


def _runs_something(tree: ast.Module) -> bool:
    """A `__main__` block, or a top-level call beyond setup (`main()`, quickstart's `print`)."""
    for node in tree.body:
        if isinstance(node, ast.If) and "__main__" in ast.dump(node.test):
            return True
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in _SETUP_CALLS:
                return True
    return False


def has_kernel(source: str, tree: ast.Module) -> bool:
    """The file itself defines a TileLang kernel."""
    return "tilelang" in _imports(tree) and _KERNEL.search(source) is not None


def exclusion_reason(relative: str, source: str,
                     sibling_kernels: frozenset[str] = frozenset()) -> str | None:
    """Why the example file `relative` (its path under DIR) is left out; None when it runs.

    `sibling_kernels`: the modules beside it (by import name) that define TileLang kernels; a
    file that imports one runs TileLang kernels too (a benchmark of its siblings, say).
    """
    name = relative.rsplit("/", 1)[-1]
    if relative in LEFT_OUT:
        return LEFT_OUT[relative]
    if name == "conftest.py":
        return "pytest configuration"
    if fnmatch.fnmatch(name, "test_*.py"):
        return "pytest wrapper around other examples (test_*.py)"
    if fnmatch.fnmatch(name, "regression_*.py"):
        return "performance-regression wrapper around other examples (regression_*.py)"
    lowered = relative.lower()
    for pattern, reason in _OTHER_HARDWARE:
        if pattern.search(lowered):
            return reason
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None  # runs, and fails with its SyntaxError
    imports = _imports(tree)
    runs = _runs_something(tree)
    if not (has_kernel(source, tree) or imports & sibling_kernels):
        if "triton" in imports:
            return "Triton-only (no TileLang kernel)"
        if "tilelang" not in imports and "tvm" in imports:
            return "BitBLAS/TVM kernel, not TileLang"
        if "tilelang" not in imports:
            return "no TileLang kernel (model, evaluation or torch-only code)"
        if not runs:
            return "helper module (no __main__): copied beside the examples that import it"
        return "no kernel: plots or prints layouts with TileLang's tools (no GPU target)"
    for pattern, reason in _OTHER_HARDWARE_SOURCE:
        if pattern.search(source):
            return reason
    if not runs:
        return "helper module (no __main__): copied beside the examples that import it"
    return None


@dataclass
class Selection:
    selected: list[str] = field(default_factory=list)
    left_out: dict[str, str] = field(default_factory=dict)


def select_examples(examples: Path) -> Selection:
    """Every .py file under `examples`, run or left out with its reason (sorted by path)."""
    sources = {path.relative_to(examples).as_posix(): path.read_text(encoding="utf-8",
                                                                    errors="replace")
               for path in sorted(examples.rglob("*.py"))}
    kernels_by_folder: dict[str, set[str]] = {}
    for relative, source in sources.items():
        try:
            defines = has_kernel(source, ast.parse(source))
        except SyntaxError:
            defines = False
        if defines:
            folder, _, name = relative.rpartition("/")
            kernels_by_folder.setdefault(folder, set()).add(name.removesuffix(".py"))
    selection = Selection()
    for relative, source in sources.items():
        siblings = frozenset(kernels_by_folder.get(relative.rpartition("/")[0], ()))
        reason = exclusion_reason(relative, source, siblings)
        if reason is None:
            selection.selected.append(relative)
        else:
            selection.left_out[relative] = reason
    return selection


def copy_rewritten(examples: Path, scratch: Path) -> None:
    """The whole `examples` tree into `scratch`, every .py file with its imports rewritten."""
    for path in sorted(examples.rglob("*")):
        target = scratch / path.relative_to(examples)
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix != ".py":
            shutil.copyfile(path, target)
            continue
        source = path.read_text(encoding="utf-8", errors="replace")
        try:
            source = rewrite_imports(source)
        except SyntaxError:
            pass  # copied unchanged: running it reports the problem
        target.write_text(source, encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# one example, in its own process (this file run with --child)


class KernelLaunchReached(BaseException):
    """--mode compile: a compiled kernel was called; running it needs the GPU. (Not an
    Exception, so an example's or autotuner's `except Exception` lets it through.)"""


def _is_cuda_device(value: Any) -> bool:
    text = str(value) if value is not None else ""
    return text == "cuda" or text.startswith("cuda:")


def _h200_properties() -> SimpleNamespace:
    """What torch.cuda.get_device_properties reports of an H200 SXM, from the figures the
    compiler and carver hold for sm_90a (carver's CUDA("cuda") and examples sizing persistent
    grids read them)."""
    from tilec.carver.arch import SM_FIGURES
    from tilec.compiler.targets.description import describe

    chip, sm = describe("sm_90a"), SM_FIGURES["sm_90a"]
    return SimpleNamespace(
        name="NVIDIA H200 (tilec compile mode)", major=9, minor=0,
        multi_processor_count=chip.sm_count, warp_size=chip.warp_size,
        max_threads_per_block=chip.max_threads_per_block,
        max_threads_per_multi_processor=sm.max_threads_per_sm,
        shared_memory_per_block=48 * 1024, shared_memory_per_block_optin=chip.max_shared_bytes,
        shared_memory_per_multiprocessor=sm.shared_memory_per_sm,
        regs_per_multiprocessor=chip.registers_per_block, L2_cache_size=sm.l2_cache_bytes,
        total_memory=141 * 10**9)


def _install_compile_mode(target: str = "cuda") -> None:
    """Compile for CUDA without a GPU: CUDA tensors live on the CPU, a kernel call stops
    (`target` "cpu": the kernels compile for the CPU target and run there)."""
    os.environ["TILEC_TARGET"] = target
    import torch
    from torch.overrides import TorchFunctionMode

    class CudaTensorsOnCpu(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: tuple = (),
                               kwargs: dict | None = None) -> Any:
            kwargs = dict(kwargs or {})
            if getattr(func, "__name__", "") == "cuda" and args and isinstance(
                    args[0], torch.Tensor):
                return args[0]
            if _is_cuda_device(kwargs.get("device")):
                kwargs["device"] = "cpu"
            if getattr(func, "__name__", "") == "to":
                args = tuple("cpu" if _is_cuda_device(a) else a for a in args)
            return func(*args, **kwargs)

    CudaTensorsOnCpu().__enter__()
    base_generator = torch.Generator

    class CpuGenerator(base_generator):
        """torch.Generator(device="cuda") seeds on the CPU (a class still: torch's own modules
        annotate with `torch.Generator | None`)."""

        def __new__(cls, device: Any = "cpu") -> Any:
            return base_generator.__new__(cls, "cpu" if _is_cuda_device(device) else device)

        def __init__(self, device: Any = "cpu") -> None:
            pass

    torch.Generator = CpuGenerator
    for name in ("init", "synchronize", "manual_seed", "manual_seed_all", "empty_cache"):
        setattr(torch.cuda, name, lambda *args, **kwargs: None)
    torch.cuda.is_available = lambda: True
    torch.cuda.device_count = lambda: 1
    torch.cuda.current_device = lambda: 0
    torch.cuda.get_device_capability = lambda *args, **kwargs: (9, 0)
    properties = _h200_properties()
    torch.cuda.get_device_name = lambda *args, **kwargs: properties.name
    torch.cuda.get_device_properties = lambda *args, **kwargs: properties

    if target == "cpu":
        return
    from tilec.jit import JITKernel

    def stop(kernel: Any, *args: Any, **kwargs: Any) -> Any:
        raise KernelLaunchReached(f"kernel '{kernel.name}' compiled for {kernel.target}")

    JITKernel.__call__ = stop


def _example_location(error: BaseException, scratch: Path) -> str | None:
    """Where in the example folder `error` arose: a tilec error's own place, else the innermost
    traceback frame inside the example folder (relative path:line)."""
    places: list[tuple[str, int]] = []
    filename, lineno = getattr(error, "filename", None), getattr(error, "lineno", None)
    if isinstance(filename, str) and isinstance(lineno, int):
        places.append((filename, lineno))
    places += [(frame.filename, frame.lineno or 0)
               for frame in reversed(traceback.extract_tb(error.__traceback__))]
    for filename, lineno in places:
        path = Path(filename).resolve()
        if path.is_relative_to(scratch):
            return f"{path.relative_to(scratch).as_posix()}:{lineno}"
    return None


def _error_record(error: BaseException, scratch: Path) -> dict[str, Any]:
    """The exception's type, first message line, place in the example, and the message's further
    lines as `detail` (an autotuner's list of failed configs, say)."""
    message = getattr(error, "message", None)  # a tilec error's text without its place
    if not isinstance(message, str):
        message = str(error)
    lines = message.strip().splitlines() or [""]
    record = {"type": type(error).__name__, "message": lines[0][:500],
              "where": _example_location(error, scratch)}
    if len(lines) > 1:
        record["detail"] = "\n".join(lines[1:])[:2000]
    return record


class PhaseClock:
    """Seconds an example spends in tilec's compiler in its own process (`compile_s`: from the
    tile IR to the binary, cache hits not counted) and in tilec's autotuner (`autotune_s`: its
    compiles, in forked children or here, and the timing of every configuration), written to
    `path` each time such a call ends, so that a file its timeout stops keeps them too. Why: a
    slow file's `seconds` alone do not say whether tilec or the example's own reference
    (Triton's autotuner, torch) took them."""

    def __init__(self, path: Path):
        self.path = path
        self.seconds = {"compile_s": 0.0, "autotune_s": 0.0}

    def install(self) -> None:
        import tilec.autotuner

        self._wrap(tilec.autotuner, "tune_configs", "autotune_s")
        try:
            import tilec.compiler.driver
        except ImportError:  # a tilec without its compiler (kernels from a cache): no compiles
            return
        self._wrap(tilec.compiler.driver, "compile_module", "compile_s")

    def _wrap(self, module: Any, name: str, phase: str) -> None:
        original = getattr(module, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[phase] += time.perf_counter() - start
                self.path.write_text(json.dumps(
                    {key: round(value, 2) for key, value in self.seconds.items()}))

        setattr(module, name, timed)


def phases_file(result_file: Path) -> Path:
    """Where a child's PhaseClock writes (beside its result file)."""
    return result_file.with_name(result_file.name.removesuffix(".result.json") + ".phases.json")


def child_main(mode: str, result_file: str, scratch: str, deps: str, front_deps: str,
               timeout: float, script: str, argv: list[str]) -> int:
    """Runs `script` as `python script argv...` would (with the staged `deps` folder, if any,
    last on sys.path, and its folder's own `front_deps` first), writing what happened to
    `result_file`. Shortly before the runner's
    `timeout` stops it, every thread's stack goes to stderr (the log), so that a timeout
    records where the example was."""
    import faulthandler
    import runpy

    faulthandler.dump_traceback_later(stack_dump_delay(timeout))

    record: dict[str, Any] = {"status": "passed", "error": None}
    root = Path(scratch).resolve()
    sys.argv = [script, *argv]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    if deps:
        sys.path.append(deps)
    if front_deps:
        sys.path.insert(1, front_deps)
    exit_code = 0
    PhaseClock(phases_file(Path(result_file))).install()
    try:
        if mode in ("compile", "cpu"):
            _install_compile_mode("cuda" if mode == "compile" else "cpu")
        runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        if stop.code not in (None, 0):
            record = {"status": "failed", "error": {
                "type": "SystemExit", "message": f"exit status {stop.code}", "where":
                _example_location(stop, root)}}
            exit_code = 1
    except KernelLaunchReached as stop:
        record = {"status": "compiled", "error": None, "launch": str(stop),
                  "where": _example_location(stop, root)}
    except BaseException as error:  # noqa: B036 - every way an example can stop is recorded
        record = {"status": "failed", "error": _error_record(error, root)}
        if mode in ("compile", "cpu") and _needs_gpu(record["error"]):
            record["status"] = "needs-gpu"
        traceback.print_exc()
        exit_code = 1
    Path(result_file).write_text(json.dumps(record))
    return exit_code


_GPU_MESSAGES = re.compile(r"Torch not compiled with CUDA|no NVIDIA driver|CUDA driver|"
                           r"No CUDA GPUs|cuda.*not available|Found no NVIDIA", re.IGNORECASE)


def _needs_gpu(error: dict[str, Any]) -> bool:
    return bool(_GPU_MESSAGES.search(error.get("message", "")))


# ---------------------------------------------------------------------------------------------
# failure reasons: failures alike grouped under one short line


def _tilelang_name(module: str) -> str:
    """A tilec module path as the example wrote it (tilec.language -> T, tilec.x -> tilelang.x)."""
    if module == "tilec.language" or module.startswith("tilec.language."):
        return "T" + module.removeprefix("tilec.language")
    return "tilelang" + module.removeprefix("tilec")


# the keywords of TileLang's tilelang.profiler.do_bench and Profiler.do_bench (a35008a4), which
# tilec's take too: an example passing another (gdn's do_bench(fn, k=K, ...), chunk_size=)
# fails the same under TileLang
TILELANG_DO_BENCH_KEYWORDS = frozenset({
    "fn", "warmup", "rep", "_n_warmup", "_n_repeat", "quantiles", "fast_flush", "backend",
    "return_mode", "device", "cache_size", "early_stop_baseline", "func", "n_warmup",
    "n_repeat", "input_tensors", "dynamic_symbolic_constraints"})


def _unexpected_keyword(match: re.Match[str]) -> str:
    function, keyword = match[1], match[2]
    if function == "do_bench" and keyword not in TILELANG_DO_BENCH_KEYWORDS:
        return f"do_bench() takes no {keyword}=, nor does TileLang's (the example's own call)"
    return f"{function}() takes no {keyword}="


_REASONS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"No module named '(tilec[\w.]*)'"),
     lambda m: f"{_tilelang_name(m[1])} missing (module)"),
    (re.compile(r"No module named 'tvm"),
     lambda m: "tvm imported directly (TileLang bundles TVM; tilec has none)"),
    (re.compile(r"No module named '(\w+)"), lambda m: f"package not installed: {m[1]}"),
    (re.compile(r"cannot import name '(\w+)' from '(tilec[\w.]*)'"),
     lambda m: f"{_tilelang_name(m[2])}.{m[1]} missing"),
    (re.compile(r"module '(tilec[\w.]*)'(?: from [^>]*>)? has no attribute '(\w+)'"),
     lambda m: f"{_tilelang_name(m[1])}.{m[2]} missing"),
    (re.compile(r"T\.(\w+) is not supported by tilec yet"), lambda m: f"T.{m[1]} not supported"),
    (re.compile(r"^buffer '[^']*' has no attribute '(\w+)'"), lambda m: f"buffer.{m[1]} missing"),
    (re.compile(r"(?:type object|^) ?'(\w+)'(?: object)? has no attribute '(\w+)'"),
     lambda m: f"{m[1]}.{m[2]} missing"),
    (re.compile(r"(\w+)\(\) got an unexpected keyword argument '(\w+)'"), _unexpected_keyword),
)


def failure_reason(error: dict[str, Any]) -> str:
    """One line naming what failed, the same for failures alike ("T.annotate_layout missing")."""
    message = error.get("message", "")
    for pattern, name in _REASONS:
        match = pattern.search(message)
        if match:
            return name(match)
    text = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", message)  # the example's own names
    text = re.sub(r"`[^`]*`", "`…`", text)  # suggested code, written for each example
    text = re.sub(r"<[^<>]*>", "<…>", text)  # object reprs (with addresses)
    text = re.sub(r"\b\d+\b", "N", text)
    return f"{error.get('type', 'Error')}: {text}"[:160]


def triage(files: dict[str, dict[str, Any]], statuses: tuple[str, ...]) -> list[dict[str, Any]]:
    """The reasons of the files in `statuses`, most frequent first, with the files of each."""
    groups: dict[str, list[str]] = {}
    for name, record in files.items():
        if record["status"] in statuses:
            groups.setdefault(record["reason"], []).append(name)
    ranked = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    return [{"reason": reason, "count": len(names), "files": sorted(names)}
            for reason, names in ranked]


# ---------------------------------------------------------------------------------------------
# the examples' dependencies, staged for a machine without network


def stage_deps(dest: Path, requirements: tuple[str, ...] = EXAMPLE_DEPS,
               fla_source: str = FLA_SOURCE) -> list[str]:
    """The wheels of `requirements` downloaded (pip, without their own dependencies) and unpacked
    into `dest`, then each folder's `FOLDER_DEPS` from `fla_source` (a git URL or path) into
    dest/by-folder/FOLDER; returns what was staged (`name==version` each)."""
    with tempfile.TemporaryDirectory(prefix="tilec-example-wheels-") as folder:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                        "--only-binary=:all:", "--dest", folder, *requirements], check=True)
        staged = unpack_wheels(Path(folder), dest)
    for example_folder, packages in FOLDER_DEPS.items():
        for package in packages:
            staged.append(stage_git_package(fla_source, package,
                                            dest / FOLDER_DEPS_DIR / example_folder)
                          + f" (for {example_folder}/)")
    (dest / DEPS_MANIFEST).write_text("\n".join(staged) + "\n")
    return staged


def stage_git_package(source: str, package: GitPackage, dest: Path) -> str:
    """`package`'s folder at its commit, from the git repository `source`, copied into `dest`;
    returns its `name@commit`."""
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tilec-example-git-") as folder:
        subprocess.run(["git", "clone", "--quiet", "--no-checkout", source, folder], check=True)
        archive = subprocess.run(["git", "-C", folder, "archive", package.commit,
                                  package.package], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return f"{package.name}@{package.commit}"


def folder_deps(deps: Path | None, relative: str) -> Path | None:
    """The staged dependencies of `relative`'s top folder alone (FOLDER_DEPS), if any."""
    if deps is None:
        return None
    folder = deps / FOLDER_DEPS_DIR / relative.split("/", 1)[0]
    return folder if "/" in relative and folder.is_dir() else None


def unpack_wheels(wheels: Path, dest: Path) -> list[str]:
    """Every wheel in `wheels` unpacked into `dest` (an importable folder once on sys.path), its
    earlier contents replaced; a manifest of `name==version` lines beside them."""
    import zipfile

    found = sorted(wheels.glob("*.whl"))
    if not found:
        raise RuntimeError(f"no wheels in {wheels}")
    native = [w.name for w in found if not w.name.endswith("-none-any.whl")]
    if native:
        raise RuntimeError(f"not pure-Python wheels (they would not run on another machine): "
                           f"{', '.join(native)}")
    if dest.exists():
        if any(dest.iterdir()) and not (dest / DEPS_MANIFEST).exists():
            raise RuntimeError(f"{dest} holds files that --stage-deps did not put there; "
                               "name an empty or new folder")
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    staged = []
    for wheel in found:
        name, version = wheel.name.split("-")[:2]
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(dest)
        staged.append(f"{name}=={version}")
    (dest / DEPS_MANIFEST).write_text("\n".join(staged) + "\n")
    return staged


def staged_deps(deps: Path | None) -> list[str]:
    """What `stage_deps` put into `deps` (empty when nothing is staged there)."""
    manifest = deps / DEPS_MANIFEST if deps is not None else None
    return (manifest.read_text().splitlines() if manifest is not None and manifest.exists()
            else [])


# ---------------------------------------------------------------------------------------------
# the suite


_RUNNING: set[subprocess.Popen] = set()  # the examples running now (each in its own session)
_STOPPED = threading.Event()


def _stop_running_examples(signum: int, _frame: Any) -> None:
    """The runner was told to stop (a time limit): stop the examples running, start no more,
    and still write the JSON of what ran."""
    _STOPPED.set()
    for process in list(_RUNNING):
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def run_example(relative: str, scratch: Path, mode: str, timeout: float,
                deps: Path | None = None) -> dict[str, Any]:
    """`relative` run in its own process in its folder of `scratch`, with `deps` (the staged
    dependencies) at the end of its sys.path; its record for the JSON."""
    script = scratch / relative
    args = SMALL_SIZES.get(relative, [])
    source = script.read_text(encoding="utf-8", errors="replace")
    unknown = [a for a in args if a.startswith("--") and f'"{a}"' not in source]
    if unknown:
        return {"args": args, "seconds": 0.0, "status": "failed", "error": None,
                "reason": f"runner's SMALL_SIZES out of date: {relative} has no {unknown}"}
    log = script.with_name(script.name + ".log")
    result_file = script.with_name(script.name + ".result.json")
    result_file.unlink(missing_ok=True)
    phases = phases_file(result_file)
    phases.unlink(missing_ok=True)
    front_deps = folder_deps(deps, relative)
    command = [sys.executable, str(Path(__file__).resolve()), "--child", mode, str(result_file),
               str(scratch), str(deps or ""), str(front_deps or ""), str(timeout), str(script),
               *args]
    start = time.perf_counter()
    with open(log, "wb") as output:
        process = subprocess.Popen(command, cwd=script.parent, stdout=output,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        _RUNNING.add(process)
        try:
            returncode: int | None = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            returncode = None
        finally:
            _RUNNING.discard(process)
    seconds = round(time.perf_counter() - start, 2)
    record: dict[str, Any] = {"args": args, "seconds": seconds}
    if phases.exists():  # tilec's compiles and autotunes, when the example ran any
        record.update(json.loads(phases.read_text()))
    output = log.read_text(errors="replace")
    tail = output.strip().splitlines()[-5:]
    if returncode is None:
        where, busy = timeout_place(output, scratch)
        record.update(status="timeout", error=None, where=where, busy_in=busy,
                      reason=f"timeout (over {timeout:g} s) in {busy}", output_tail=tail,
                      stack=main_thread_stack(output, scratch))
        return record
    if result_file.exists():
        record.update(json.loads(result_file.read_text()))
    elif returncode < 0:
        name = signal.Signals(-returncode).name
        record.update(status="crashed", error={"type": name, "message": tail[-1] if tail else "",
                                               "where": None})
    else:
        record.update(status="crashed", error={"type": f"exit status {returncode}",
                                               "message": tail[-1] if tail else "", "where": None})
    if record["status"] == "crashed":
        record["output_tail"] = tail
    reason = record_reason(record)
    if reason is not None:
        record["reason"] = reason
    return record


def stack_dump_delay(timeout: float) -> float:
    """When a child dumps its stacks: a few seconds before the runner's timeout stops it."""
    return max(timeout - 3.0, timeout * 0.5)


_STACK_FRAME = re.compile(r'^\s+File "([^"]+)", line (\d+) in (\S+)', re.MULTILINE)
_STDLIB = re.compile(r"/lib/python3\.\d+/(?!.*-packages/)|^<frozen ")  # and frozen modules
_BUSY_IN = (("/tilec/autotuner", "tilec's autotuner"), ("/compiler/", "tilec's compiler"),
            ("/mlir/", "tilec's compiler"), ("/tilec/runtime/", "tilec's runtime"),
            ("/tilec/profiler", "tilec's profiler"), ("/tilec/", "tilec"),
            ("/triton/", "Triton (the example's reference)"),
            ("/fla/", "Triton (the example's reference)"), ("/torch/", "torch"))


def _dumped_threads(output: str) -> tuple[list[list[tuple[str, str, str]]], list | None]:
    """The frames of every thread in a timed-out child's last stack dump, and the main
    thread's (the one running the example through runpy), innermost first."""
    dump = output[output.rfind("Timeout ("):] if "Timeout (" in output else ""
    threads = [_STACK_FRAME.findall(block) for block in dump.split("\n\n")]
    main = next((frames for frames in threads if any("runpy" in f for f, _, _ in frames)), None)
    return threads, main


def main_thread_stack(output: str, scratch: Path, limit: int = 12) -> list[str]:
    """The main thread's innermost `limit` frames from a timed-out child's stack dump, as
    `file:line in function` (paths inside the example folder relative to it): where a
    timeout waited, for the JSON (the log's last lines are the outermost frames)."""
    _, main = _dumped_threads(output)
    shown = []
    for filename, line, function in (main or [])[:limit]:
        path = Path(filename)
        if path.is_absolute() and path.resolve().is_relative_to(scratch):
            filename = path.resolve().relative_to(scratch).as_posix()
        shown.append(f"{filename}:{line} in {function}")
    return shown


def timeout_place(output: str, scratch: Path) -> tuple[str | None, str]:
    """From a timed-out child's log (its stack dump, see `child_main`): the innermost frame of
    the main thread inside the example folder (relative path:line), and what the innermost
    frame belongs to ("tilec's compiler", "Triton (the example's reference)", "the example")."""
    threads, main = _dumped_threads(output)
    if not main:
        return None, "an unknown place (no stack dump)"
    where = None
    for filename, line, _ in main:  # innermost first
        path = Path(filename)
        if path.is_absolute() and path.resolve().is_relative_to(scratch):
            where = f"{path.resolve().relative_to(scratch).as_posix()}:{line}"
            break
    busy = _busy_in(main, scratch)
    if busy == "torch":  # waiting in a backward pass: the autograd thread runs the work
        others = [_busy_in(frames, scratch) for frames in threads
                  if frames and frames is not main]
        tilec_work = [label for label in others if label.startswith("tilec")]
        if tilec_work:
            busy = f"{tilec_work[0]} (in torch's autograd thread)"
    return where, busy


def _busy_in(frames: list[tuple[str, str, str]], scratch: Path) -> str:
    """What the innermost frame of a thread's stack outside the standard library belongs to."""
    innermost = next((f for f, _, _ in frames if not _STDLIB.search(f)),
                     frames[0][0])  # a wait in threading or subprocess: who waits
    busy = next((label for part, label in _BUSY_IN if part in innermost), None)
    if busy is None:
        inside = Path(innermost).is_absolute() and Path(innermost).resolve().is_relative_to(
            scratch)
        busy = "the example" if inside else Path(innermost).name
    return busy


def record_reason(record: dict[str, Any]) -> str | None:
    """The reason line of a file's record from its error (None: nothing went wrong)."""
    error = record.get("error")
    if record["status"] in ("timeout", "not-run") or error is None:
        return record.get("reason")
    if record["status"] == "crashed":
        return f"crashed ({error['type']}): " + failure_reason(
            {"type": "", "message": error["message"]}).removeprefix(": ")
    if record["status"] == "needs-gpu":
        return "needs a GPU: " + failure_reason(error)
    return failure_reason(error)


FAILING = ("failed", "timeout", "crashed", "not-run")


def regroup(result: dict[str, Any]) -> dict[str, Any]:
    """`result` (a JSON this runner wrote) with its reasons and groups redone by today's rules."""
    for record in result["files"].values():
        reason = record_reason(record)
        if reason is not None:
            record["reason"] = reason
    result["failure_reasons"] = triage(result["files"], FAILING)
    if result["mode"] in ("compile", "cpu"):
        result["needs_gpu_reasons"] = triage(result["files"], ("needs-gpu",))
    return result


def _tilec_commit() -> str:
    """The tilec the examples import: this checkout's commit, or the device bundle's."""
    import importlib.util

    spec = importlib.util.find_spec("tilec")
    origin = Path(spec.origin).resolve() if spec and spec.origin else None
    bundle = ROOT / ".devbundle" / "b" / "COMMIT"
    if origin is not None and not origin.is_relative_to(ROOT) and bundle.exists():
        return bundle.read_text().strip()
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return bundle.read_text().strip() if bundle.exists() else "unknown"
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain",
                            "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    return commit + ("-dirty" if dirty else "")


def environment(deps: Path | None) -> dict[str, Any]:
    import torch

    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else None
    return {"gpu": gpu, "torch": torch.__version__, "cuda": torch.version.cuda,
            "python": platform.python_version(), "machine": platform.machine(),
            "tilec_commit": _tilec_commit(), "example_deps": staged_deps(deps)}


def default_output(mode: str, gpu: str | None) -> Path:
    date = datetime.date.today().isoformat()
    if mode == "compile":
        return RESULTS / f"{date}-cpu_tilelang-examples-triage.json"
    label = gpu.split()[-1].lower() if gpu else "cpu"
    return RESULTS / f"{date}-{label}_tilelang-examples.json"


@dataclass(frozen=True)
class Part:
    """`--part K/N`: the K-th of N interleaved shares of the selected files."""

    index: int
    count: int

    @staticmethod
    def parse(text: str) -> Part:
        match = re.fullmatch(r"(\d+)/(\d+)", text)
        if match is None or not 1 <= int(match[1]) <= int(match[2]):
            raise ValueError(f"--part {text}: expected K/N with 1 <= K <= N")
        return Part(int(match[1]), int(match[2]))

    def take(self, files: list[str]) -> list[str]:
        return files[self.index - 1::self.count]

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def previous_seconds(previous: dict[str, Any]) -> dict[str, float]:
    """Each file's seconds in a JSON this runner wrote (a file it did not run has none)."""
    return {relative: float(record["seconds"])
            for relative, record in previous.get("files", {}).items()
            if record.get("status") != "not-run"}


def shortest_first(files: list[str], seconds: dict[str, float]) -> list[str]:
    """`files` by their `seconds`, shortest first, a file with none at the median's place
    (ties in path order). Why: the runner starts files in order, so under a --budget the time
    left over goes to the longest files, not to the files after them in path order (at
    878d7b7, 23 quick files in norm/, topk/, warp_specialize/... were not run for the budget
    the kda and gdn references had spent)."""
    known = sorted(seconds[f] for f in files if f in seconds)
    middle = known[len(known) // 2] if known else 0.0
    return sorted(files, key=lambda f: seconds.get(f, middle))


def run_suite(examples: Path, mode: str, timeout: float, only: list[str] | None, jobs: int,
              budget: float | None, deps: Path | None = None, retry_timeout: float = 0.0,
              part: Part | None = None, order: dict[str, float] | None = None
              ) -> dict[str, Any]:
    """The selected files (those matching one of `only`, of `part`) run in three passes: the others
    `jobs` at a time, `RUN_ALONE` one by one, then those that timed out again with
    `retry_timeout` seconds (none when 0). With `order` (seconds per file, previous_seconds)
    each pass starts its files shortest first, else in path order."""
    selection = select_examples(examples)
    chosen = [f for f in selection.selected if only is None or any(
        fnmatch.fnmatch(f, pattern) or pattern in f for pattern in only)]
    if part is not None:
        chosen = part.take(chosen)
    if order is not None:
        chosen = shortest_first(chosen, order)
    files: dict[str, dict[str, Any]] = {}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tilec-tl-examples-") as folder:
        scratch = Path(folder).resolve()
        copy_rewritten(examples, scratch)

        def one(relative: str, limit: float) -> dict[str, Any]:
            left = None if budget is None else budget - (time.perf_counter() - started)
            if (left is not None and left <= 0) or _STOPPED.is_set():
                why = (f"the suite's {budget:g} s were spent" if not _STOPPED.is_set()
                       else "the runner was stopped")
                return {"args": SMALL_SIZES.get(relative, []), "seconds": 0.0,
                        "status": "not-run", "error": None, "reason": f"not run: {why}"}
            record = run_example(relative, scratch, mode, limit if left is None
                                 else max(1.0, min(limit, left)), deps)
            if _STOPPED.is_set() and record["status"] != "passed":
                record.update(status="not-run", reason="not run: the runner was stopped")
            return record

        def run_pass(names: list[str], limit: float, workers: int, label: str) -> None:
            with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
                records = zip(names, pool.map(lambda name: one(name, limit), names), strict=True)
                for done, (relative, record) in enumerate(records, start=1):
                    if label == "retry" and record["status"] == "not-run":
                        continue  # no time left for it: the first try's timeout stands
                    if label == "retry":
                        first = files[relative]
                        record = {**record, "retried": True, "first_try": {
                            key: first.get(key) for key in ("status", "seconds", "reason")}}
                    files[relative] = record
                    print(f"{label:5} [{done:3}/{len(names)}] {record['status']:9} "
                          f"{record['seconds']:6.1f}s {relative}  {record.get('reason') or ''}",
                          flush=True)

        run_pass([f for f in chosen if f not in RUN_ALONE], timeout, jobs, "first")
        run_pass([f for f in chosen if f in RUN_ALONE], timeout, 1, "alone")
        if retry_timeout > 0:
            late = [f for f in chosen if files[f]["status"] == "timeout"]
            run_pass(late, retry_timeout, jobs, "retry")
    settings = {"timeout_s": timeout, "retry_timeout_s": retry_timeout, "jobs": jobs,
                "budget_s": budget, "only": only, "part": str(part) if part else None,
                "shortest_first": order is not None}
    result = suite_result(mode, files, selection.left_out, [settings])
    result["wall_s"] = round(time.perf_counter() - started, 1)
    return result


def suite_result(mode: str, files: dict[str, dict[str, Any]], left_out: dict[str, str],
                 settings: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON of a run (or of several parts merged) from its files' records."""
    passed = sum(r["status"] == "passed" for r in files.values())
    by_status: dict[str, int] = {}
    for record in files.values():
        by_status[record["status"]] = by_status.get(record["status"], 0) + 1
    result: dict[str, Any] = {
        "suite": "TileLang's examples on tilec with only the import changed "
                 "(benchmarks/tilelang_examples.py)",
        "mode": mode, "date": datetime.date.today().isoformat(),
        "settings": settings[0] if len(settings) == 1 else settings,
        "passed": passed, "failed": len(files) - passed, "total": len(files),
        "by_status": by_status,
        "passed_on_retry": sorted(f for f, r in files.items()
                                  if r.get("retried") and r["status"] == "passed"),
        "failure_reasons": triage(files, FAILING),  # each file under its first error only
        "files": dict(sorted(files.items())),
        "left_out_count": len(left_out),
        "left_out": left_out,
    }
    if mode in ("compile", "cpu"):
        result["needs_gpu_reasons"] = triage(files, ("needs-gpu",))
    return result


def merge_results(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSONs of one suite's parts (`--part`) joined into one, as one command would write it."""
    modes = {part["mode"] for part in parts}
    if len(modes) != 1:
        raise ValueError(f"the parts ran in different modes: {sorted(modes)}")
    files: dict[str, dict[str, Any]] = {}
    for part in parts:
        twice = files.keys() & part["files"].keys()
        if twice:
            raise ValueError(f"files in two parts: {sorted(twice)[:5]}")
        files.update(part["files"])
    settings = [s for part in parts for s in (part["settings"] if isinstance(part["settings"], list)
                                              else [part["settings"]])]
    result = suite_result(modes.pop(), files, parts[0]["left_out"], settings)
    result["wall_s"] = round(sum(part.get("wall_s", 0.0) for part in parts), 1)
    if "environment" in parts[0]:
        result["environment"] = parts[0]["environment"]
    return result


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        mode, result_file, scratch, deps, front_deps, timeout, script, *argv = sys.argv[2:]
        sys.exit(child_main(mode, result_file, scratch, deps, front_deps, float(timeout), script,
                            argv))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=Path, help="a checkout of TileLang's examples/ folder")
    parser.add_argument("--regroup", type=Path, default=None, help="redo the reasons and groups "
                        "of a JSON this runner wrote, by the current rules (runs nothing)")
    parser.add_argument("--out", type=Path, default=None, help="the JSON to write (default: "
                        "benchmarks/results/<date>-<gpu>_tilelang-examples.json)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per file")
    parser.add_argument("--retry-timeout", type=float, default=180.0, help="seconds for the "
                        "second run of a file that timed out, after the others (0: no retry)")
    parser.add_argument("--part", type=Part.parse, default=None, metavar="K/N",
                        help="run the K-th of N shares of the selected files (see --merge)")
    parser.add_argument("--merge", type=Path, nargs="+", default=None, metavar="JSON",
                        help="join the JSONs of a suite's parts into --out (runs nothing)")
    parser.add_argument("--only", action="append", default=None, help="run the files matching "
                        "this glob or containing this text (repeatable: any of them)")
    parser.add_argument("--mode", choices=("run", "compile", "cpu"), default="run")
    parser.add_argument("--shortest-first", type=Path, default=None, metavar="JSON",
                        help="start the files shortest first by their seconds in JSON (a "
                        "previous run's), so that a --budget leaves out the longest ones")
    parser.add_argument("--jobs", type=int, default=min(8, max(1, (os.cpu_count() or 2) // 2)),
                        help="files run at once")
    parser.add_argument("--budget", type=float, default=None, help="seconds for the whole "
                        "suite: files not started by then are recorded as not run")
    parser.add_argument("--examples-commit", default=None,
                        help="the TileLang commit DIR was taken from, for the record")
    parser.add_argument("--deps", type=Path, default=None, help="the examples' dependencies "
                        f"staged by --stage-deps (default: {DEPS_DEFAULT.relative_to(ROOT)} "
                        "when it exists)")
    parser.add_argument("--fla-source", default=FLA_SOURCE, help="the flash-linear-attention "
                        "git repository (URL or path) --stage-deps takes FOLDER_DEPS from")
    parser.add_argument("--stage-deps", type=Path, nargs="?", const=DEPS_DEFAULT, default=None,
                        metavar="DIR", help="download and unpack EXAMPLE_DEPS into DIR (default: "
                        f"{DEPS_DEFAULT.relative_to(ROOT)}) and stop (needs network)")
    args = parser.parse_args()
    if args.stage_deps is not None:
        staged = stage_deps(args.stage_deps.resolve(), fla_source=args.fla_source)
        size = sum(f.stat().st_size for f in args.stage_deps.rglob("*") if f.is_file())
        print(f"staged {', '.join(staged)} into {args.stage_deps} ({size / 2**20:.1f} MiB)")
        return
    deps = args.deps if args.deps is not None else (DEPS_DEFAULT if DEPS_DEFAULT.is_dir()
                                                     else None)
    if deps is not None and not deps.is_dir():
        parser.error(f"--deps {deps}: not a folder")
    deps = deps.resolve() if deps is not None else None
    if args.merge is not None:
        if args.out is None:
            parser.error("--merge needs --out")
        result = merge_results([json.loads(path.read_text()) for path in args.merge])
        args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
        _print_summary(result, args.out)
        return
    if args.regroup is not None:
        result = regroup(json.loads(args.regroup.read_text()))
        args.regroup.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
        _print_summary(result, args.regroup)
        return
    if args.examples is None or not args.examples.is_dir():
        parser.error(f"--examples {args.examples}: not a folder")
    signal.signal(signal.SIGTERM, _stop_running_examples)
    signal.signal(signal.SIGINT, _stop_running_examples)
    env = environment(deps)
    print(f"tilec {env['tilec_commit']}, torch {env['torch']}, GPU {env['gpu']}, example deps "
          f"{', '.join(env['example_deps']) or 'none'}", flush=True)
    order = (previous_seconds(json.loads(args.shortest_first.read_text()))
             if args.shortest_first is not None else None)
    result = run_suite(args.examples.resolve(), args.mode, args.timeout, args.only, args.jobs,
                       args.budget, deps, args.retry_timeout, args.part, order)
    result = {**result, "environment": {**env, "tilelang_examples_commit": args.examples_commit}}
    out = args.out or default_output(args.mode, env["gpu"])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    _print_summary(result, out)


def _print_summary(result: dict[str, Any], out: Path) -> None:
    print(f"{result['passed']}/{result['total']} passed ({result['by_status']}); "
          f"{result['left_out_count']} files left out; wrote {out}")
    for group in result["failure_reasons"]:
        print(f"{group['count']:4}  {group['reason']}")


if __name__ == "__main__":
    main()
