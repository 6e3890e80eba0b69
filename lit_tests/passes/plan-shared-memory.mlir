// RUN: tilec-opt --plan-shared-memory --split-input-file %s | FileCheck %s

// Q is used before and in the loop, O only after it: O takes Q's bytes (offset 0), S lives
// with Q and goes past it (128-byte aligned); a barrier goes before O's first statement, as
// threads may still read Q when others write O.
// CHECK-LABEL: func.func @reuse_after_loop
// CHECK: tile.kernel grid(%{{.*}}) threads [128] attributes {tile.shared_arena = {align = 128 : i64, bytes = 8272 : i64}}
// CHECK: tile.alloc {tile.shared_offset = 0 : i64} : memref<64x32xf32, "shared">
// CHECK: tile.alloc {tile.shared_offset = 8192 : i64} : memref<2x10xf32, "shared">
// CHECK: tile.alloc {tile.shared_offset = 0 : i64} : memref<64x32xf32, "shared">
// CHECK: tile.for
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy %{{.*}} to %{{.*}} : memref<64x32xf32, "fragment"> to memref<64x32xf32, "shared">
func.func @reuse_after_loop(%A: memref<64x32xf32>, %out: memref<64x32xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %q = tile.alloc : memref<64x32xf32, "shared">
    %s = tile.alloc : memref<2x10xf32, "shared">
    %o = tile.alloc : memref<64x32xf32, "shared">
    %f = tile.alloc : memref<64x32xf32, "fragment">
    tile.copy %A[%c0, %c0] [64, 32] to %q[%c0, %c0] [64, 32] : memref<64x32xf32> to memref<64x32xf32, "shared">
    tile.for %c0 to %c4 step %c1 {
    ^bb0(%k: index):
      tile.copy %q[%c0, %c0] [64, 32] to %f[%c0, %c0] [64, 32] : memref<64x32xf32, "shared"> to memref<64x32xf32, "fragment">
      tile.copy %q[%c0, %c0] [2, 10] to %s[%c0, %c0] [2, 10] : memref<64x32xf32, "shared"> to memref<2x10xf32, "shared">
    }
    tile.copy %f[%c0, %c0] [64, 32] to %o[%c0, %c0] [64, 32] : memref<64x32xf32, "fragment"> to memref<64x32xf32, "shared">
    tile.copy %o[%c0, %c0] [64, 32] to %out[%c0, %c0] [64, 32] : memref<64x32xf32, "shared"> to memref<64x32xf32>
  }
  return
}

// -----

// A barrier already between the two lifetimes: none added.
// CHECK-LABEL: func.func @barrier_between
// CHECK: tile.alloc {tile.shared_offset = 0 : i64} : memref<256xf32, "shared">
// CHECK: tile.alloc {tile.shared_offset = 0 : i64} : memref<128xf16, "shared">
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
func.func @barrier_between(%A: memref<256xf32>, %B: memref<128xf16>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tile.alloc : memref<256xf32, "shared">
    %b = tile.alloc : memref<128xf16, "shared">
    tile.copy %A[%c0] [256] to %a[%c0] [256] : memref<256xf32> to memref<256xf32, "shared">
    tile.copy %a[%c0] [256] to %A[%c0] [256] : memref<256xf32, "shared"> to memref<256xf32>
    gpu.barrier
    tile.copy %B[%c0] [128] to %b[%c0] [128] : memref<128xf16> to memref<128xf16, "shared">
    tile.copy %b[%c0] [128] to %B[%c0] [128] : memref<128xf16, "shared"> to memref<128xf16>
  }
  return
}

// -----

