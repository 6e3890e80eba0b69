// RUN: tilec-opt --mask-scores-after-gemm --split-input-file %s | FileCheck %s
// mask-scores-after-gemm (where the rotation runs, module attribute
// tile.rotate_attention_loop): a T.Parallel right before a gemm that initialises the whole
// accumulator to 0 or -inf at each point (TileLang's causal and ragged masks) becomes a mask
// applied after the gemm, which now clears: select(c, S[i, j], -inf). Other initialisations,
// gemms that clear already, and modules without the attribute are left alone.

// CHECK-LABEL: func.func @causal_mask
// CHECK: tile.copy
// CHECK-NEXT: tile.gemm %{{.*}}, %{{.*}}, %[[S:[0-9a-z]+]] {clear_accum = true, transpose_b = true}
// CHECK-NEXT: tile.parallel [64, 32] {
// CHECK-NEXT: ^bb0(%[[I:.*]]: index, %[[J:.*]]: index):
// CHECK: %[[KEEP:.*]] = arith.cmpi sge
// CHECK-NEXT: %[[X:.*]] = memref.load %[[S]][%[[I]], %[[J]]] : memref<64x32xf32, "fragment">
// CHECK-NEXT: %[[M:.*]] = arith.select %[[KEEP]], %[[X]], %{{.*}} : f32
// CHECK-NEXT: memref.store %[[M]], %[[S]][%[[I]], %[[J]]]
// CHECK: tile.reduce "max" %[[S]]
module attributes {tile.rotate_attention_loop} {
  func.func @causal_mask(%K: memref<256x64xf16>, %n: index) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    tile.kernel grid(%c1) threads [128] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<64x64xf16, "shared">
      %ks = tile.alloc : memref<32x64xf16, "shared">
      %s = tile.alloc : memref<64x32xf32, "fragment">
      %m = tile.alloc : memref<64xf32, "fragment">
      tile.pipelined %c0 to %n step %c1 stages 2 {
      ^bb0(%k: index):
        %row = arith.muli %k, %c32 : index
        tile.copy %K[%row, %c0] [32, 64] to %ks[%c0, %c0] [32, 64] : memref<256x64xf16> to memref<32x64xf16, "shared">
        tile.parallel [64, 32] {
        ^bb0(%i: index, %j: index):
          %key = arith.addi %row, %j : index
          %keep = arith.cmpi sge, %i, %key : index
          %init = arith.select %keep, %zero, %ninf : f32
          memref.store %init, %s[%i, %j] : memref<64x32xf32, "fragment">
        }
        tile.gemm %qs, %ks, %s {transpose_b = true} : memref<64x64xf16, "shared">, memref<32x64xf16, "shared">, memref<64x32xf32, "fragment">
        tile.reduce "max" %s to %m dim 1 {clear = false} : memref<64x32xf32, "fragment"> to memref<64xf32, "fragment">
      }
    }
    return
  }
}

// -----

// The select's arms the other way round (TileLang's ragged mask: -inf past the sequence).
// CHECK-LABEL: func.func @ragged_mask
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %[[S:[0-9a-z]+]] {clear_accum = true, transpose_b = true}
// CHECK-NEXT: tile.parallel [64, 32] {
// CHECK: %[[PAST:.*]] = arith.cmpi sge
// CHECK-NEXT: %[[X:.*]] = memref.load %[[S]]
// CHECK-NEXT: arith.select %[[PAST]], %{{.*}}, %[[X]] : f32
module attributes {tile.rotate_attention_loop} {
  func.func @ragged_mask(%len: index) attributes {tile.entry} {
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    tile.kernel grid(%c1) threads [128] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<64x64xf16, "shared">
      %ks = tile.alloc : memref<32x64xf16, "shared">
      %s = tile.alloc : memref<64x32xf32, "fragment">
      tile.parallel [64, 32] {
      ^bb0(%i: index, %j: index):
        %past = arith.cmpi sge, %j, %len : index
        %init = arith.select %past, %ninf, %zero : f32
        memref.store %init, %s[%i, %j] : memref<64x32xf32, "fragment">
      }
      tile.gemm %qs, %ks, %s {transpose_b = true} : memref<64x64xf16, "shared">, memref<32x64xf16, "shared">, memref<64x32xf32, "fragment">
    }
    return
  }
}

// -----

