// RUN: not tilec-opt %s --no-such-pass 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: not tilec-opt %s --pass-pipeline='builtin.module(bogus)' 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: not tilec-opt %s.missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: tilec-opt --list-passes | FileCheck %s --check-prefix=LIST
// RUN: tilec-opt < %s | FileCheck %s --check-prefix=STDIN
// Bad usage is reported in one line with a non-zero status, never a traceback.

// PASS: tilec-opt: unknown pass or bad pipeline 'no-such-pass'
// PASS-NOT: Traceback
// PIPELINE: tilec-opt: unknown pass or bad pipeline 'builtin.module(bogus)'
// MISSING: tilec-opt: cannot read {{.*}}bad-usage.mlir.missing: No such file or directory
// LIST-DAG: --lower-tile-ops-to-loops
// LIST-DAG: --lower-tile-structure-to-scf
// LIST-DAG: --prepare-cpu-entry
// LIST-DAG: --expand-narrow-float-conversions
// STDIN: func.func @f
func.func @f() {
  return
}
