// RUN: tilec-opt --insert-shared-barriers %s --split-input-file | FileCheck %s

// In a pipelined loop: a barrier before the copies (the previous iteration's gemm may still
// read the tiles) and one before the gemm (the copies must be complete); none between the two
// copies, which write different buffers.
// CHECK-LABEL: func.func @pipeline
// CHECK: tile.pipelined
// CHECK-NEXT: ^bb0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy
// CHECK-NEXT: tile.copy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.gemm
func.func @pipeline(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %kt: index) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %as = tile.alloc : memref<64x32xf16, "shared">
    %bs = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    tile.pipelined %c0 to %kt step %c1 stages 2 {
    ^bb0(%k: index):
      tile.copy %A[%c0, %k] [64, 32] to %as[%c0, %c0] [64, 32] : memref<?x?xf16> to memref<64x32xf16, "shared">
      tile.copy %B[%k, %c0] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<?x?xf16> to memref<32x64xf16, "shared">
      tile.gemm %as, %bs, %c : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    }
  }
  return
}

// -----

// A T.Parallel writing a shared buffer, then a copy reading it: one barrier between; a copy
// of global data into fragments needs none.
// CHECK-LABEL: func.func @parallel_then_copy
// CHECK: tile.parallel
// CHECK: gpu.barrier
// CHECK-NEXT: tile.copy %{{.*}} to %arg0
// CHECK-NOT: gpu.barrier
// CHECK: return
func.func @parallel_then_copy(%A: memref<64xf32>, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [64] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %s = tile.alloc : memref<64xf32, "shared">
    %f = tile.alloc : memref<64xf32, "fragment">
    tile.parallel [64] {
    ^bb0(%i: index):
      %one = arith.constant 1.0 : f32
      memref.store %one, %s[%i] : memref<64xf32, "shared">
    }
    tile.copy %s[%c0] [64] to %A[%c0] [64] : memref<64xf32, "shared"> to memref<64xf32>
    tile.copy %A[%c0] [64] to %f[%c0] [64] : memref<64xf32> to memref<64xf32, "fragment">
  }
  return
}

// -----

// A loop lower-tile-to-gpu pipelines with cp.async (both copies annotated, their tiles used only
// here and read after them): the lowering opens every iteration with wait_group + barrier and
// issues the copies itself, so no barrier before the gemm nor on the back edge; its drain ends
// with a barrier, so none before the fill after the loop either. A shared buffer written in
// the body and read by the next statement still gets its barrier.
// CHECK-LABEL: func.func @cp_async_pipeline
// CHECK: tile.pipelined
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.muli
// CHECK-NEXT: tile.copy {{.*}}tile.async = "cp.async"
// CHECK-NEXT: tile.copy {{.*}}tile.async = "cp.async"
// CHECK-NEXT: tile.gemm
// CHECK-NEXT: tile.fill %[[T:.*]], %{{.*}} : memref<64xf32, "shared">
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy %[[T]]
// CHECK-NEXT: }
// CHECK-NEXT: tile.fill %[[T]]
// CHECK-NEXT: }
func.func @cp_async_pipeline(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %kt: index) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %as = tile.alloc : memref<64x32xf16, "shared">
    %bs = tile.alloc : memref<32x64xf16, "shared">
    %t = tile.alloc : memref<64xf32, "shared">
    %f = tile.alloc : memref<64xf32, "fragment">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    %zero = arith.constant 0.0 : f32
    tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {stages = 3 : i64, k_tile = 32 : i64, mechanism = "cp.async"}} {
    ^bb0(%k: index):
      %kk = arith.muli %k, %c1 : index
      tile.copy %A[%c0, %kk] [64, 32] to %as[%c0, %c0] [64, 32] {tile.async = "cp.async"} : memref<?x?xf16> to memref<64x32xf16, "shared">
      tile.copy %B[%kk, %c0] [32, 64] to %bs[%c0, %c0] [32, 64] {tile.async = "cp.async"} : memref<?x?xf16> to memref<32x64xf16, "shared">
      tile.gemm %as, %bs, %c : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      tile.fill %t, %zero : memref<64xf32, "shared">, f32
      tile.copy %t[%c0] [64] to %f[%c0] [64] : memref<64xf32, "shared"> to memref<64xf32, "fragment">
    }
    tile.fill %t, %zero : memref<64xf32, "shared">, f32
  }
  return
}

