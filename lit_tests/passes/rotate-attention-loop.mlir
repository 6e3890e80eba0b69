// RUN: tilec-opt --rotate-attention-loop --split-input-file %s | FileCheck %s
// rotate-attention-loop (where the module carries tile.rotate_attention_loop: the CUDA
// target's default on sm_90a under fast math, TILEC_ROTATE_ATTENTION_LOOP=1): attention's
// loop (copy K, S = Q K^T, softmax writing P and O, copy V, O += P V) runs one iteration more,
// iteration k issuing key tile k's Q K^T (its copy's corner clamped to the last tile) and then
// tile k - 1's P V (its copy's corner clamped to the first), the softmax of tile k under
// k < n after both, in two branches: its statements before the first touching P or O, and
// the rest (lower-tile-to-gpu waits for P V at the second's start); P is cleared first, and
// both gemms are marked tile.deferred_wait (their wgmma groups waited for where S, O and P are
// read). Loops of another shape are left alone.

// CHECK-LABEL: func.func @rotated
// CHECK: tile.fill %[[P:[0-9]+]], %{{.*}} : memref<64x32xf16, "fragment">, f16
// CHECK: %[[RAN:[0-9]+]] = arith.cmpi sgt, %[[N:arg[0-9]+]], %[[C0:c0]] : index
// CHECK: %[[MORE:[0-9]+]] = arith.addi %[[N]], %[[C1:c1]] : index
// CHECK: %[[UPPER:[0-9]+]] = arith.select %[[RAN]], %[[MORE]], %[[N]] : index
// CHECK: tile.pipelined %[[C0]] to %[[UPPER]] step %[[C1]] stages 2 {
// CHECK-NEXT: ^bb0(%[[K:arg[0-9]+]]: index):
// CHECK-NEXT: %[[LAST:.*]] = arith.subi %[[N]], %[[C1]] : index
// CHECK-NEXT: %[[CURRENT:.*]] = arith.minsi %[[K]], %[[LAST]] : index
// CHECK-NEXT: %[[BACK:.*]] = arith.subi %[[K]], %[[C1]] : index
// CHECK-NEXT: %[[PREVIOUS:.*]] = arith.maxsi %[[BACK]], %[[C0]] : index
// CHECK-NEXT: %[[ACTIVE:.*]] = arith.cmpi slt, %[[K]], %[[N]] : index
// CHECK-NEXT: %[[KROW:.*]] = arith.muli %[[CURRENT]], %{{.*}} : index
// CHECK-NEXT: tile.copy %{{.*}}[%[[KROW]], %{{.*}}] [32, 64] to %[[KS:[0-9]+]][
// CHECK-NEXT: tile.gemm %{{.*}}, %[[KS]], %[[S:[0-9]+]] {clear_accum = true, tile.deferred_wait, transpose_b = true}
// CHECK-NEXT: %[[VROW:.*]] = arith.muli %[[PREVIOUS]], %{{.*}} : index
// CHECK-NEXT: tile.copy %{{.*}}[%[[VROW]], %{{.*}}] [32, 64] to %[[VS:[0-9]+]][
// CHECK-NEXT: tile.gemm %[[P]], %[[VS]], %[[O:[0-9]+]] {tile.deferred_wait}
// CHECK-NEXT: scf.if %[[ACTIVE]] {
// CHECK-NEXT: tile.reduce "max" %[[S]]
// CHECK-NEXT: {{^ *[}]$}}
// CHECK-NEXT: scf.if %[[ACTIVE]] {
// CHECK-NEXT: tile.parallel [64, 32]
// CHECK: memref.store %{{.*}}, %[[P]]
// CHECK: tile.parallel [64, 64]
// CHECK: memref.store %{{.*}}, %[[O]]
// CHECK-NOT: tile.gemm
// CHECK: return
module attributes {tile.rotate_attention_loop} {
  func.func @rotated(%K: memref<256x64xf16>, %V: memref<256x64xf16>, %n: index) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    tile.kernel grid(%c1) threads [128] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<64x64xf16, "shared">
      %ks = tile.alloc : memref<32x64xf16, "shared">
      %vs = tile.alloc : memref<32x64xf16, "shared">
      %s = tile.alloc : memref<64x32xf32, "fragment">
      %p = tile.alloc : memref<64x32xf16, "fragment">
      %o = tile.alloc : memref<64x64xf32, "fragment">
      %m = tile.alloc : memref<64xf32, "fragment">
      tile.pipelined %c0 to %n step %c1 stages 2 {
      ^bb0(%k: index):
        %row = arith.muli %k, %c32 : index
        tile.copy %K[%row, %c0] [32, 64] to %ks[%c0, %c0] [32, 64] : memref<256x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true} : memref<64x64xf16, "shared">, memref<32x64xf16, "shared">, memref<64x32xf32, "fragment">
        tile.reduce "max" %s to %m dim 1 {clear = false} : memref<64x32xf32, "fragment"> to memref<64xf32, "fragment">
        tile.parallel [64, 32] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<64x32xf32, "fragment">
          %mx = memref.load %m[%i] : memref<64xf32, "fragment">
          %d = arith.subf %x, %mx : f32
          %e = math.exp2 %d : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<64x32xf16, "fragment">
        }
        tile.parallel [64, 64] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %o[%i, %j] : memref<64x64xf32, "fragment">
          %mx = memref.load %m[%i] : memref<64xf32, "fragment">
          %y = arith.mulf %x, %mx : f32
          memref.store %y, %o[%i, %j] : memref<64x64xf32, "fragment">
        }
        %vrow = arith.muli %k, %c32 : index
        tile.copy %V[%vrow, %c0] [32, 64] to %vs[%c0, %c0] [32, 64] : memref<256x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %p, %vs, %o : memref<64x32xf16, "fragment">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
    }
    return
  }
}