// A wgmma operand tile (plan-wgmma-gemms' tile.shared_layout) takes whole 1 KiB swizzle
// atoms on a 1 KiB boundary, and the arena is aligned for it; a plain buffer alive at the
// same time goes after it.
// CHECK-LABEL: func.func @operand_alignment
// CHECK: tile.shared_arena = {align = 1024 : i64, bytes = 4136 : i64}
// CHECK: tile.alloc {tile.shared_offset = 4096 : i64} : memref<10xf32, "shared">
// CHECK: tile.alloc {tile.shared_layout = {{.*}}, tile.shared_offset = 0 : i64{{.*}}} : memref<64x32xf16, "shared">
func.func @operand_alignment(%A: memref<64x32xf16>, %X: memref<10xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %x = tile.alloc : memref<10xf32, "shared">
    %a = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 1 : i64, span = 64 : i64, warpgroups = 1 : i64}, tile.swizzle = "64B"} : memref<64x32xf16, "shared">
    tile.copy %X[%c0] [10] to %x[%c0] [10] : memref<10xf32> to memref<10xf32, "shared">
    tile.copy %A[%c0, %c0] [64, 32] to %a[%c0, %c0] [64, 32] : memref<64x32xf16> to memref<64x32xf16, "shared">
    tile.copy %a[%c0, %c0] [64, 32] to %A[%c0, %c0] [64, 32] : memref<64x32xf16, "shared"> to memref<64x32xf16>
    tile.copy %x[%c0] [10] to %X[%c0] [10] : memref<10xf32, "shared"> to memref<10xf32>
  }
  return
}

// -----

// A TMA ring's tiles (the tile.tma_load copies of a tile.tma_ring loop) live through the
// kernel, one slot per stage: its producer warpgroup fills them apart from the statements'
// order. The kernel's other buffers are reused as anywhere: O, written after the loop, takes
// the bytes of Q, read only up to it, behind a barrier.
// CHECK-LABEL: func.func @ring_tiles_apart
// CHECK: tile.shared_arena = {align = 1024 : i64, bytes = 24576 : i64}
// CHECK: tile.alloc {tile.shared_layout = {{.*}}, tile.shared_offset = 16384 : i64{{.*}}} : memref<64x64xf16, "shared">
// CHECK: tile.alloc {tile.shared_layout = {{.*}}, tile.shared_offset = 0 : i64{{.*}}} : memref<64x64xf16, "shared">
// CHECK: tile.alloc {tile.shared_offset = 16384 : i64} : memref<64x64xf16, "shared">
// CHECK: tile.pipelined
// CHECK: gpu.barrier
// CHECK-NEXT: tile.copy %{{.*}} to %{{.*}} : memref<64x64xf16, "fragment"> to memref<64x64xf16, "shared">
func.func @ring_tiles_apart(%Q: memref<256x64xf16>, %K: memref<256x64xf16>, %O: memref<256x64xf16>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  tile.kernel grid(%c4) threads [128] {
  ^bb0(%bx: index):
    %q = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x64xf16, "shared">
    %k = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x64xf16, "shared">
    %o = tile.alloc : memref<64x64xf16, "shared">
    %s = tile.alloc : memref<64x64xf32, "fragment">
    %h = tile.alloc : memref<64x64xf16, "fragment">
    %row = arith.muli %bx, %c64 : index
    tile.copy %Q[%row, %c0] [64, 64] to %q[%c0, %c0] [64, 64] : memref<256x64xf16> to memref<64x64xf16, "shared">
    tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 2 : i64}, tile.tma_ring = {consumers = 1 : i64, overlap = true, persistent = true, stages = 2 : i64}} {
    ^bb0(%i: index):
      %k0 = arith.muli %i, %c64 : index
      tile.copy %K[%k0, %c0] [64, 64] to %k[%c0, %c0] [64, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 64>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<256x64xf16> to memref<64x64xf16, "shared">
      tile.gemm %q, %k, %s {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 64 : i64, reordered = false, warpgroups = 1 : i64}} : memref<64x64xf16, "shared">, memref<64x64xf16, "shared">, memref<64x64xf32, "fragment">
    }
    tile.copy %h[%c0, %c0] [64, 64] to %o[%c0, %c0] [64, 64] : memref<64x64xf16, "fragment"> to memref<64x64xf16, "shared">
    tile.copy %o[%c0, %c0] [64, 64] to %O[%row, %c0] [64, 64] : memref<64x64xf16, "shared"> to memref<256x64xf16>
  }
  return
}

