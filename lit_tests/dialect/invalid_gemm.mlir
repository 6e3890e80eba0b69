// RUN: tilec-opt %s --split-input-file --verify-diagnostics
// Every verifier error of tile.gemm.

func.func @rank(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    // expected-error @+1 {{operands must be 2-d buffers}}
    tile.gemm %a, %b, %c : memref<64xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
  }
  return
}

// -----

func.func @global_a(%a: memref<64x32xf16>, %n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %b = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    // expected-error @+1 {{A must be a shared or fragment buffer, not global}}
    tile.gemm %a, %b, %c : memref<64x32xf16>, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
  }
  return
}

// -----

func.func @var_b(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<1x1xf16, "shared">
    %b = tile.alloc : memref<1x1xf16, "var">
    %c = tile.alloc : memref<1x1xf32, "fragment">
    // expected-error @+1 {{B must be a shared or fragment buffer, not var}}
    tile.gemm %a, %b, %c : memref<1x1xf16, "shared">, memref<1x1xf16, "var">, memref<1x1xf32, "fragment">
  }
  return
}

// -----

func.func @shared_c(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "shared">
    // expected-error @+1 {{C must be a fragment buffer, not shared}}
    tile.gemm %a, %b, %c : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "shared">
  }
  return
}

// -----

func.func @k_mismatch(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<16x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    // expected-error @+1 {{K of A (32) differs from K of B (16)}}
    tile.gemm %a, %b, %c : memref<64x32xf16, "shared">, memref<16x64xf16, "shared">, memref<64x64xf32, "fragment">
  }
  return
}

// -----

func.func @k_mismatch_transposed(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x32xf32, "fragment">
    // expected-error @+1 {{K of A (32) differs from K of B (64)}}
    tile.gemm %a, %b, %c {transpose_b = true} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x32xf32, "fragment">
  }
  return
}

// -----

func.func @c_shape(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x32xf32, "fragment">
    // expected-error @+1 {{C has shape (64, 32) but A x B is (64, 64)}}
    tile.gemm %a, %b, %c : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x32xf32, "fragment">
  }
  return
}

// -----

func.func @ab_dtypes(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xbf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    // expected-error @+1 {{A and B element types differ: 'f16' vs 'bf16'}}
    tile.gemm %a, %b, %c : memref<64x32xf16, "shared">, memref<32x64xbf16, "shared">, memref<64x64xf32, "fragment">
  }
  return
}

// -----

func.func @policy(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<64x32xf16, "shared">
    %b = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    // expected-error @+1 {{unknown warp policy 'diagonal'}}
    tile.gemm %a, %b, %c {policy = "diagonal"} : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
  }
  return
}
