// RUN: not tilec-opt --verify-diagnostics %s 2>&1 | FileCheck %s
// An expectation nothing produced and a diagnostic nothing expected both fail the run.

// CHECK-DAG: verify-diagnostics-unmet.mlir:[[# @LINE + 4]]: error: unexpected error: 'tile.kernel' op a block has at most 1024 threads, got 4096
// CHECK-DAG: verify-diagnostics-unmet.mlir:[[# @LINE + 1]]: error: expected error "at most 64 threads" was not produced
// expected-error @+1 {{at most 64 threads}}
func.func @wrong_line(%n: index) {
  tile.kernel grid(%n) threads [4096] {
  ^bb0(%bx: index):
  }
  return
}