// -----

// The copy of A not annotated: only B's copy is pipelined, A's stays a statement of the body:
// a barrier before the gemm reads its tile; the back edge (the next iteration's copy overwrites
// %as) is covered by the lowering's barrier at the top of the iteration.
// CHECK-LABEL: func.func @one_copy_stays
// CHECK: tile.pipelined
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tile.copy %{{.*}} to %[[AS:.*]][
// CHECK-NOT: tile.async
// CHECK-SAME: memref<64x32xf16, "shared">
// CHECK-NEXT: tile.copy {{.*}}tile.async = "cp.async"
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.gemm
// CHECK-NEXT: }
func.func @one_copy_stays(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %kt: index) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %as = tile.alloc : memref<64x32xf16, "shared">
    %bs = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    tile.pipelined %c0 to %kt step %c1 stages 2 attributes {tile.pipeline = {stages = 2 : i64, k_tile = 32 : i64, mechanism = "cp.async"}} {
    ^bb0(%k: index):
      tile.copy %A[%c0, %k] [64, 32] to %as[%c0, %c0] [64, 32] : memref<?x?xf16> to memref<64x32xf16, "shared">
      tile.copy %B[%k, %c0] [32, 64] to %bs[%c0, %c0] [32, 64] {tile.async = "cp.async"} : memref<?x?xf16> to memref<32x64xf16, "shared">
      tile.gemm %as, %bs, %c : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    }
  }
  return
}

// -----

// A while loop whose condition is the same on every thread (a per-thread variable set from the
// block index and from itself): its body is walked like a loop's, so the loop inside it gets
// a barrier before the gemm reads the copied tile and one at the top (the back edge), and the
// loop a barrier before it (the previous trip's gemm may still read the tile).
// CHECK-LABEL: func.func @while_uniform
// CHECK: scf.while
// CHECK: } do {
// CHECK: gpu.barrier
// CHECK-NEXT: tile.for
// CHECK-NEXT: ^bb0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.gemm
// CHECK: memref.store
// CHECK-NEXT: scf.yield
func.func @while_uniform(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %kt: index) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  tile.kernel grid(%c4) threads [128] {
  ^bb0(%bx: index):
    %as = tile.alloc : memref<64x32xf16, "shared">
    %bs = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    %start = tile.alloc : memref<1xindex, "local">
    memref.store %bx, %start[%c0] : memref<1xindex, "local">
    scf.while : () -> () {
      %s = memref.load %start[%c0] : memref<1xindex, "local">
      %go = arith.cmpi slt, %s, %kt : index
      scf.condition(%go)
    } do {
      %s = memref.load %start[%c0] : memref<1xindex, "local">
      tile.for %c0 to %s step %c1 {
      ^bb0(%k: index):
        tile.copy %A[%c0, %k] [64, 32] to %as[%c0, %c0] [64, 32] : memref<?x?xf16> to memref<64x32xf16, "shared">
        tile.gemm %as, %bs, %c : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      %next = arith.addi %s, %c4 : index
      memref.store %next, %start[%c0] : memref<1xindex, "local">
      scf.yield
    }
  }
  return
}

// -----