// Left alone: an initial value other than 0 (1.0 + Q K^T is not a mask of Q K^T), a
// store at another point than the parallel's own, a parallel that reads a buffer, a gemm
// that clears already, and a parallel that is not right before the gemm.
// CHECK-LABEL: func.func @not_masks
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: tile.gemm %{{.*}} {transpose_b = true}
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[J:.*]], %[[I:.*]]]
// CHECK-NEXT: }
// CHECK-NEXT: tile.gemm %{{.*}} {transpose_b = true}
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<32xf32, "fragment">
// CHECK: tile.gemm %{{.*}} {transpose_b = true}
// CHECK: tile.gemm %{{.*}} {clear_accum = true, transpose_b = true}
// CHECK: tile.fill
// CHECK-NEXT: tile.gemm %{{.*}} {transpose_b = true}
// CHECK-NOT: clear_accum
module attributes {tile.rotate_attention_loop} {
  func.func @not_masks(%len: index) attributes {tile.entry} {
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %one = arith.constant 1.0 : f32
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    tile.kernel grid(%c1) threads [128] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<32x64xf16, "shared">
      %ks = tile.alloc : memref<32x64xf16, "shared">
      %s = tile.alloc : memref<32x32xf32, "fragment">
      %bias = tile.alloc : memref<32xf32, "fragment">
      tile.parallel [32, 32] {
      ^bb0(%i: index, %j: index):
        %past = arith.cmpi sge, %j, %len : index
        %init = arith.select %past, %ninf, %one : f32
        memref.store %init, %s[%i, %j] : memref<32x32xf32, "fragment">
      }
      tile.gemm %qs, %ks, %s {transpose_b = true} : memref<32x64xf16, "shared">, memref<32x64xf16, "shared">, memref<32x32xf32, "fragment">
      tile.parallel [32, 32] {
      ^bb0(%i: index, %j: index):
        %past = arith.cmpi sge, %j, %len : index
        %init = arith.select %past, %ninf, %zero : f32
        memref.store %init, %s[%j, %i] : memref<32x32xf32, "fragment">
      }
      tile.gemm %qs, %ks, %s {transpose_b = true} : memref<32x64xf16, "shared">, memref<32x64xf16, "shared">, memref<32x32xf32, "fragment">
      tile.parallel [32, 32] {
      ^bb0(%i: index, %j: index):
        %b = memref.load %bias[%j] : memref<32xf32, "fragment">
        %past = arith.cmpf oge, %b, %zero : f32
        %init = arith.select %past, %ninf, %zero : f32
        memref.store %init, %s[%i, %j] : memref<32x32xf32, "fragment">
      }
      tile.gemm %qs, %ks, %s {transpose_b = true} : memref<32x64xf16, "shared">, memref<32x64xf16, "shared">, memref<32x32xf32, "fragment">
      tile.parallel [32, 32] {
      ^bb0(%i: index, %j: index):
        %past = arith.cmpi sge, %j, %len : index
        %init = arith.select %past, %ninf, %zero : f32
        memref.store %init, %s[%i, %j] : memref<32x32xf32, "fragment">
      }
      tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true} : memref<32x64xf16, "shared">, memref<32x64xf16, "shared">, memref<32x32xf32, "fragment">
      tile.parallel [32, 32] {
      ^bb0(%i: index, %j: index):
        %past = arith.cmpi sge, %j, %len : index
        %init = arith.select %past, %ninf, %zero : f32
        memref.store %init, %s[%i, %j] : memref<32x32xf32, "fragment">
      }
      tile.fill %bias, %zero : memref<32xf32, "fragment">, f32
      tile.gemm %qs, %ks, %s {transpose_b = true} : memref<32x64xf16, "shared">, memref<32x64xf16, "shared">, memref<32x32xf32, "fragment">
    }
    return
  }
}

// -----

// Without the module attribute the pass changes nothing.
// CHECK-LABEL: func.func @not_opted_in
// CHECK: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: tile.gemm %{{.*}} {transpose_b = true}
module {
  func.func @not_opted_in(%len: index) attributes {tile.entry} {
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    %ninf = arith.constant 0xFF800000 : f32
    tile.kernel grid(%c1) threads [128] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<32x64xf16, "shared">
      %ks = tile.alloc : memref<32x64xf16, "shared">
      %s = tile.alloc : memref<32x32xf32, "fragment">
      tile.parallel [32, 32] {
      ^bb0(%i: index, %j: index):
        %past = arith.cmpi sge, %j, %len : index
        %init = arith.select %past, %ninf, %zero : f32
        memref.store %init, %s[%i, %j] : memref<32x32xf32, "fragment">
      }
      tile.gemm %qs, %ks, %s {transpose_b = true} : memref<32x64xf16, "shared">, memref<32x64xf16, "shared">, memref<32x32xf32, "fragment">
    }
    return
  }
}

// -----

// -inf as the frontend writes it before canonicalization: negf of +inf.
// CHECK-LABEL: func.func @negated_infinity
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %[[S:[0-9a-z]+]] {clear_accum = true, transpose_b = true}
// CHECK-NEXT: tile.parallel [32, 32] {
// CHECK: %[[X:.*]] = memref.load %[[S]]
// CHECK-NEXT: arith.select %{{.*}}, %{{.*}}, %[[X]] : f32
module attributes {tile.rotate_attention_loop} {
  func.func @negated_infinity(%len: index) attributes {tile.entry} {
    %c1 = arith.constant 1 : index
    tile.kernel grid(%c1) threads [128] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<32x64xf16, "shared">
      %ks = tile.alloc : memref<32x64xf16, "shared">
      %s = tile.alloc : memref<32x32xf32, "fragment">
      tile.parallel [32, 32] {
      ^bb0(%i: index, %j: index):
        %past = arith.cmpi sge, %j, %len : index
        %inf = arith.constant 0x7F800000 : f32
        %ninf = arith.negf %inf : f32
        %zero = arith.constant 0.0 : f32
        %init = arith.select %past, %ninf, %zero : f32
        memref.store %init, %s[%i, %j] : memref<32x32xf32, "fragment">
      }
      tile.gemm %qs, %ks, %s {transpose_b = true} : memref<32x64xf16, "shared">, memref<32x64xf16, "shared">, memref<32x32xf32, "fragment">
    }
    return
  }
}
