// RUN: tilec-opt --split-input-file --verify-diagnostics --finalize-memref-to-llvm %s
// RUN: tilec-opt --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(convert-to-llvm)' %s
// A memref still in one of tile's memory spaces (a string attribute) is an error at its op
// before an upstream pass lowers memrefs to LLVM: MLIR's type converter would report it with
// an error it does not fail on, and the bindings abort the process on such an error.

// expected-error @+1 {{memory space "fragment"}}
func.func @fragment_argument(%m: memref<16xf32, "fragment">) -> f32 {
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<16xf32, "fragment">
  return %v : f32
}

// -----

func.func @shared_alloca() -> f32 {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{memref.alloca has a memref in tile's memory space "shared"}}
  %m = memref.alloca() : memref<16xf32, "shared">
  %v = memref.load %m[%c0] : memref<16xf32, "shared">
  return %v : f32
}

// -----

// Numbered address spaces (what tile's lowering leaves) lower as before.
func.func @address_space(%m: memref<16xf32, 3>) -> f32 {
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<16xf32, 3>
  return %v : f32
}