// -----

// A buffer nothing touches (a bias tile of a kernel without bias) takes no bytes: the arena
// holds the two used buffers only (alive together), and no barrier goes in for the unused one.
// CHECK-LABEL: func.func @unused_buffer
// CHECK: tile.kernel grid(%{{.*}}) threads [128] attributes {tile.shared_arena = {align = 128 : i64, bytes = 1536 : i64}}
// CHECK: tile.alloc {tile.shared_offset = 0 : i64} : memref<256xf32, "shared">
// CHECK: tile.alloc {tile.shared_offset = 0 : i64} : memref<16384xf32, "shared">
// CHECK: tile.alloc {tile.shared_offset = 1024 : i64} : memref<128xf32, "shared">
// CHECK-NOT: gpu.barrier
func.func @unused_buffer(%A: memref<256xf32>, %B: memref<128xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tile.alloc : memref<256xf32, "shared">
    %bias = tile.alloc : memref<16384xf32, "shared">
    %b = tile.alloc : memref<128xf32, "shared">
    tile.copy %A[%c0] [256] to %a[%c0] [256] : memref<256xf32> to memref<256xf32, "shared">
    tile.copy %a[%c0] [128] to %b[%c0] [128] : memref<256xf32, "shared"> to memref<128xf32, "shared">
    tile.copy %b[%c0] [128] to %B[%c0] [128] : memref<128xf32, "shared"> to memref<128xf32>
  }
  return
}

// -----

// In a loop, %a (a whole T.copy) and %b (a T.Parallel storing each element at its own point)
// are written whole before each iteration reads them, and their spans in the body do not meet,
// but the kernel fits a block's shared memory with the loop counted as one statement: each
// buffer keeps its own bytes, and the loop gets no barrier.
// CHECK-LABEL: func.func @fits_without_reuse_in_loops
// CHECK: tile.shared_arena = {align = 128 : i64, bytes = 32768 : i64}
// CHECK: tile.for
// CHECK-NOT: gpu.barrier
// CHECK: return
func.func @fits_without_reuse_in_loops(%A: memref<32x64xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %q = tile.alloc : memref<32x64xf32, "shared">
    %a = tile.alloc : memref<32x64xf32, "shared">
    %b = tile.alloc : memref<32x64xf32, "shared">
    %c = tile.alloc : memref<32x64xf32, "shared">
    %f = tile.alloc : memref<32x64xf32, "fragment">
    tile.copy %A[%c0, %c0] [32, 64] to %q[%c0, %c0] [32, 64] : memref<32x64xf32> to memref<32x64xf32, "shared">
    tile.for %c0 to %c4 step %c1 {
    ^bb0(%k: index):
      tile.copy %A[%c0, %c0] [32, 64] to %a[%c0, %c0] [32, 64] : memref<32x64xf32> to memref<32x64xf32, "shared">
      tile.copy %a[%c0, %c0] [32, 64] to %f[%c0, %c0] [32, 64] : memref<32x64xf32, "shared"> to memref<32x64xf32, "fragment">
      tile.parallel [32, 64] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %q[%i, %j] : memref<32x64xf32, "shared">
        memref.store %v, %b[%i, %j] : memref<32x64xf32, "shared">
      }
      tile.copy %b[%c0, %c0] [32, 64] to %f[%c0, %c0] [32, 64] : memref<32x64xf32, "shared"> to memref<32x64xf32, "fragment">
      tile.copy %c[%c0, %c0] [32, 64] to %f[%c0, %c0] [32, 64] : memref<32x64xf32, "shared"> to memref<32x64xf32, "fragment">
      tile.copy %A[%c0, %c0] [32, 64] to %c[%c0, %c0] [32, 64] : memref<32x64xf32> to memref<32x64xf32, "shared">
    }
  }
  return
}

// -----

