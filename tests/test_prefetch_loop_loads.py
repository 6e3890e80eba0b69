"""prefetch-loop-loads executed on the CPU (MLIR's ExecutionEngine): a row-times-vector loop in a
GEMV's form (16-byte steps of a row and of the activations, the last step past K read element
by element under bounds checks, a scale per two steps read as a scalar, the row's result stored
after the loop) computes the float64 reference's result after the pass as before it, for rows
of random values and for K ending at each offset of a step; the output is NaN-poisoned before
each run. The pass carried the three loads' values across the loop (their first iteration's
copies before it)."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest
from mlir import ir
from mlir.execution_engine import ExecutionEngine
from mlir.passmanager import PassManager
from mlir.runtime import get_ranked_memref_descriptor

from tilec.compiler.passes.prefetch_loop_loads import PrefetchLoopLoads
from tilec.dialect import new_context

ROWS = 3
STEP = 4


def _kernel(k: int) -> str:
    steps = -(-k // STEP)
    groups = -(-steps // 2)
    lanes = "\n".join(f"""
          %i{lane} = arith.addi %k, %c{lane} : index
          %in{lane} = arith.cmpi ult, %i{lane}, %cK : index
          %w{lane} = scf.if %in{lane} -> (f64) {{
            %v = memref.load %w[%row, %i{lane}] : memref<{ROWS}x{k}xf64>
            scf.yield %v : f64
          }} else {{
            scf.yield %zero : f64
          }}
          %p{lane} = vector.insert %w{lane}, %p{lane - 1} [{lane}] : f64 into vector<4xf64>"""
                      for lane in range(STEP)).replace("%p-1", "%zeros")
    return f"""
func.func @gemv(%w: memref<{ROWS}x{k}xf64>, %x: memref<{k}xf64>, %s: memref<{ROWS}x{groups}xf64>,
                %out: memref<{ROWS}xf64>) attributes {{llvm.emit_c_interface}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %cK = arith.constant {k} : index
  %cRows = arith.constant {ROWS} : index
  %cSteps = arith.constant {steps} : index
  %zero = arith.constant 0.0 : f64
  %zeros = arith.constant dense<0.0> : vector<4xf64>
  scf.for %row = %c0 to %cRows step %c1 {{
    %sum = scf.for %step = %c0 to %cSteps step %c1 iter_args(%acc = %zero) -> (f64) {{
      %k = arith.muli %step, %c4 : index
      %end = arith.addi %k, %c4 : index
      %whole = arith.cmpi ule, %end, %cK : index
      %wv = scf.if %whole -> (vector<4xf64>) {{
        %v = vector.load %w[%row, %k] : memref<{ROWS}x{k}xf64>, vector<4xf64>
        scf.yield %v : vector<4xf64>
      }} else {{{lanes}
        scf.yield %p3 : vector<4xf64>
      }}
      %xv = scf.if %whole -> (vector<4xf64>) {{
        %v = vector.load %x[%k] : memref<{k}xf64>, vector<4xf64>
        scf.yield %v : vector<4xf64>
      }} else {{
        %v = vector.transfer_read %x[%k], %zero : memref<{k}xf64>, vector<4xf64>
        scf.yield %v : vector<4xf64>
      }}
      %g = arith.divui %step, %c2 : index
      %scale = memref.load %s[%row, %g] : memref<{ROWS}x{groups}xf64>
      %prod = arith.mulf %wv, %xv : vector<4xf64>
      %dot = vector.reduction <add>, %prod : vector<4xf64> into f64
      %scaled = arith.mulf %dot, %scale : f64
      %next = arith.addf %acc, %scaled : f64
      scf.yield %next : f64
    }}
    memref.store %sum, %out[%row] : memref<{ROWS}xf64>
  }}
  return
}}
"""


def _run(k: int, prefetch: bool, arrays: list[np.ndarray]) -> tuple[np.ndarray, str]:
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(_kernel(k))
        if prefetch:
            PrefetchLoopLoads().run(module)
            module.operation.verify()
        text = str(module)
        PassManager.parse(
            "builtin.module(convert-vector-to-scf,convert-scf-to-cf,lower-affine,"
            "convert-vector-to-llvm,expand-strided-metadata,finalize-memref-to-llvm,"
            "convert-arith-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
            "reconcile-unrealized-casts)").run(module.operation)
        engine = ExecutionEngine(module, opt_level=0)
        out = np.full(ROWS, np.nan)
        descriptors = [get_ranked_memref_descriptor(array) for array in [*arrays, out]]
        engine.invoke("gemv", *(ctypes.pointer(ctypes.pointer(d)) for d in descriptors))
        return out, text


@pytest.mark.parametrize("k", [16, 17, 18, 19, 22])
def test_prefetched_loop_computes_the_reference(k: int) -> None:
    rng = np.random.default_rng(k)
    steps = -(-k // STEP)
    w, x = rng.standard_normal((ROWS, k)), rng.standard_normal(k)
    scales = rng.uniform(0.5, 2.0, (ROWS, -(-steps // 2)))
    expected = (w * x * np.repeat(scales, 2 * STEP, axis=1)[:, :k]).sum(axis=1)
    plain, _ = _run(k, False, [w, x, scales])
    prefetched, text = _run(k, True, [w, x, scales])
    assert "arith.minsi" in text and text.count("vector.load") == 4  # before and in the loop
    assert "-> (f64, vector<4xf64>, vector<4xf64>, f64)" in text
    np.testing.assert_allclose(plain, expected, rtol=1e-12)
    np.testing.assert_allclose(prefetched, expected, rtol=1e-12)