// A run-time if on a block-uniform value (the block index): a barrier between the copy and the
// gemm inside its branch; the else branch reads the tile after a barrier of its own.
// CHECK-LABEL: func.func @if_uniform
// CHECK: scf.if
// CHECK-NEXT: tile.copy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.gemm
// CHECK: } else {
// CHECK-NEXT: tile.copy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy
func.func @if_uniform(%A: memref<?x?xf16>, %B: memref<?x?xf16>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  tile.kernel grid(%c4) threads [128] {
  ^bb0(%bx: index):
    %as = tile.alloc : memref<64x32xf16, "shared">
    %bs = tile.alloc : memref<32x64xf16, "shared">
    %c = tile.alloc : memref<64x64xf32, "fragment">
    %first = arith.cmpi eq, %bx, %c0 : index
    scf.if %first {
      tile.copy %A[%c0, %c0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<?x?xf16> to memref<64x32xf16, "shared">
      tile.gemm %as, %bs, %c : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
    } else {
      tile.copy %A[%c0, %c0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<?x?xf16> to memref<64x32xf16, "shared">
      tile.copy %as[%c0, %c0] [64, 32] to %A[%c0, %bx] [64, 32] : memref<64x32xf16, "shared"> to memref<?x?xf16>
    }
  }
  return
}

// -----

// Conditions that may differ between threads stay single statements (no barrier inside
// divergent code): an if on the thread index, and a while over a per-thread variable some
// thread sets from its index. Between them, towards the rest of the block, barriers as usual.
// CHECK-LABEL: func.func @divergent
// CHECK: scf.if
// CHECK-NEXT: tile.copy
// CHECK-NEXT: tile.copy
// CHECK-NEXT: }
// CHECK: gpu.barrier
// CHECK-NEXT: scf.while
// CHECK-NOT: gpu.barrier
// CHECK: return
func.func @divergent(%A: memref<?x?xf16>, %kt: index) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %as = tile.alloc : memref<64x32xf16, "shared">
    %t = gpu.thread_id x
    %low = arith.cmpi ult, %t, %c1 : index
    scf.if %low {
      tile.copy %A[%c0, %c0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<?x?xf16> to memref<64x32xf16, "shared">
      tile.copy %as[%c0, %c0] [64, 32] to %A[%c0, %c1] [64, 32] : memref<64x32xf16, "shared"> to memref<?x?xf16>
    }
    %n = tile.alloc : memref<1xindex, "local">
    memref.store %c0, %n[%c0] : memref<1xindex, "local">
    scf.if %low {
      memref.store %t, %n[%c0] : memref<1xindex, "local">
    }
    scf.while : () -> () {
      %s = memref.load %n[%c0] : memref<1xindex, "local">
      %go = arith.cmpi slt, %s, %kt : index
      scf.condition(%go)
    } do {
      %s = memref.load %n[%c0] : memref<1xindex, "local">
      tile.copy %A[%c0, %s] [64, 32] to %as[%c0, %c0] [64, 32] : memref<?x?xf16> to memref<64x32xf16, "shared">
      tile.copy %as[%c0, %c0] [64, 32] to %A[%s, %c0] [64, 32] : memref<64x32xf16, "shared"> to memref<?x?xf16>
      %next = arith.addi %s, %c1 : index
      memref.store %next, %n[%c0] : memref<1xindex, "local">
      scf.yield
    }
  }
  return
}

// -----

// Atomic read-modify-writes of a shared buffer (a packed sub-byte tile, two threads per byte)
// write it: a T.Parallel reading it afterwards waits at a barrier.
// CHECK-LABEL: func.func @atomic_writes_then_read
// CHECK: memref.atomic_rmw ori
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.parallel
func.func @atomic_writes_then_read(%Y: memref<32x64xi8>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %packed = tile.alloc : memref<32x32xi8, "shared">
    %out = tile.alloc : memref<32x64xi8, "fragment">
    tile.parallel [32, 64] {
    ^bb0(%i: index, %j: index):
      %c1_0 = arith.constant 1 : index
      %half = arith.shrui %j, %c1_0 : index
      %v = arith.constant 5 : i8
      %r = memref.atomic_rmw ori %v, %packed[%i, %half] : (i8, memref<32x32xi8, "shared">) -> i8
    }
    tile.parallel [32, 64] {
    ^bb0(%i: index, %j: index):
      %c1_0 = arith.constant 1 : index
      %half = arith.shrui %j, %c1_0 : index
      %b = memref.load %packed[%i, %half] : memref<32x32xi8, "shared">
      memref.store %b, %out[%i, %j] : memref<32x64xi8, "fragment">
    }
  }
  return
}