// The same kernel with tiles of 64 KiB on sm_80 (163 KiB a block): 192 KiB with the loop as
// one statement, so the buffers are planned again with lifetimes inside the loop. %a and %b
// share bytes, %b after a barrier, %a after one at the body's start (the back edge: the next
// iteration writes %a while threads may still read %b). %q, read in every iteration, keeps
// its own bytes; so does %c, whose first touch in the body reads it.
// CHECK-LABEL: func.func @iteration_local
// CHECK: tile.shared_arena = {align = 128 : i64, bytes = 131152 : i64}
// CHECK: tile.alloc {tile.shared_offset = 0 : i64} : memref<64x256xf32, "shared">
// CHECK: tile.alloc {tile.shared_offset = 65536 : i64} : memref<64x256xf32, "shared">
// CHECK: tile.alloc {tile.shared_offset = 65536 : i64} : memref<64x256xf32, "shared">
// CHECK: tile.alloc {tile.shared_offset = 131072 : i64} : memref<2x10xf32, "shared">
// CHECK: tile.for
// CHECK-NEXT: ^bb0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy %{{.*}} to %[[A:.*]][%{{.*}}] [64, 256]
// CHECK-NEXT: tile.copy %[[A]]
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.parallel
// CHECK: tile.copy %[[B:.*]][%{{.*}}] [64, 256] to %{{.*}} : memref<64x256xf32, "shared"> to memref<64x256xf32, "fragment">
// CHECK-NEXT: tile.copy %{{.*}} to %{{.*}} : memref<2x10xf32, "shared"> to memref<64x256xf32, "fragment">
// CHECK-NEXT: tile.copy %{{.*}} to %{{.*}} : memref<64x256xf32> to memref<2x10xf32, "shared">
// CHECK-NEXT: }
module attributes {tile.arch = "sm_80"} {
  func.func @iteration_local(%A: memref<64x256xf32>, %n: index) attributes {tile.entry} {
    tile.kernel grid(%n) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %q = tile.alloc : memref<64x256xf32, "shared">
      %a = tile.alloc : memref<64x256xf32, "shared">
      %b = tile.alloc : memref<64x256xf32, "shared">
      %c = tile.alloc : memref<2x10xf32, "shared">
      %f = tile.alloc : memref<64x256xf32, "fragment">
      tile.copy %A[%c0, %c0] [64, 256] to %q[%c0, %c0] [64, 256] : memref<64x256xf32> to memref<64x256xf32, "shared">
      tile.for %c0 to %c4 step %c1 {
      ^bb0(%k: index):
        tile.copy %A[%c0, %c0] [64, 256] to %a[%c0, %c0] [64, 256] : memref<64x256xf32> to memref<64x256xf32, "shared">
        tile.copy %a[%c0, %c0] [64, 256] to %f[%c0, %c0] [64, 256] : memref<64x256xf32, "shared"> to memref<64x256xf32, "fragment">
        tile.parallel [64, 256] {
        ^bb0(%i: index, %j: index):
          %v = memref.load %q[%i, %j] : memref<64x256xf32, "shared">
          memref.store %v, %b[%i, %j] : memref<64x256xf32, "shared">
        }
        tile.copy %b[%c0, %c0] [64, 256] to %f[%c0, %c0] [64, 256] : memref<64x256xf32, "shared"> to memref<64x256xf32, "fragment">
        tile.copy %c[%c0, %c0] [2, 10] to %f[%c0, %c0] [2, 10] : memref<2x10xf32, "shared"> to memref<64x256xf32, "fragment">
        tile.copy %A[%c0, %c0] [2, 10] to %c[%c0, %c0] [2, 10] : memref<64x256xf32> to memref<2x10xf32, "shared">
      }
    }
    return
  }
}

// -----

