"""unswitch-invariant-conditions executed on the CPU (MLIR's ExecutionEngine): a loop with an
iteration value, whose branches test two conditions computed before it from the function's
arguments (one of them and-ed with one on the loop variable, as the copies' alignment checks
are), gives the same results after the pass as before it, for every combination of the two
conditions; the pass made the loop's first version (both true) and kept the loop as it was."""

from __future__ import annotations

import ctypes
import itertools

from mlir import ir
from mlir.execution_engine import ExecutionEngine
from mlir.passmanager import PassManager

from tilec.compiler.passes.unswitch_invariant_conditions import UnswitchInvariantConditions
from tilec.dialect import new_context

KERNEL = """
func.func @sum(%base: index, %n: i32) -> i32 attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %c12 = arith.constant 12 : index
  %zero = arith.constant 0 : i32
  %r = arith.remui %base, %c16 : index
  %aligned = arith.cmpi eq, %r, %c0 : index
  %positive = arith.cmpi sgt, %n, %zero : i32
  %total = scf.for %i = %c0 to %c12 step %c1 iter_args(%acc = %zero) -> (i32) {
    %i32 = arith.index_cast %i : index to i32
    %odd = arith.trunci %i32 : i32 to i1
    %both = arith.andi %odd, %aligned : i1
    %a = scf.if %both -> (i32) {
      %t = arith.muli %i32, %n : i32
      scf.yield %t : i32
    } else {
      %t = arith.addi %i32, %n : i32
      scf.yield %t : i32
    }
    %b = scf.if %positive -> (i32) {
      %s = arith.addi %acc, %a : i32
      scf.yield %s : i32
    } else {
      %s = arith.subi %acc, %a : i32
      scf.yield %s : i32
    }
    scf.yield %b : i32
  }
  return %total : i32
}
"""


def _engine(unswitch: bool) -> tuple[ExecutionEngine, str]:
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(KERNEL)
        if unswitch:
            UnswitchInvariantConditions().run(module)
            module.operation.verify()
        text = str(module)
        PassManager.parse("builtin.module(convert-scf-to-cf,convert-arith-to-llvm,"
                          "convert-cf-to-llvm,convert-func-to-llvm,"
                          "reconcile-unrealized-casts)").run(module.operation)
        return ExecutionEngine(module, opt_level=0), text


def _call(engine: ExecutionEngine, base: int, n: int) -> int:
    result = ctypes.c_int32(-1)
    engine.invoke("sum", ctypes.pointer(ctypes.c_int64(base)), ctypes.pointer(ctypes.c_int32(n)),
                  ctypes.pointer(result))
    return result.value


def test_versions_compute_what_the_loop_computed() -> None:
    plain, _ = _engine(False)
    versioned, text = _engine(True)
    assert text.count("scf.for") == 2 and "arith.constant true" in text
    for base, n in itertools.product((4096, 4098, 4104, 4112), (7, -5, 0, 3)):
        expected = sum((i * n if i % 2 and base % 16 == 0 else i + n) * (1 if n > 0 else -1)
                       for i in range(12))
        assert _call(plain, base, n) == expected
        assert _call(versioned, base, n) == expected, (base, n)