// -----

// P written through a temporary fragment (T.copy(scores, probs) with a cast): the second
// branch begins at the temporary's allocation, which the copy into P uses, so the conversion
// into it runs after P V's wait, with the copy.
// CHECK-LABEL: func.func @through_a_temporary
// CHECK: tile.gemm %{{.*}} {tile.deferred_wait}
// CHECK-NEXT: scf.if %[[ACTIVE:.*]] {
// CHECK-NEXT: tile.reduce "max"
// CHECK-NEXT: {{^ *[}]$}}
// CHECK-NEXT: scf.if %[[ACTIVE]] {
// CHECK-NEXT: %[[T:.*]] = tile.alloc : memref<64x32xf16, "fragment">
// CHECK-NEXT: tile.parallel [64, 32]
// CHECK: tile.copy %[[T]]
// CHECK: tile.parallel [64, 64]
module attributes {tile.rotate_attention_loop} {
  func.func @through_a_temporary(%K: memref<256x64xf16>, %V: memref<256x64xf16>, %n: index) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    tile.kernel grid(%c1) threads [128] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<64x64xf16, "shared">
      %ks = tile.alloc : memref<32x64xf16, "shared">
      %vs = tile.alloc : memref<32x64xf16, "shared">
      %s = tile.alloc : memref<64x32xf32, "fragment">
      %p = tile.alloc : memref<64x32xf16, "fragment">
      %o = tile.alloc : memref<64x64xf32, "fragment">
      %m = tile.alloc : memref<64xf32, "fragment">
      tile.pipelined %c0 to %n step %c1 stages 2 {
      ^bb0(%k: index):
        %row = arith.muli %k, %c32 : index
        tile.copy %K[%row, %c0] [32, 64] to %ks[%c0, %c0] [32, 64] : memref<256x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true} : memref<64x64xf16, "shared">, memref<32x64xf16, "shared">, memref<64x32xf32, "fragment">
        tile.reduce "max" %s to %m dim 1 {clear = false} : memref<64x32xf32, "fragment"> to memref<64xf32, "fragment">
        %t = tile.alloc : memref<64x32xf16, "fragment">
        tile.parallel [64, 32] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<64x32xf32, "fragment">
          %mx = memref.load %m[%i] : memref<64xf32, "fragment">
          %d = arith.subf %x, %mx : f32
          %e = math.exp2 %d : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %t[%i, %j] : memref<64x32xf16, "fragment">
        }
        tile.copy %t[%c0, %c0] [64, 32] to %p[%c0, %c0] [64, 32] : memref<64x32xf16, "fragment"> to memref<64x32xf16, "fragment">
        tile.parallel [64, 64] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %o[%i, %j] : memref<64x64xf32, "fragment">
          %mx = memref.load %m[%i] : memref<64xf32, "fragment">
          %y = arith.mulf %x, %mx : f32
          memref.store %y, %o[%i, %j] : memref<64x64xf32, "fragment">
        }
        %vrow = arith.muli %k, %c32 : index
        tile.copy %V[%vrow, %c0] [32, 64] to %vs[%c0, %c0] [32, 64] : memref<256x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %p, %vs, %o : memref<64x32xf16, "fragment">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
    }
    return
  }
}

