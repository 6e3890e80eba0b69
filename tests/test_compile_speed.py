"""What keeps compiles short: long T.unroll loops, and tile ops reaching passes as their classes.

A T.unroll that would copy out more than a few thousand ops stays a loop on CUDA (unrolling is a
hint; the CPU target never unrolls), and one over a fragment, which only unrolling can keep in
registers, is an error at its line instead of minutes of compiling.
"""

from __future__ import annotations

import os

import torch
from conftest import poisoned, randn

import tilec
import tilec.language as T
from tilec.errors import CompileError

LONG = 16384


@tilec.jit
def doubled(A):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    B = T.empty((N,), T.float32)
    with T.Kernel(1, threads=1):
        for i in T.unroll(LONG):
            B[i] = A[i] * 2.0
    return B


@tilec.jit
def unrolled_fragment(A, trips=8192):
    A: T.Tensor((128,), T.float32)
    B = T.empty((128,), T.float32)
    with T.Kernel(1, threads=128):
        acc = T.alloc_fragment((128,), T.float32)
        T.copy(A, acc)
        for _ in T.unroll(trips):  # long-unroll-over-fragment
            for i in T.Parallel(128):
                acc[i] = acc[i] * 0.5
        T.copy(acc, B)
    return B


def test_long_unroll_stays_a_loop_on_cuda() -> None:
    kernel = doubled.compile(torch.empty(LONG), target="cuda:sm_90a")
    ptx = kernel.asm["ptx"]
    assert ptx.count("st.global") < 16, "the 16384 stores were copied out"
    assert "bra" in ptx  # the loop's back edge


def test_long_unroll_numerics_on_cpu(rng: torch.Generator) -> None:
    a = randn((LONG,), torch.float32, rng)
    out = poisoned((LONG,), torch.float32)
    out.copy_(doubled(a))
    torch.testing.assert_close(out, a.double().mul(2.0).float())


def test_long_unroll_over_a_fragment_is_an_error_at_its_line() -> None:
    try:
        unrolled_fragment.compile(torch.empty(128), target="cuda:sm_90a")
    except CompileError as error:
        assert "T.unroll(8192) over fragments would copy its body 8192 times" in str(error)
        assert error.filename == __file__
        source = open(__file__).read().splitlines()
        assert "long-unroll-over-fragment" in source[error.lineno - 1]
    else:
        raise AssertionError("a T.unroll(8192) over a fragment compiled")


def test_short_unroll_over_a_fragment_is_copied_out() -> None:
    def multiplies(trips: int) -> int:
        kernel = unrolled_fragment.compile(torch.empty(128), trips=trips, target="cuda:sm_90a")
        return kernel.asm["ptx"].count("mul.rn.f32")

    once = multiplies(1)
    assert once > 0 and multiplies(4) == 4 * once


def test_tile_ops_come_back_as_their_classes() -> None:
    """The bindings find the tile dialect's op classes (a failed module lookup is retried for
    every op they wrap: thousands of sys.path searches per compile)."""
    from mlir import ir

    from tilec.dialect import KernelOp, new_context

    with new_context(), ir.Location.unknown():
        module = ir.Module.parse("""
            func.func @f(%n: index) {
              tile.kernel grid(%n) threads [32] {
              ^bb0(%bx: index):
              }
              return
            }""")
        body = module.body.operations[0].regions[0].blocks[0]
        assert isinstance(body.operations[0], KernelOp)


def test_load_compiler_leaves_nothing_for_a_forked_child_to_import(tmp_path) -> None:
    """The autotuner loads the compiler before forking its compile children: a compile in a
    process that ran load_compiler imports no module of tilec's or MLIR's."""
    import subprocess
    import sys

    script = (
        "import sys, torch, tilec, tilec.language as T\n"
        "from tilec.jit import load_compiler\n"
        "@tilec.jit\n"
        "def scaled(A):\n"
        "    N = T.const('N')\n"
        "    A: T.Tensor((N,), T.float32)\n"
        "    B = T.empty((N,), T.float32)\n"
        "    with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:\n"
        "        for i in T.Parallel(128):\n"
        "            B[bx * 128 + i] = A[bx * 128 + i] * 2.0\n"
        "    return B\n"
        "load_compiler('cuda:sm_90a')\n"
        "before = set(sys.modules)\n"
        "scaled.compile(torch.empty(256), target='cuda:sm_90a')\n"
        "print(sorted(m for m in set(sys.modules) - before\n"
        "             if m.split('.')[0] in ('tilec', 'mlir')))\n"
    )
    program = tmp_path / "program.py"
    program.write_text(script)
    result = subprocess.run([sys.executable, str(program)], capture_output=True, text=True,
                            env={**os.environ, "TILEC_DISABLE_CACHE": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", result.stdout