// -----

// An if comparing the thread index with a multiple of 32 gives each branch a range of the
// block's threads (warp 0; warps 1-3): each branch is walked as a block of its own and gets
// its barriers (lower-tile-to-gpu makes them named barriers over the branch's threads); towards
// the rest of the block the if is one statement.
// CHECK-LABEL: func.func @thread_ranges
// CHECK: scf.if
// CHECK-NEXT: tile.copy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy
// CHECK: } else {
// CHECK-NEXT: tile.copy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy
func.func @thread_ranges(%A: memref<?x?xf16>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c32 = arith.constant 32 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %as = tile.alloc : memref<64x32xf16, "shared">
    %t = gpu.thread_id x
    %warp0 = arith.cmpi ult, %t, %c32 : index
    scf.if %warp0 {
      tile.copy %A[%c0, %c0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<?x?xf16> to memref<64x32xf16, "shared">
      tile.copy %as[%c0, %c0] [64, 32] to %A[%c0, %c1] [64, 32] : memref<64x32xf16, "shared"> to memref<?x?xf16>
    } else {
      tile.copy %A[%c1, %c0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<?x?xf16> to memref<64x32xf16, "shared">
      tile.copy %as[%c0, %c0] [64, 32] to %A[%c1, %c1] [64, 32] : memref<64x32xf16, "shared"> to memref<?x?xf16>
    }
    tile.copy %as[%c0, %c0] [64, 32] to %A[%c0, %c0] [64, 32] : memref<64x32xf16, "shared"> to memref<?x?xf16>
  }
  return
}

// -----

// The branches of one `if tx < 128: ... elif ...` chain of whole warpgroups (tile.warpgroups,
// the later ones `tile.else_branch`) run side by side, each thread one of them: no barrier
// goes between them (the warp-specialized MLA kernels order their shared tiles with mbarriers;
// a block barrier there waits for threads that are themselves waiting for the other branch's
// arrivals, a hang). A barrier before the chain, where one branch conflicts with what came
// before; the statement after the chain sees every branch's accesses. Inside a branch its own
// statements still get their barriers.
// CHECK-LABEL: func.func @branch_chain
// CHECK: tile.copy %arg0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.warpgroups [0] {
// CHECK-NEXT: tile.copy %[[S:.*]][%c0, %c0] [64, 32] to %arg0
// CHECK-NEXT: tile.copy %arg0
// CHECK-NOT: gpu.barrier
// CHECK: tile.warpgroups [1] attributes {tile.else_branch} {
// CHECK-NEXT: tile.copy %arg0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy %[[S]]
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.copy %[[S]]
func.func @branch_chain(%A: memref<?x?xf16>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [256] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<64x32xf16, "shared">
    %p = tile.alloc : memref<64x32xf16, "shared">
    tile.copy %A[%c0, %c0] [64, 32] to %s[%c0, %c0] [64, 32] : memref<?x?xf16> to memref<64x32xf16, "shared">
    tile.warpgroups [0] {
      tile.copy %s[%c0, %c0] [64, 32] to %A[%c1, %c0] [64, 32] : memref<64x32xf16, "shared"> to memref<?x?xf16>
      tile.copy %A[%c0, %c1] [64, 32] to %p[%c0, %c0] [64, 32] : memref<?x?xf16> to memref<64x32xf16, "shared">
    }
    tile.warpgroups [1] attributes {tile.else_branch} {
      tile.copy %A[%c1, %c1] [64, 32] to %s[%c0, %c0] [64, 32] : memref<?x?xf16> to memref<64x32xf16, "shared">
      tile.copy %s[%c0, %c0] [64, 32] to %A[%c1, %c1] [64, 32] : memref<64x32xf16, "shared"> to memref<?x?xf16>
    }
    tile.copy %s[%c0, %c0] [64, 32] to %A[%c0, %c0] [64, 32] : memref<64x32xf16, "shared"> to memref<?x?xf16>
  }
  return
}

