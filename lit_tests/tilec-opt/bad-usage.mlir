// RUN: not tilec-opt %s --no-such-pass 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: not tilec-opt %s --pass-pipeline='builtin.module(bogus)' 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: not tilec-opt %s.missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not tilec-opt %s --run-target tpu 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not tilec-opt %s --run-target cpu --stop-after ptx 2>&1 | FileCheck %s --check-prefix=STAGE
// RUN: not tilec-opt %s --stop-after llvm 2>&1 | FileCheck %s --check-prefix=ALONE
// RUN: not tilec-opt %s --run-target cuda:sm_90a 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: tilec-opt --list-passes | FileCheck %s --check-prefix=LIST
// RUN: tilec-opt < %s | FileCheck %s --check-prefix=STDIN
// Bad usage is reported in one line with a non-zero status, never a traceback.

// PASS: tilec-opt: unknown pass or bad pipeline 'no-such-pass'
// PASS-NOT: Traceback
// PIPELINE: tilec-opt: unknown pass or bad pipeline 'builtin.module(bogus)'
// TARGET: tilec-opt: --run-target tpu: unknown target 'tpu'
// STAGE: tilec-opt: --stop-after ptx is not a stage of cpu; its stages: loops, llvm, llvmir, asm
// ALONE: tilec-opt: --stop-after llvm needs --run-target
// ENTRY: error: expected one func.func with `tile.entry`, found 0
// ENTRY-NOT: Traceback
// MISSING: tilec-opt: cannot read {{.*}}bad-usage.mlir.missing: No such file or directory
// LIST-DAG: --lower-tile-ops-to-loops
// LIST-DAG: --lower-tile-structure-to-scf
// LIST-DAG: --prepare-cpu-entry
// LIST-DAG: --expand-narrow-float-conversions
// STDIN: func.func @f
func.func @f() {
  return
}