// -----

// Without the module attribute the pass changes nothing.
// CHECK-LABEL: func.func @not_opted_in
// CHECK: tile.pipelined %{{.*}} to %[[N:[^ ]*]] step
// CHECK-NOT: arith.minsi
// CHECK-NOT: tile.deferred_wait
module {
  func.func @not_opted_in(%K: memref<256x64xf16>, %V: memref<256x64xf16>, %n: index) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    tile.kernel grid(%c1) threads [128] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<64x64xf16, "shared">
      %ks = tile.alloc : memref<32x64xf16, "shared">
      %vs = tile.alloc : memref<32x64xf16, "shared">
      %s = tile.alloc : memref<64x32xf32, "fragment">
      %p = tile.alloc : memref<64x32xf16, "fragment">
      %o = tile.alloc : memref<64x64xf32, "fragment">
      tile.pipelined %c0 to %n step %c1 stages 2 {
      ^bb0(%k: index):
        %row = arith.muli %k, %c32 : index
        tile.copy %K[%row, %c0] [32, 64] to %ks[%c0, %c0] [32, 64] : memref<256x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true} : memref<64x64xf16, "shared">, memref<32x64xf16, "shared">, memref<64x32xf32, "fragment">
        tile.parallel [64, 32] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<64x32xf32, "fragment">
          %h = arith.truncf %x : f32 to f16
          memref.store %h, %p[%i, %j] : memref<64x32xf16, "fragment">
        }
        tile.copy %V[%row, %c0] [32, 64] to %vs[%c0, %c0] [32, 64] : memref<256x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %p, %vs, %o : memref<64x32xf16, "fragment">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
    }
    return
  }
}

// -----

// Left alone: the softmax reads the V tile (it would see tile k - 1's), and, in the second
// loop, S is read after the loop (the extra iteration leaves other scores in it).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: arith.minsi
// CHECK-NOT: tile.deferred_wait
module attributes {tile.rotate_attention_loop} {
  func.func @left_alone(%K: memref<256x64xf16>, %V: memref<256x64xf16>, %out: memref<64x32xf32>, %n: index) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    tile.kernel grid(%c1) threads [128] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<64x64xf16, "shared">
      %ks = tile.alloc : memref<32x64xf16, "shared">
      %vs = tile.alloc : memref<32x64xf16, "shared">
      %s = tile.alloc : memref<64x32xf32, "fragment">
      %p = tile.alloc : memref<64x32xf16, "fragment">
      %o = tile.alloc : memref<64x64xf32, "fragment">
      %m = tile.alloc : memref<32xf16, "fragment">
      %s2 = tile.alloc : memref<64x32xf32, "fragment">
      tile.pipelined %c0 to %n step %c1 stages 2 {
      ^bb0(%k: index):
        %row = arith.muli %k, %c32 : index
        tile.copy %K[%row, %c0] [32, 64] to %ks[%c0, %c0] [32, 64] : memref<256x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true} : memref<64x64xf16, "shared">, memref<32x64xf16, "shared">, memref<64x32xf32, "fragment">
        tile.parallel [64, 32] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<64x32xf32, "fragment">
          %h = arith.truncf %x : f32 to f16
          memref.store %h, %p[%i, %j] : memref<64x32xf16, "fragment">
        }
        tile.copy %V[%row, %c0] [32, 64] to %vs[%c0, %c0] [32, 64] : memref<256x64xf16> to memref<32x64xf16, "shared">
        tile.reduce "max" %vs to %m dim 1 : memref<32x64xf16, "shared"> to memref<32xf16, "fragment">
        tile.gemm %p, %vs, %o : memref<64x32xf16, "fragment">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      tile.pipelined %c0 to %n step %c1 stages 2 {
      ^bb0(%k: index):
        %row = arith.muli %k, %c32 : index
        tile.copy %K[%row, %c0] [32, 64] to %ks[%c0, %c0] [32, 64] : memref<256x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %qs, %ks, %s2 {clear_accum = true, transpose_b = true} : memref<64x64xf16, "shared">, memref<32x64xf16, "shared">, memref<64x32xf32, "fragment">
        tile.parallel [64, 32] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s2[%i, %j] : memref<64x32xf32, "fragment">
          %h = arith.truncf %x : f32 to f16
          memref.store %h, %p[%i, %j] : memref<64x32xf16, "fragment">
        }
        tile.copy %V[%row, %c0] [32, 64] to %vs[%c0, %c0] [32, 64] : memref<256x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %p, %vs, %o : memref<64x32xf16, "fragment">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      tile.copy %s2[%c0, %c0] [64, 32] to %out[%c0, %c0] [64, 32] : memref<64x32xf32, "fragment"> to memref<64x32xf32>
    }
    return
  }
}

