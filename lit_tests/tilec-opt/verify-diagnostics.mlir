// RUN: tilec-opt --split-input-file --verify-diagnostics %s
// RUN: not tilec-opt --split-input-file %s 2>&1 | FileCheck %s
// Expectations match by line (@+N, @-N, @above, @below or the same line) and substring.
// Without --verify-diagnostics the errors are printed with the file's own line numbers.

// CHECK: verify-diagnostics.mlir:[[# @LINE + 3]]: error: 'tile.kernel' op a block has at most 1024 threads, got 2048
func.func @next_line(%n: index) {
  // expected-error @+1 {{at most 1024 threads}}
  tile.kernel grid(%n) threads [2048] {
  ^bb0(%bx: index):
  }
  return
}

// -----

// CHECK: verify-diagnostics.mlir:[[# @LINE + 2]]: error: 'tile.kernel' op thread counts must be positive
func.func @previous_line(%n: index) {
  tile.kernel grid(%n) threads [0] {
  // expected-error @-1 {{thread counts must be positive}}
  ^bb0(%bx: index):
  }
  return
}

// -----

// CHECK: verify-diagnostics.mlir:[[# @LINE + 3]]: error: 'tile.kernel' op needs one to three grid dimensions, got 0
func.func @below() {
  // expected-error @below {{needs one to three grid dimensions}}
  tile.kernel grid() threads [32] {
  }
  return
}

// -----

// Parse errors are diagnostics too.
// CHECK: verify-diagnostics.mlir:[[# @LINE + 2]]: error: use of undeclared SSA value name
func.func @parse_error() {
  %x = arith.addi %nope, %nope : i32 // expected-error {{use of undeclared SSA value name}}
  return
}
