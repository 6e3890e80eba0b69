"""The lowering trace (`kernel.trace()`, `tilec trace`) and `tilec diff`: every stage and pass,
the IR after each, what each pass changed, source lines, times and tile.* decisions."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
import torch

import tilec
import tilec.language as T
from tilec.compiler.targets import cpu
from tilec.errors import TilecError
from tilec.tools import trace_page
from tilec.tools.trace import IRText, Trace, ir_diff, unified_ir_diff

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "examples" / "quickstart.py"
SIZES = ["--const", "M=64", "--const", "N=48", "--const", "K=40"]


@tilec.jit(target="cpu")
def scaled_gemm(A, B, block=16):
    M, N, K = T.const("M, N, K")
    C = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=32) as (bx, by):
        A_shared = T.alloc_shared((block, block), T.float32)
        B_shared = T.alloc_shared((block, block), T.float32)
        C_local = T.alloc_fragment((block, block), T.float32)
        T.clear(C_local)
        for k in T.Pipelined(T.ceildiv(K, block), num_stages=2):
            T.copy(A[by * block, k * block], A_shared)
            T.copy(B[k * block, bx * block], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        for i, j in T.Parallel(block, block):
            C_local[i, j] = C_local[i, j] * 2.0
        T.copy(C_local, C[by * block, bx * block])
    return C


def _source_line(text: str) -> int:
    """The file line of the first line of scaled_gemm's source containing `text`."""
    lines, first = inspect.getsourcelines(scaled_gemm.fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _with_element_copies() -> list[str]:
    """The CPU target's tile passes with vectorize-element-copies (a default) before the
    sub-byte lowering."""
    split = cpu.TILE_PASSES.index("lower-sub-byte-types")
    return [*cpu.TILE_PASSES[:split], "vectorize-element-copies", *cpu.TILE_PASSES[split:]]


@pytest.fixture(scope="module")
def cpu_trace() -> Trace:
    return scaled_gemm.compile(M=32, N=48, K=64).trace()


def test_trace_holds_every_stage_and_pass_in_order(cpu_trace: Trace) -> None:
    assert cpu_trace.kernel == "scaled_gemm" and cpu_trace.target == "cpu"
    assert cpu_trace.stages == ["tile", "loops", "llvm", "llvmir", "asm"]
    names = [step.name for step in cpu_trace.steps]
    assert names == [
        "tile", "mask-scores-after-gemm", "rotate-attention-loop", *_with_element_copies(),
        "canonicalize", "cse",
        "math-extend-to-supported-types", "arith-emulate-unsupported-floats",
        "expand-narrow-float-conversions",
        "convert-scf-to-cf", "arith-expand", "expand-strided-metadata", "lower-affine",
        "convert-vector-to-llvm", "finalize-memref-to-llvm", "convert-math-to-llvm",
        "convert-math-to-libm",
        "convert-arith-to-llvm", "convert-cf-to-llvm", "convert-func-to-llvm",
        "convert-ub-to-llvm", "reconcile-unrealized-casts", "canonicalize", "llvmir", "asm"]
    assert all(step.seconds >= 0 for step in cpu_trace.steps)
    assert sum(step.seconds for step in cpu_trace.steps) > 0
    # the stage texts are the kernel's asm: the trace is the same compile, pass by pass
    kernel = scaled_gemm.compile(M=32, N=48, K=64)
    assert "\n".join(cpu_trace.step("asm").text.lines) == kernel.asm["asm"].rstrip("\n")


def test_print_ir_after_all_dumps_the_passes_the_trace_records(cpu_trace: Trace,
                                                              capfd: pytest.CaptureFixture
                                                              ) -> None:
    from tilec.compiler.driver import compile_module

    spec = scaled_gemm.compile(M=32, N=48, K=64).specialization
    result = spec.build()
    compile_module(result.module, result.params, "cpu", launch=result.launch,
                   print_ir_after_all=True, stop_after="llvm")
    dumped = re.findall(r"IR Dump After (\S+) //", capfd.readouterr().err)
    passes = [s.name for s in cpu_trace.steps if s.stage in ("loops", "llvm")]
    assert dumped == passes


def test_a_pass_diff_shows_what_it_changed(cpu_trace: Trace) -> None:
    changes = cpu_trace.changes("lower-tile-ops-to-loops")
    removed = "\n".join(line for _, old, _ in changes for line in old)
    added = "\n".join(line for _, _, new in changes for line in new)
    assert "tile.gemm" in removed and "tile.gemm" not in added
    assert "scf.for" in added
    assert cpu_trace.changes("lower-affine") == []  # nothing affine is left by then


def test_diff_aligns_past_renumbered_values() -> None:
    before = ["%0 = arith.addf %a, %b : f32", "%1 = arith.mulf %0, %0 : f32", "return %1"]
    after = ["%0 = arith.constant 2.0 : f32", "%1 = arith.addf %a, %b : f32",
             "%2 = arith.mulf %1, %1 : f32", "return %2"]
    assert ir_diff(before, after) == [("insert", 0, 0, 0, 1), ("rename", 0, 3, 1, 4)]
    # lines that differ in more than value names are a change
    assert ir_diff(["%1 = arith.mulf %0, %0 : f32"], ["%1 = arith.divf %0, %0 : f32"]) == [
        ("replace", 0, 1, 0, 1)]


def test_ir_lines_link_to_the_python_lines(cpu_trace: Trace) -> None:
    text = cpu_trace.step("tile").text
    assert not any("loc(" in line for line in text.lines)
    gemm = next(i for i, line in enumerate(text.lines) if "tile.gemm" in line)
    assert text.locations[gemm] == (__file__, _source_line("T.gemm("))
    # locations survive lowering: the loops the gemm became still point at its line
    loops = cpu_trace.step("lower-tile-ops-to-loops").text
    assert (__file__, _source_line("T.gemm(")) in loops.locations


def test_buffers_show_their_decisions_on_cuda() -> None:
    kernel = scaled_gemm.compile(M=32, N=48, K=64, target="cuda:sm_80")
    kernel_trace = kernel.trace()
    assert kernel_trace.stages[:3] == ["tile", "tile-schedule", "tile-cuda"]
    # upstream pipelines run pass by pass while traced: the same PTX comes out
    assert "\n".join(kernel_trace.step("ptx").text.lines) == kernel.asm["ptx"].rstrip("\n")
    swizzled = kernel_trace.step("select-shared-swizzle")
    buffers = {d.name: d for d in swizzled.decisions if d.op == "tile.alloc"}
    assert set(buffers) >= {"A_shared", "B_shared", "C_local"}
    assert buffers["A_shared"].type == 'memref<16x16xf32, "shared">'
    assert buffers["A_shared"].location == (__file__, _source_line("A_shared ="))
    before = {d.name: d for d in kernel_trace.step("tile").decisions if d.op == "tile.alloc"}
    assert before["A_shared"].attributes == {}
    pipelined = [d for d in kernel_trace.step("pipeline-async-copies").decisions
                 if "tile.pipeline" in d.attributes]
    assert pipelined and "cp.async" in pipelined[0].attributes["tile.pipeline"]


def test_page_is_self_contained_and_holds_the_trace(cpu_trace: Trace, tmp_path: Path) -> None:
    path = cpu_trace.save(tmp_path / "trace.html")
    page = path.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert "<script src" not in page and "<link" not in page
    found = re.search(r'<script type="application/json" id="trace-data">(.*?)</script>', page,
                      re.S)
    data = json.loads(found[1])
    assert data == json.loads(json.dumps(trace_page.page_data([cpu_trace])))
    steps = data["kernels"][0]["steps"]
    assert [s["name"] for s in steps] == [s.name for s in cpu_trace.steps]
    lowered = steps[[s["name"] for s in steps].index("lower-tile-ops-to-loops")]
    assert lowered["added"] > 0 and lowered["removed"] > 0
    sources = [f["path"] for f in data["files"]]
    assert __file__ in sources
    assert data["files"][sources.index(__file__)]["lines"][_source_line("T.gemm(") - 1].strip() \
        == "T.gemm(A_shared, B_shared, C_local)"


def test_trace_command_writes_the_page(tmp_path: Path) -> None:
    from tilec.cli import main

    output = tmp_path / "quickstart.html"
    assert main(["trace", str(QUICKSTART), *SIZES, "--target", "cpu", "-o", str(output)]) == 0
    page = output.read_text()
    assert "lower-tile-structure-to-scf" in page and "quickstart.py" in page
    assert main(["trace", str(QUICKSTART), "--kernel", "nope", "-o", str(output)]) == 2


def test_diff_command_ignores_locations(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from tilec.cli import main

    before = tmp_path / "a.mlir"
    after = tmp_path / "b.mlir"
    before.write_text('func.func @f() {\n  %c0 = arith.constant 0 : index loc("x.py":3:1)\n'
                      '  return loc(#loc1)\n}\n#loc1 = loc("x.py":4:1)\n')
    after.write_text('func.func @f() {\n  %c0 = arith.constant 0 : index loc("y.py":9:9)\n'
                     '  %c1 = arith.constant 1 : index\n  return\n}\n')
    page = tmp_path / "diff.html"
    assert main(["diff", str(before), str(after), "--html", str(page)]) == 0
    out = capsys.readouterr().out
    changed = [line for line in out.splitlines()[2:] if line[:1] in "+-"]
    assert changed == ["+  %c1 = arith.constant 1 : index"]
    assert "a.mlir" in page.read_text()
    assert unified_ir_diff(before.read_text(), before.read_text(), "a", "b") == ""
    assert main(["diff", str(before), str(tmp_path / "missing.mlir")]) == 2


def test_ir_text_resolves_aliased_and_inline_locations() -> None:
    text = IRText.parse('#loc = loc("k.py":1:1)\n#loc2 = loc(fused[#loc, "k.py":7:3])\n'
                        '%0 = tile.alloc : memref<4xf32, "shared"> loc(#loc2)\n'
                        '^bb0(%arg0: index loc("k.py":5:1)):\n'
                        'tile.fill %0, %c : memref<4xf32> loc(unknown)\n')
    assert text.lines == ['%0 = tile.alloc : memref<4xf32, "shared">', "^bb0(%arg0: index):",
                          "tile.fill %0, %c : memref<4xf32>"]
    assert text.locations == [("k.py", 7), ("k.py", 5), None]


@tilec.jit(target="cpu")
def two_kernels(A, block=32):
    M = T.const("M")
    A: T.Tensor((M,), T.float32)
    W = T.alloc_global((M,), T.float32)
    B = T.empty((M,), T.float32)
    with T.Kernel(T.ceildiv(M, block), threads=32) as bx:
        for i in T.Parallel(block):
            W[bx * block + i] = A[bx * block + i] * 2.0
    with T.Kernel(T.ceildiv(M, block), threads=32) as bx:
        for i in T.Parallel(block):
            B[bx * block + i] = W[bx * block + i] + 1.0
    return B


def test_each_kernel_of_a_function_has_its_own_stages() -> None:
    found = two_kernels.compile(M=64).trace()
    assert found.stages == ["tile", "loops", "llvm", "llvmir", "asm",
                            "tile #1", "loops #1", "llvm #1", "llvmir #1", "asm #1"]
    first = "\n".join(found.step("lower-tile-ops-to-loops").text.lines)
    second = next(s for s in found.steps if s.stage == "loops #1"
                  and s.name == "lower-tile-ops-to-loops")
    assert "arith.mulf" in first and "arith.addf" not in first
    assert "arith.addf" in "\n".join(second.text.lines)


def test_trace_of_an_artifact_without_its_source_is_an_error() -> None:
    from tilec.jit import JITKernel

    kernel = scaled_gemm.compile(M=32, N=48, K=64)
    loaded = JITKernel(kernel.artifact, kernel.location)
    with pytest.raises(TilecError, match="nothing to trace"):
        loaded.trace()


def test_traced_kernel_still_computes(cpu_trace: Trace, rng: torch.Generator) -> None:
    a = torch.randn(32, 64, generator=rng)
    b = torch.randn(64, 48, generator=rng)
    kernel = scaled_gemm.compile(M=32, N=48, K=64)
    kernel.trace()
    torch.testing.assert_close(kernel(a, b).double(), 2 * (a.double() @ b.double()),
                               rtol=1e-4, atol=1e-4)