// -----

// With tile.rescale_under_qk (TILEC_RESCALE_UNDER_QK=1) O's rescale, a softmax statement
// touching O and neither P nor S, on buffers nothing else up to the next Q K^T writes, runs
// one iteration later, under k > 0 right after Q K^T (the wgmmas of tile k's scores in flight;
// P V of tile k - 1, waited for at the previous body's end, has finished): the scale of tile
// k - 1 applied before P V adds tile k - 1's products, as before; the k < n branch after P V
// keeps the conversion into P alone. In the second function the rescale also reads a value
// the body computes from k (it would see the next tile's): it stays.
// CHECK-LABEL: func.func @rescale_under_qk
// CHECK: tile.pipelined %[[C0:c0]] to %{{.*}} step %[[C1:c1]] stages 2 {
// CHECK-NEXT: ^bb0(%[[K:arg[0-9]+]]: index):
// CHECK: %[[ACTIVE:.*]] = arith.cmpi slt, %[[K]], %{{.*}} : index
// CHECK-NEXT: %[[LATER:.*]] = arith.cmpi sgt, %[[K]], %[[C0]] : index
// CHECK: tile.gemm %{{.*}}, %{{.*}}, %[[S:[0-9]+]] {clear_accum = true, tile.deferred_wait, transpose_b = true}
// CHECK-NEXT: scf.if %[[LATER]] {
// CHECK-NEXT: tile.parallel [64, 64]
// CHECK: memref.store %{{.*}}, %[[O:[0-9]+]]
// CHECK: tile.copy
// CHECK-NEXT: tile.gemm %[[P:[0-9]+]], %{{.*}}, %[[O]] {tile.deferred_wait}
// CHECK-NEXT: scf.if %[[ACTIVE]] {
// CHECK-NEXT: tile.reduce "max" %[[S]]
// CHECK-NEXT: {{^ *[}]$}}
// CHECK-NEXT: scf.if %[[ACTIVE]] {
// CHECK-NEXT: tile.parallel [64, 32]
// CHECK: memref.store %{{.*}}, %[[P]]
// CHECK-NOT: tile.parallel
// CHECK: return
// CHECK-LABEL: func.func @rescale_reads_the_body
// CHECK: ^bb0(%[[K:arg[0-9]+]]: index):
// CHECK-NOT: arith.cmpi sgt, %[[K]]
// CHECK: tile.gemm %[[P:[0-9]+]], %{{.*}}, %[[O:[0-9]+]] {tile.deferred_wait}
// CHECK: scf.if
// CHECK: scf.if
// CHECK-NEXT: tile.parallel [64, 32]
// CHECK: tile.parallel [64, 64]
// CHECK: memref.store %{{.*}}, %[[O]]
module attributes {tile.rotate_attention_loop, tile.rescale_under_qk} {
  func.func @rescale_under_qk(%K: memref<256x64xf16>, %V: memref<256x64xf16>, %n: index) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    tile.kernel grid(%c1) threads [128] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<64x64xf16, "shared">
      %ks = tile.alloc : memref<32x64xf16, "shared">
      %vs = tile.alloc : memref<32x64xf16, "shared">
      %s = tile.alloc : memref<64x32xf32, "fragment">
      %p = tile.alloc : memref<64x32xf16, "fragment">
      %o = tile.alloc : memref<64x64xf32, "fragment">
      %m = tile.alloc : memref<64xf32, "fragment">
      tile.pipelined %c0 to %n step %c1 stages 2 {
      ^bb0(%k: index):
        %row = arith.muli %k, %c32 : index
        tile.copy %K[%row, %c0] [32, 64] to %ks[%c0, %c0] [32, 64] : memref<256x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true} : memref<64x64xf16, "shared">, memref<32x64xf16, "shared">, memref<64x32xf32, "fragment">
        tile.reduce "max" %s to %m dim 1 {clear = false} : memref<64x32xf32, "fragment"> to memref<64xf32, "fragment">
        tile.parallel [64, 32] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<64x32xf32, "fragment">
          %mx = memref.load %m[%i] : memref<64xf32, "fragment">
          %d = arith.subf %x, %mx : f32
          %e = math.exp2 %d : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<64x32xf16, "fragment">
        }
        tile.parallel [64, 64] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %o[%i, %j] : memref<64x64xf32, "fragment">
          %mx = memref.load %m[%i] : memref<64xf32, "fragment">
          %y = arith.mulf %x, %mx : f32
          memref.store %y, %o[%i, %j] : memref<64x64xf32, "fragment">
        }
        %vrow = arith.muli %k, %c32 : index
        tile.copy %V[%vrow, %c0] [32, 64] to %vs[%c0, %c0] [32, 64] : memref<256x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %p, %vs, %o : memref<64x32xf16, "fragment">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
    }
    return
  }
  func.func @rescale_reads_the_body(%K: memref<256x64xf16>, %V: memref<256x64xf16>, %n: index) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    tile.kernel grid(%c1) threads [128] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<64x64xf16, "shared">
      %ks = tile.alloc : memref<32x64xf16, "shared">
      %vs = tile.alloc : memref<32x64xf16, "shared">
      %s = tile.alloc : memref<64x32xf32, "fragment">
      %p = tile.alloc : memref<64x32xf16, "fragment">
      %o = tile.alloc : memref<64x64xf32, "fragment">
      %m = tile.alloc : memref<64xf32, "fragment">
      tile.pipelined %c0 to %n step %c1 stages 2 {
      ^bb0(%k: index):
        %row = arith.muli %k, %c32 : index
        tile.copy %K[%row, %c0] [32, 64] to %ks[%c0, %c0] [32, 64] : memref<256x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true} : memref<64x64xf16, "shared">, memref<32x64xf16, "shared">, memref<64x32xf32, "fragment">
        tile.reduce "max" %s to %m dim 1 {clear = false} : memref<64x32xf32, "fragment"> to memref<64xf32, "fragment">
        tile.parallel [64, 32] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<64x32xf32, "fragment">
          %mx = memref.load %m[%i] : memref<64xf32, "fragment">
          %d = arith.subf %x, %mx : f32
          %e = math.exp2 %d : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<64x32xf16, "fragment">
        }
        tile.parallel [64, 64] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %o[%i, %j] : memref<64x64xf32, "fragment">
          %mx = memref.load %m[%i] : memref<64xf32, "fragment">
          %kf = arith.index_cast %row : index to i32
          %kx = arith.sitofp %kf : i32 to f32
          %z = arith.mulf %x, %mx : f32
          %y = arith.mulf %z, %kx : f32
          memref.store %y, %o[%i, %j] : memref<64x64xf32, "fragment">
        }
        %vrow = arith.muli %k, %c32 : index
        tile.copy %V[%vrow, %c0] [32, 64] to %vs[%c0, %c0] [32, 64] : memref<256x64xf16> to memref<32x64xf16, "shared">
        tile.gemm %p, %vs, %o : memref<64x32xf16, "fragment">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
    }
    return
  }
}