// -----

// Two T.ws blocks in a row (no `tile.else_branch`: two statements, every thread passes both):
// the second reads what the first wrote, so a block barrier goes between them.
// CHECK-LABEL: func.func @warpgroups_in_turn
// CHECK: tile.warpgroups [0] {
// CHECK: }
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.warpgroups [1] {
func.func @warpgroups_in_turn(%A: memref<?x?xf16>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [256] {
  ^bb0(%bx: index):
    %s = tile.alloc : memref<64x32xf16, "shared">
    tile.warpgroups [0] {
      tile.copy %A[%c0, %c0] [64, 32] to %s[%c0, %c0] [64, 32] : memref<?x?xf16> to memref<64x32xf16, "shared">
    }
    tile.warpgroups [1] {
      tile.copy %s[%c0, %c0] [64, 32] to %A[%c1, %c0] [64, 32] : memref<64x32xf16, "shared"> to memref<?x?xf16>
    }
  }
  return
}

// -----

// A TMA ring's loop (tile.tma_ring): its copies are the producer's (the ring's mbarriers order
// the slots) and its iterations start after no barrier, so the back edge counts: the
// T.Parallel writing the K-major copy of a slot waits for the previous iteration's gemm, which
// reads that copy, and the gemm for the T.Parallel. Nothing before the copies.
// CHECK-LABEL: func.func @ring_transpose
// CHECK: tile.pipelined
// CHECK-NEXT: ^bb0
// CHECK-NEXT: tile.copy
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: tile.parallel
// CHECK: gpu.barrier
// CHECK-NEXT: tile.gemm
func.func @ring_transpose(%A: memref<1024x1024xf8E4M3FN>, %B: memref<1024x1024xf8E4M3FN>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  tile.kernel grid(%c8, %c8) threads [128] {
  ^bb0(%bx: index, %by: index):
    %bs = tile.alloc : memref<128x128xf8E4M3FN, "shared">
    %bt = tile.alloc : memref<128x128xf8E4M3FN, "shared">
    %as = tile.alloc : memref<128x128xf8E4M3FN, "shared">
    %acc = tile.alloc : memref<128x128xf32, "fragment">
    tile.pipelined %c0 to %c8 step %c1 stages 2 attributes {tile.pipeline = {k_tile = 128 : i64, mechanism = "cp.async", stages = 2 : i64}, tile.tma_ring = {consumers = 1 : i64, overlap = false, persistent = true, stages = 6 : i64}} {
    ^bb0(%k: index):
      tile.copy %B[%c0, %c0] [128, 128] to %bs[%c0, %c0] [128, 128] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 128, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<1024x1024xf8E4M3FN> to memref<128x128xf8E4M3FN, "shared">
      tile.parallel [128, 128] {
      ^bb0(%n: index, %kk: index):
        %v = memref.load %bs[%kk, %n] : memref<128x128xf8E4M3FN, "shared">
        memref.store %v, %bt[%n, %kk] : memref<128x128xf8E4M3FN, "shared">
      }
      tile.gemm %as, %bt, %acc {transpose_b = true} : memref<128x128xf8E4M3FN, "shared">, memref<128x128xf8E4M3FN, "shared">, memref<128x128xf32, "fragment">
    }
  }
  return
}
