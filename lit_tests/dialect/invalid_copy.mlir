// RUN: tilec-opt %s --split-input-file --verify-diagnostics
// Every verifier error of tile.copy.

func.func @source_offsets(%a: memref<64x64xf32>, %n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<16x16xf32, "shared">
    // expected-error @+1 {{source takes 2 offsets, got 1}}
    tile.copy %a[%bx] [16, 16] to %s[%bx, %bx] [16, 16] : memref<64x64xf32> to memref<16x16xf32, "shared">
  }
  return
}

// -----

func.func @destination_offsets(%a: memref<64x64xf32>, %n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<16x16xf32, "shared">
    // expected-error @+1 {{destination takes 2 offsets, got 3}}
    tile.copy %a[%bx, %bx] [16, 16] to %s[%bx, %bx, %bx] [16, 16] : memref<64x64xf32> to memref<16x16xf32, "shared">
  }
  return
}

// -----

func.func @box_rank(%a: memref<64x64xf32>, %n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<16x16xf32, "shared">
    // expected-error @+1 {{box ranks must match the buffers' ranks}}
    tile.copy %a[%bx, %bx] [16, 16, 1] to %s[%bx, %bx] [16, 16] : memref<64x64xf32> to memref<16x16xf32, "shared">
  }
  return
}

// -----

func.func @empty_box(%a: memref<64x64xf32>, %n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<16x16xf32, "shared">
    // expected-error @+1 {{box extents must be positive}}
    tile.copy %a[%bx, %bx] [0, 16] to %s[%bx, %bx] [0, 16] : memref<64x64xf32> to memref<16x16xf32, "shared">
  }
  return
}

// -----

func.func @shape_mismatch(%a: memref<64x64xf32>, %n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<16x16xf32, "shared">
    // expected-error @+1 {{copies a box of shape (16, 8) into a box of shape (16, 16)}}
    tile.copy %a[%bx, %bx] [16, 8] to %s[%bx, %bx] [16, 16] : memref<64x64xf32> to memref<16x16xf32, "shared">
  }
  return
}

// -----

func.func @dtype_mismatch(%a: memref<64x64xf16>, %n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<16x16xf32, "shared">
    // expected-error @+1 {{source element type 'f16' differs from destination element type 'f32'}}
    tile.copy %a[%bx, %bx] [16, 16] to %s[%bx, %bx] [16, 16] : memref<64x64xf16> to memref<16x16xf32, "shared">
  }
  return
}

// -----

func.func @box_too_big(%a: memref<64x64xf32>, %n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<16x16xf32, "shared">
    // expected-error @+1 {{box (32, 16) exceeds the shared buffer of shape (16, 16)}}
    tile.copy %a[%bx, %bx] [32, 16] to %s[%bx, %bx] [32, 16] : memref<64x64xf32> to memref<16x16xf32, "shared">
  }
  return
}

// -----

func.func @outside_kernel(%a: memref<64xf32>, %b: memref<64xf32>, %i: index) {
  // expected-error @+1 {{must be inside a tile.kernel}}
  tile.copy %a[%i] [64] to %b[%i] [64] : memref<64xf32> to memref<64xf32>
  return
}