// On sm_80, lifetimes inside the loop needed (216 KiB with the loop as one statement). Not
// written whole before it is read in each iteration: %a only in part (16 of its 32 rows), %b
// under a branch, %d in a loop that may run no iteration, %g not at all. Each keeps its own
// bytes; %e, written whole in a loop of two iterations, shares them with %h, a barrier before
// each (%h's first statement, and %e's loop for the back edge).
// CHECK-LABEL: func.func @carried_across
// CHECK: tile.shared_arena = {align = 128 : i64, bytes = 155648 : i64}
// CHECK: tile.alloc {tile.shared_offset = 131072 : i64} : memref<32x64xf32, "shared">
// CHECK: tile.alloc {tile.shared_offset = 139264 : i64} : memref<32x64xf32, "shared">
// CHECK: tile.alloc {tile.shared_offset = 147456 : i64} : memref<32x64xf32, "shared">
// CHECK: tile.alloc {tile.shared_offset = 0 : i64} : memref<64x256xf32, "shared">
// CHECK: tile.alloc {tile.shared_offset = 0 : i64} : memref<64x256xf32, "shared">
// CHECK: tile.alloc {tile.shared_offset = 65536 : i64} : memref<64x256xf32, "shared">
// CHECK: gpu.barrier
// CHECK-NEXT: tile.for %{{.*}} to %c2
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy %{{.*}} to %[[H:.*]][%{{.*}}] [64, 256]
// CHECK-NEXT: tile.copy %[[H]]
// CHECK-NOT: gpu.barrier
// CHECK: return
module attributes {tile.arch = "sm_80"} {
  func.func @carried_across(%A: memref<64x256xf32>, %n: index, %m: index, %p: i1) attributes {tile.entry} {
    tile.kernel grid(%n) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c4 = arith.constant 4 : index
      %a = tile.alloc : memref<32x64xf32, "shared">
      %b = tile.alloc : memref<32x64xf32, "shared">
      %d = tile.alloc : memref<32x64xf32, "shared">
      %e = tile.alloc : memref<64x256xf32, "shared">
      %h = tile.alloc : memref<64x256xf32, "shared">
      %g = tile.alloc : memref<64x256xf32, "shared">
      %f = tile.alloc : memref<64x256xf32, "fragment">
      tile.for %c0 to %c4 step %c1 {
      ^bb0(%k: index):
        tile.copy %A[%c0, %c0] [16, 64] to %a[%c0, %c0] [16, 64] : memref<64x256xf32> to memref<32x64xf32, "shared">
        tile.copy %a[%c0, %c0] [32, 64] to %f[%c0, %c0] [32, 64] : memref<32x64xf32, "shared"> to memref<64x256xf32, "fragment">
        scf.if %p {
          tile.copy %A[%c0, %c0] [32, 64] to %b[%c0, %c0] [32, 64] : memref<64x256xf32> to memref<32x64xf32, "shared">
        }
        tile.copy %b[%c0, %c0] [32, 64] to %f[%c0, %c0] [32, 64] : memref<32x64xf32, "shared"> to memref<64x256xf32, "fragment">
        tile.for %c0 to %m step %c1 {
        ^bb1(%s: index):
          tile.copy %A[%c0, %c0] [32, 64] to %d[%c0, %c0] [32, 64] : memref<64x256xf32> to memref<32x64xf32, "shared">
        }
        tile.copy %d[%c0, %c0] [32, 64] to %f[%c0, %c0] [32, 64] : memref<32x64xf32, "shared"> to memref<64x256xf32, "fragment">
        tile.for %c0 to %c2 step %c1 {
        ^bb1(%s: index):
          tile.copy %A[%c0, %c0] [64, 256] to %e[%c0, %c0] [64, 256] : memref<64x256xf32> to memref<64x256xf32, "shared">
          tile.copy %e[%c0, %c0] [64, 256] to %f[%c0, %c0] [64, 256] : memref<64x256xf32, "shared"> to memref<64x256xf32, "fragment">
        }
        tile.copy %A[%c0, %c0] [64, 256] to %h[%c0, %c0] [64, 256] : memref<64x256xf32> to memref<64x256xf32, "shared">
        tile.copy %h[%c0, %c0] [64, 256] to %f[%c0, %c0] [64, 256] : memref<64x256xf32, "shared"> to memref<64x256xf32, "fragment">
        tile.copy %g[%c0, %c0] [64, 256] to %f[%c0, %c0] [64, 256] : memref<64x256xf32, "shared"> to memref<64x256xf32, "fragment">
      }
    }
    return
  }
}
