// RUN: tilec-opt --lower-tile-to-gpu %s --split-input-file | FileCheck %s
// RUN: tilec-opt --lower-tile-to-gpu %s --split-input-file | FileCheck %s --check-prefix=ONCE
// The tile kernel becomes one gpu.func: bare global pointers then the dynamic sizes as i64,
// memref descriptors rebuilt inside, fragments as per-thread register arrays, 16-byte guarded
// vector copies, shuffles for an in-warp reduction, atomics from one owner thread. A grid
// sized at run time (rowsum's) states no known_grid_size.

// CHECK-LABEL: gpu.module @kernels
// CHECK: gpu.func @rowsum(%[[X:.*]]: !llvm.ptr<1>, %[[OUT:.*]]: !llvm.ptr<1>, %[[M:.*]]: i64, %[[N:.*]]: i64) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64}
// CHECK: llvm.insertvalue %[[M]], %{{.*}}[3, 0]
// CHECK: builtin.unrealized_conversion_cast %{{.*}} to memref<?x64xf32, 1>
// CHECK: %[[REGS:.*]] = memref.alloca() {alignment = 16 : i64} : memref<8xf32>
// CHECK: %[[SUMS:.*]] = memref.alloca() {alignment = 16 : i64} : memref<2xf32>
// in bounds, aligned and whole: one 16-byte load, else element by element with zeros; the
// load frozen, so that LLVM keeps it whole (VectorCombine splits a load only extracted from)
// CHECK: scf.if %{{.*}} -> (vector<4xf32>) {
// CHECK-NEXT: %[[VECTOR:.*]] = vector.load %{{.*}} {alignment = 16 : i64} : memref<?x64xf32, 1>, vector<4xf32>
// CHECK-NEXT: %[[FROZEN:.*]] = llvm.freeze %[[VECTOR]] : vector<4xf32>
// CHECK-NEXT: scf.yield %[[FROZEN]]
// CHECK: } else {
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK: memref.load
// CHECK: } else {
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: memref.store %{{.*}}, %[[REGS]][%{{.*}}] : memref<8xf32>
// a thread's four registers of a row combine as a tree, (r0 + r1) + (r2 + r3): two dependent
// adds, not three
// CHECK: %[[LOW:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[HIGH:.*]] = arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: arith.addf %[[LOW]], %[[HIGH]] : f32
// the 16 threads of a row combine in 4 butterfly steps (per row the thread holds)
// CHECK: gpu.shuffle xor %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK: memref.store %{{.*}}, %[[SUMS]]
// one thread of the 16 that hold a sum adds it, inside the bounds
// CHECK: %[[OWNER:.*]] = arith.cmpi eq
// CHECK: %[[OK:.*]] = arith.andi %[[OWNER]], %{{.*}} : i1
// CHECK: scf.if %[[OK]] {
// CHECK-NEXT: memref.atomic_rmw addf
// CHECK-NOT: tile.
func.func @rowsum(%X: memref<?x64xf32>, %out: memref<?xf32>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %M = memref.dim %X, %c0 : memref<?x64xf32>
  %c16 = arith.constant 16 : index
  %g = arith.ceildivui %M, %c16 : index
  tile.kernel grid(%g) threads [128] {
  ^bb0(%bx: index):
    %f = tile.alloc {tile.layout = #tile.linear<[16, 64], register = [[0, 1], [0, 2], [8, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]]>} : memref<16x64xf32, "fragment">
    %s = tile.alloc {tile.layout = #tile.linear<[16], register = [[8]], lane = [[0], [0], [0], [0], [1]], warp = [[2], [4]]>} : memref<16xf32, "fragment">
    %row = arith.muli %bx, %c16 : index
    tile.copy %X[%row, %c0] [16, 64] to %f[%c0, %c0] [16, 64] : memref<?x64xf32> to memref<16x64xf32, "fragment">
    tile.reduce "sum" %f to %s dim 1 : memref<16x64xf32, "fragment"> to memref<16xf32, "fragment">
    tile.parallel [16] attributes {tile.layout = #tile.linear<[16], register = [[8]], lane = [[0], [0], [0], [0], [1]], warp = [[2], [4]]>} {
    ^bb0(%i: index):
      %r = arith.addi %row, %i : index
      %v = memref.load %s[%i] : memref<16xf32, "fragment">
      tile.atomic_add %out[%r], %v : memref<?xf32>, f32
    }
  }
  return
}

// -----

// Shared buffers are views into the dynamic shared memory; a reduction combines the lanes
// along the reduced dimension (lane bit 4: xor 16) with a shuffle, then the warps along it
// (warp bits 0, 1: 4 peers) through a scratch buffer of its own between two barriers.
// CHECK-LABEL: gpu.func @colsum
// CHECK-SAME: tile.shared_bytes = 9216 : i64
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[TILE:.*]] = memref.view %[[SMEM]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x64xf32, #gpu.address_space<workgroup>>
// cooperative copy, the tensor's base and row length checked 16-byte aligned once around it:
// thread t reads vectors t, t + 128, t + 256, t + 384, all four before its first store; the
// other branch copies element by element
// CHECK: scf.if %{{.*}} {
// CHECK-COUNT-4: vector.load %{{.*}} {alignment = 16 : i64} : memref<32x64xf32, 1>, vector<4xf32>
// CHECK-COUNT-4: vector.store %{{.*}}, %[[TILE]][%{{.*}}, %{{.*}}] {alignment = 16 : i64}
// CHECK: } else {
// CHECK: scf.for %{{.*}} = %thread_id_x to %{{.*}} step %{{.*}} {
// CHECK: memref.store %{{.*}}, %[[TILE]]
// CHECK: gpu.barrier
// CHECK: vector.load %[[TILE]]
// CHECK: %[[SIXTEEN:.*]] = arith.constant 16 : i32
// CHECK: gpu.shuffle  xor %{{.*}}, %[[SIXTEEN]]
// CHECK: %[[SCRATCH:.*]] = memref.view %[[SMEM]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<256xf32, #gpu.address_space<workgroup>>
// CHECK: memref.store %{{.*}}, %[[SCRATCH]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[SCRATCH]]
// CHECK: gpu.barrier
func.func @colsum(%A: memref<32x64xf32>, %out: memref<64xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %t = tile.alloc : memref<32x64xf32, "shared">
    %f = tile.alloc {tile.layout = #tile.linear<[32, 64], register = [[0, 1], [0, 2], [8, 0], [16, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]]>} : memref<32x64xf32, "fragment">
    %s = tile.alloc {tile.layout = #tile.linear<[64], register = [[1], [2]], lane = [[4], [8], [16], [32], [0]], warp = [[0], [0]]>} : memref<64xf32, "fragment">
    tile.copy %A[%c0, %c0] [32, 64] to %t[%c0, %c0] [32, 64] : memref<32x64xf32> to memref<32x64xf32, "shared">
    gpu.barrier
    tile.copy %t[%c0, %c0] [32, 64] to %f[%c0, %c0] [32, 64] : memref<32x64xf32, "shared"> to memref<32x64xf32, "fragment">
    tile.reduce "sum" %f to %s dim 0 : memref<32x64xf32, "fragment"> to memref<64xf32, "fragment">
    tile.copy %s[%c0] [64] to %out[%c0] [64] : memref<64xf32, "fragment"> to memref<64xf32>
  }
  return
}

// -----

// A block of 5 threads over a layout of 4: thread 4 is a copy of thread 0, its shuffles meet
// lanes 5 and 6 the block lacks. The 4 threads of the span butterfly, write the sum to
// scratch (thread 4 does not), and every thread reads it back between two barriers.
// CHECK-LABEL: gpu.func @sum_of_five
// CHECK: gpu.shuffle  xor
// CHECK: gpu.shuffle  xor
// CHECK: %[[SCRATCH:.*]] = memref.view {{.*}} to memref<1xf32, #gpu.address_space<workgroup>>
// CHECK: %[[SPAN:.*]] = arith.cmpi ult, %thread_id_x, %c4{{(_[0-9]+)?}} : index
// CHECK: scf.if %[[SPAN]] {
// CHECK-NEXT: memref.store %{{.*}}, %[[SCRATCH]]
// CHECK: gpu.barrier
// CHECK-NEXT: memref.load %[[SCRATCH]]
// CHECK: gpu.barrier
func.func @sum_of_five(%X: memref<6x5xf32>, %out: memref<6xf32>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c6 = arith.constant 6 : index
  tile.kernel grid(%c6) threads [5] {
  ^bb0(%bx: index):
    %sum = tile.alloc {tile.layout = #tile.linear<[1], register = [], lane = [[0], [0]], warp = []>} : memref<1xf32, "fragment">
    %row = tile.alloc {tile.layout = #tile.linear<[1, 5], register = [[0, 4]], lane = [[0, 1], [0, 2]], warp = []>} : memref<1x5xf32, "fragment">
    tile.copy %X[%bx, %c0] [1, 5] to %row[%c0, %c0] [1, 5] : memref<6x5xf32> to memref<1x5xf32, "fragment">
    tile.reduce "sum" %row to %sum dim 1 : memref<1x5xf32, "fragment"> to memref<1xf32, "fragment">
    %v = memref.load %sum[%c0] : memref<1xf32, "fragment">
    memref.store %v, %out[%bx] : memref<6xf32>
  }
  return
}

// -----

// tile.convert_layout between layouts that differ only in register order: register moves.
// CHECK-LABEL: gpu.func @convert_registers
// CHECK-SAME: tile.shared_bytes = 0 : i64
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return
func.func @convert_registers(%out: memref<16x8xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tile.alloc {tile.layout = #tile.linear<[16, 8], register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>} : memref<16x8xf32, "fragment">
    %b = tile.alloc {tile.layout = #tile.linear<[16, 8], register = [[8, 0], [0, 1]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>} : memref<16x8xf32, "fragment">
    tile.convert_layout %a to %b : memref<16x8xf32, "fragment"> to memref<16x8xf32, "fragment">
    tile.copy %b[%c0, %c0] [16, 8] to %out[%c0, %c0] [16, 8] : memref<16x8xf32, "fragment"> to memref<16x8xf32>
  }
  return
}

// -----

// Elements that change threads go through shared memory: every thread writes what it holds
// at the element's row-major slot, a barrier, every thread reads its own, a barrier.
// CHECK-LABEL: gpu.func @convert_shared
// CHECK-SAME: tile.shared_bytes = 512 : i64
// CHECK: %[[SCRATCH:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<128xf32, #gpu.address_space<workgroup>>
// CHECK-COUNT-4: memref.store %{{.*}}, %[[SCRATCH]]
// CHECK: gpu.barrier
// CHECK-COUNT-4: memref.load %[[SCRATCH]]
// CHECK: gpu.barrier
func.func @convert_shared(%out: memref<16x8xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tile.alloc {tile.layout = #tile.linear<[16, 8], register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>} : memref<16x8xf32, "fragment">
    %b = tile.alloc {tile.layout = #tile.linear<[16, 8], register = [[0, 1], [0, 2]], lane = [[0, 4], [1, 0], [2, 0], [4, 0], [8, 0]], warp = []>} : memref<16x8xf32, "fragment">
    tile.convert_layout %a to %b : memref<16x8xf32, "fragment"> to memref<16x8xf32, "fragment">
    tile.copy %b[%c0, %c0] [16, 8] to %out[%c0, %c0] [16, 8] : memref<16x8xf32, "fragment"> to memref<16x8xf32>
  }
  return
}

// -----

// A row reduction of an mma accumulator layout shuffles over the lanes along the row (lane
// bits 0 and 1: xor 1, xor 2) and needs no shared memory; a fragment -> fragment copy of the
// same layout is register moves.
// CHECK-LABEL: gpu.func @mma_row_sum
// CHECK-SAME: tile.shared_bytes = 0 : i64
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: gpu.shuffle  xor %{{.*}}, %[[ONE]]
// CHECK: %[[TWO:.*]] = arith.constant 2 : i32
// CHECK: gpu.shuffle  xor %{{.*}}, %[[TWO]]
func.func @mma_row_sum(%A: memref<16x8xf32>, %out: memref<16xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tile.alloc {tile.layout = #tile.linear<[16, 8], register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>} : memref<16x8xf32, "fragment">
    %b = tile.alloc {tile.layout = #tile.linear<[16, 8], register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>} : memref<16x8xf32, "fragment">
    %s = tile.alloc {tile.layout = #tile.linear<[16], register = [[8]], lane = [[0], [0], [1], [2], [4]], warp = []>} : memref<16xf32, "fragment">
    tile.copy %A[%c0, %c0] [16, 8] to %a[%c0, %c0] [16, 8] : memref<16x8xf32> to memref<16x8xf32, "fragment">
    tile.copy %a[%c0, %c0] [16, 8] to %b[%c0, %c0] [16, 8] : memref<16x8xf32, "fragment"> to memref<16x8xf32, "fragment">
    tile.reduce "sum" %b to %s dim 1 : memref<16x8xf32, "fragment"> to memref<16xf32, "fragment">
    tile.copy %s[%c0] [16] to %out[%c0] [16] : memref<16xf32, "fragment"> to memref<16xf32>
  }
  return
}

// -----

// A grid of constant sizes is the one launched: known_grid_size bounds the block indices
// (the NVVM and ROCDL lowerings give their reads a range), so LLVM folds the guards and
// zero-trip paths that hold for every block.
// CHECK-LABEL: gpu.func @constant_grid
// CHECK-SAME: known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 6, 4, 1>
func.func @constant_grid(%out: memref<24x32xf32>) attributes {tile.entry} {
  %c6 = arith.constant 6 : index
  %c4 = arith.constant 4 : index
  tile.kernel grid(%c6, %c4) threads [32] {
  ^bb0(%bx: index, %by: index):
    %c0 = arith.constant 0 : index
    %f = tile.alloc {tile.layout = #tile.linear<[32], register = [], lane = [[1], [2], [4], [8], [16]], warp = []>} : memref<32xf32, "fragment">
    %one = arith.constant 1.0 : f32
    tile.fill %f, %one : memref<32xf32, "fragment">, f32
    %row = arith.addi %bx, %by : index
    tile.copy %f[%c0] [32] to %out[%row, %c0] [1, 32] : memref<32xf32, "fragment"> to memref<24x32xf32>
  }
  return
}

// -----

// A ragged fragment (48 rows padded to 64): the register of rows 48..63 is skipped.
// CHECK-LABEL: gpu.func @ragged
// CHECK-COUNT-3: memref.load %{{.*}} : memref<4xf32>
// CHECK-NOT: memref.load %{{.*}} : memref<4xf32>
// CHECK: gpu.return
func.func @ragged(%out: memref<48xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [16] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tile.alloc {tile.layout = #tile.linear<[48], register = [[16], [32]], lane = [[1], [2], [4], [8]], warp = []>} : memref<48xf32, "fragment">
    %one = arith.constant 1.0 : f32
    tile.fill %f, %one : memref<48xf32, "fragment">, f32
    tile.copy %f[%c0] [48] to %out[%c0] [48] : memref<48xf32, "fragment"> to memref<48xf32>
  }
  return
}

// -----

// A reduction across warps inside an unrolled loop: each unrolled copy gets its own scratch.
// CHECK-LABEL: gpu.func @unrolled_colsum
// CHECK-SAME: tile.shared_bytes = 256 : i64
// CHECK-COUNT-2: memref.view %{{.*}} to memref<32xf32, #gpu.address_space<workgroup>>
func.func @unrolled_colsum(%A: memref<32x16xf32>, %out: memref<16xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [64] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c2 = arith.constant 2 : index
    %f = tile.alloc {tile.layout = #tile.linear<[32, 16], register = [[0, 1], [0, 2], [0, 4], [0, 8]], lane = [[1, 0], [2, 0], [4, 0], [8, 0], [0, 0]], warp = [[16, 0]]>} : memref<32x16xf32, "fragment">
    %s = tile.alloc {tile.layout = #tile.linear<[16], register = [[1], [2], [4], [8]], lane = [[0], [0], [0], [0], [0]], warp = [[0]]>} : memref<16xf32, "fragment">
    tile.copy %A[%c0, %c0] [32, 16] to %f[%c0, %c0] [32, 16] : memref<32x16xf32> to memref<32x16xf32, "fragment">
    tile.for %c0 to %c2 step %c1 attributes {unroll} {
    ^bb0(%k: index):
      tile.reduce "sum" %f to %s dim 0 : memref<32x16xf32, "fragment"> to memref<16xf32, "fragment">
    }
    tile.copy %s[%c0] [16] to %out[%c0] [16] : memref<16xf32, "fragment"> to memref<16xf32>
  }
  return
}

// -----

// A fragment every thread holds whole, read outside T.Parallel at an index known at run time:
// each thread loads its own register array at the row-major position (no shared memory, no
// barrier); converting it to a spread layout picks each thread's elements from its copy.
// CHECK-LABEL: gpu.func @whole_tile
// CHECK-SAME: tile.shared_bytes = 0 : i64
// CHECK-NOT: gpu.barrier
// CHECK: %[[WHOLE:.*]] = memref.alloca() {alignment = 16 : i64} : memref<8xf32>
// CHECK: memref.load %[[WHOLE]][%{{.*}}] : memref<8xf32>
// CHECK: gpu.return
func.func @whole_tile(%in: memref<8xf32>, %out: memref<8xf32>, %k: index) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [8] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %w = tile.alloc {tile.layout = #tile.linear<[8], register = [[1], [2], [4]], lane = [[0], [0], [0]], warp = []>} : memref<8xf32, "fragment">
    %s = tile.alloc {tile.layout = #tile.linear<[8], register = [], lane = [[1], [2], [4]], warp = []>} : memref<8xf32, "fragment">
    tile.copy %in[%c0] [8] to %w[%c0] [8] : memref<8xf32> to memref<8xf32, "fragment">
    %x = memref.load %w[%k] : memref<8xf32, "fragment">
    memref.store %x, %out[%k] : memref<8xf32>
    tile.convert_layout %w to %s : memref<8xf32, "fragment"> to memref<8xf32, "fragment">
    tile.copy %s[%c0] [8] to %out[%c0] [8] : memref<8xf32, "fragment"> to memref<8xf32>
  }
  return
}

// -----

// T.call_extern: the callee's declaration moves into the gpu.module with the kernel; the
// pointer to the per-thread buffer is taken from its alloca.
// CHECK-LABEL: gpu.module @kernels
// CHECK-NEXT: llvm.func @tilec_extern_0_twice(!llvm.ptr) attributes {tile.extern = {args = ["float32*"], name = "twice", result = "void"}}
// CHECK: gpu.func @extern_call
// CHECK: %[[BUF:.*]] = memref.alloca() {alignment = 16 : i64} : memref<4xf32>
// CHECK: %[[ADDR:.*]] = memref.extract_aligned_pointer_as_index %[[BUF]] : memref<4xf32> -> index
// CHECK: llvm.call @tilec_extern_0_twice(%{{.*}}) : (!llvm.ptr) -> ()
llvm.func @tilec_extern_0_twice(!llvm.ptr) attributes {tile.extern = {args = ["float32*"], name = "twice", result = "void"}}
func.func @extern_call(%out: memref<128xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %buf = tile.alloc : memref<4xf32, "local">
    %address = memref.extract_aligned_pointer_as_index %buf : memref<4xf32, "local"> -> index
    %word = arith.index_cast %address : index to i64
    %pointer = llvm.inttoptr %word : i64 to !llvm.ptr
    llvm.call @tilec_extern_0_twice(%pointer) : (!llvm.ptr) -> ()
    %c0 = arith.constant 0 : index
    %x = memref.load %buf[%c0] : memref<4xf32, "local">
    %tx = gpu.thread_id x
    memref.store %x, %out[%tx] : memref<128xf32>
  }
  return
}

// -----

// A T.unroll whose copies would pass 4096 ops stays a loop (the same stores; unrolling is a
// hint), so a long one compiles in moments; a short one is copied out.
// CHECK-LABEL: gpu.func @long_unroll
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK: memref.store
// CHECK-LABEL: gpu.func @short_unroll
// CHECK-NOT: scf.for
// CHECK-COUNT-4: memref.store
// CHECK-NOT: memref.store
func.func @long_unroll(%A: memref<16384xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [1] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %n = arith.constant 16384 : index
    tile.for %c0 to %n step %c1 attributes {unroll} {
    ^bb0(%i: index):
      %x = memref.load %A[%i] : memref<16384xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %A[%i] : memref<16384xf32>
    }
  }
  return
}
func.func @short_unroll(%A: memref<16384xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [1] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %n = arith.constant 4 : index
    tile.for %c0 to %n step %c1 attributes {unroll} {
    ^bb0(%i: index):
      %x = memref.load %A[%i] : memref<16384xf32>
      memref.store %x, %A[%i] : memref<16384xf32>
    }
  }
  return
}

// -----

// A shared tile select-shared-swizzle marked "transpose" is a flat view; an access at (row,
// column) lands in 16-byte chunk (column / 8) xor (row / 8) mod 8 of its row (64 f16 = 8
// chunks a row): the copy's 16-byte stores through it stay whole.
// CHECK-LABEL: gpu.func @transposed_tile
// CHECK: %[[TILE:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<4096xf16, #gpu.address_space<workgroup>>
// CHECK: %[[CHUNK:.*]] = arith.xori %{{.*}}, %{{.*}} : index
// CHECK-NEXT: arith.constant 64 : index
// CHECK-NEXT: %[[ROW_START:.*]] = arith.muli %{{.*}}, %c64{{.*}} : index
// CHECK-NEXT: arith.constant 8 : index
// CHECK-NEXT: %[[CHUNK_START:.*]] = arith.muli %[[CHUNK]], %c8{{.*}} : index
// CHECK-NEXT: %[[START:.*]] = arith.addi %[[ROW_START]], %[[CHUNK_START]] : index
// CHECK-NEXT: arith.constant 8 : index
// CHECK-NEXT: %[[WITHIN:.*]] = arith.remui %{{.*}}, %c8{{.*}} : index
// CHECK-NEXT: %[[AT:.*]] = arith.addi %[[START]], %[[WITHIN]] : index
// CHECK-NEXT: vector.store %{{.*}}, %[[TILE]][%[[AT]]] {alignment = 16 : i64} : memref<4096xf16, #gpu.address_space<workgroup>>, vector<8xf16>
func.func @transposed_tile(%x: memref<64x64xf16>, %y: memref<64x64xf16>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %t = tile.alloc {tile.swizzle = "transpose"} : memref<64x64xf16, "shared">
    tile.copy %x[%c0, %c0] [64, 64] to %t[%c0, %c0] [64, 64] : memref<64x64xf16> to memref<64x64xf16, "shared">
    gpu.barrier
    tile.copy %t[%c0, %c0] [64, 64] to %y[%c0, %c0] [64, 64] : memref<64x64xf16, "shared"> to memref<64x64xf16>
  }
  return
}

// -----

// A T.Parallel on no fragment gathering global rows into a shared tile (infer-fragment-layout
// gave each thread 8 consecutive f16 columns) reads each run as one 16-byte vector without
// the opt-in, checked in bounds and aligned per vector (element by element where not), the
// base pointer and row length once around the loop (the unaligned branch reads elements);
// its 16 registers (2 vectors) are unrolled.
// CHECK-LABEL: gpu.func @gather_rows
// CHECK: scf.if
// CHECK-COUNT-2: vector.load %{{.*}} {alignment = 16 : i64} : memref<1024x256xf16, 1>, vector<8xf16>
// CHECK-NOT: vector.load
// CHECK: gpu.return
func.func @gather_rows(%A: memref<1024x256xf16>, %k: index, %n: index) attributes {tile.entry} {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %tile = tile.alloc : memref<64x32xf16, "shared">
    tile.parallel [64, 32] attributes {tile.layout = #tile.linear<[64, 32], register = [[0, 1], [0, 2], [0, 4], [32, 0]], lane = [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]]>} {
    ^bb0(%i: index, %j: index):
      %c3 = arith.constant 3 : index
      %row = arith.muli %i, %c3 : index
      %col = arith.addi %k, %j : index
      %x = memref.load %A[%row, %col] : memref<1024x256xf16>
      %c0 = arith.constant 0 : index
      %inside = arith.cmpi ne, %i, %c0 : index
      %zero = arith.constant 0.0 : f16
      %y = arith.select %inside, %x, %zero : f16
      memref.store %y, %tile[%i, %j] : memref<64x32xf16, "shared">
    }
  }
  return
}

// -----

// With tile.vector_epilogue_loads (TILEC_VECTOR_EPILOGUE_LOADS=1), a T.Parallel epilogue on an
// mma accumulator layout (2 consecutive columns per thread) reads
// its residual R as one 2-wide vector per register pair, checked in bounds and aligned per
// vector (element by element past the edge), the base pointer and row length once around the
// loop (the unaligned path reads elements); a read not along the loop's columns (R[j, i])
// stays scalar. The body runs once per register, inside the alignment check's branches.
// CHECK-LABEL: gpu.func @residual_pairs
// CHECK: scf.if
// CHECK-COUNT-2: vector.load %{{.*}} : memref<16x8xf16, 1>, vector<2xf16>
// CHECK-NOT: vector.load
// CHECK: } else {
// CHECK-NOT: vector.load
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @transposed_read
// CHECK-NOT: vector.load
// CHECK: gpu.return
// ONCE-LABEL: gpu.func @residual_pairs
// ONCE: scf.if %{{[0-9]+}} {
// ONCE-NOT: } else {
// ONCE: vector.load
// ONCE-COUNT-8: arith.addf
// ONCE-NOT: arith.addf
// ONCE: gpu.return
module attributes {tile.vector_epilogue_loads} {
  func.func @residual_pairs(%R: memref<16x8xf16>, %out: memref<16x8xf32>) attributes {tile.entry} {
    %c1 = arith.constant 1 : index
    tile.kernel grid(%c1) threads [32] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %a = tile.alloc {tile.layout = #tile.linear<[16, 8], register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>} : memref<16x8xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %a, %zero : memref<16x8xf32, "fragment">, f32
      tile.parallel [16, 8] attributes {tile.layout = #tile.linear<[16, 8], register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>} {
      ^bb0(%i: index, %j: index):
        %v = memref.load %a[%i, %j] : memref<16x8xf32, "fragment">
        %r = memref.load %R[%i, %j] : memref<16x8xf16>
        %rf = arith.extf %r : f16 to f32
        %s = arith.addf %v, %rf : f32
        memref.store %s, %a[%i, %j] : memref<16x8xf32, "fragment">
      }
      tile.copy %a[%c0, %c0] [16, 8] to %out[%c0, %c0] [16, 8] : memref<16x8xf32, "fragment"> to memref<16x8xf32>
    }
    return
  }

  func.func @transposed_read(%R: memref<16x16xf16>, %out: memref<16x8xf32>) attributes {tile.entry} {
    %c1 = arith.constant 1 : index
    tile.kernel grid(%c1) threads [32] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %a = tile.alloc {tile.layout = #tile.linear<[16, 8], register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>} : memref<16x8xf32, "fragment">
      tile.parallel [16, 8] attributes {tile.layout = #tile.linear<[16, 8], register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>} {
      ^bb0(%i: index, %j: index):
        %r = memref.load %R[%j, %i] : memref<16x16xf16>
        %rf = arith.extf %r : f16 to f32
        memref.store %rf, %a[%i, %j] : memref<16x8xf32, "fragment">
      }
      tile.copy %a[%c0, %c0] [16, 8] to %out[%c0, %c0] [16, 8] : memref<16x8xf32, "fragment"> to memref<16x8xf32>
    }
    return
  }
}

// -----

// Without the opt-in the same epilogue reads element by element.
// CHECK-LABEL: gpu.func @residual_scalar
// CHECK-NOT: vector.load
// CHECK: gpu.return
func.func @residual_scalar(%R: memref<16x8xf16>, %out: memref<16x8xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %a = tile.alloc {tile.layout = #tile.linear<[16, 8], register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>} : memref<16x8xf32, "fragment">
    %zero = arith.constant 0.0 : f32
    tile.fill %a, %zero : memref<16x8xf32, "fragment">, f32
    tile.parallel [16, 8] attributes {tile.layout = #tile.linear<[16, 8], register = [[0, 1], [8, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = []>} {
    ^bb0(%i: index, %j: index):
      %v = memref.load %a[%i, %j] : memref<16x8xf32, "fragment">
      %r = memref.load %R[%i, %j] : memref<16x8xf16>
      %rf = arith.extf %r : f16 to f32
      %s = arith.addf %v, %rf : f32
      memref.store %s, %a[%i, %j] : memref<16x8xf32, "fragment">
    }
    tile.copy %a[%c0, %c0] [16, 8] to %out[%c0, %c0] [16, 8] : memref<16x8xf32, "fragment"> to memref<16x8xf32>
  }
  return
}

// -----

// A copy into a box of a fragment (columns 32..63 of 64, as a causal row's column blocks):
// a thread reads its 4-register vector only where its columns lie inside the box, at their
// place in the box (thread t holds columns 4t..4t+3: source element 4t - 32).
// CHECK-LABEL: gpu.func @fragment_box
// CHECK: %[[COLUMN:.*]] = arith.muli %{{.*}}, %c4 : index
// CHECK: %[[IN_BOX:.*]] = arith.subi %[[COLUMN]], %c32 : index
// CHECK: %[[INSIDE:.*]] = arith.cmpi ult, %[[IN_BOX]], %{{.*}} : index
// CHECK-NEXT: scf.if %[[INSIDE]] {
// CHECK: vector.load %{{.*}}[%[[IN_BOX]]] {alignment = 16 : i64} : memref<64xf32, 1>, vector<4xf32>
// CHECK: gpu.return
func.func @fragment_box(%x: memref<64xf32>, %out: memref<64xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [16] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c32 = arith.constant 32 : index
    %f = tile.alloc {tile.layout = #tile.linear<[64], register = [[1], [2]], lane = [[4], [8], [16], [32]], warp = []>} : memref<64xf32, "fragment">
    %zero = arith.constant 0.0 : f32
    tile.fill %f, %zero : memref<64xf32, "fragment">, f32
    tile.copy %x[%c0] [32] to %f[%c32] [32] : memref<64xf32> to memref<64xf32, "fragment">
    tile.copy %f[%c0] [64] to %out[%c0] [64] : memref<64xf32, "fragment"> to memref<64xf32>
  }
  return
}

// -----

// A T.Parallel whose layout repeats its 16 points over the 128 threads (lane bit 4 and the warp
// bits add nothing): one owner of each point stores to shared and to global memory (replicas
// that each did `s[i] = s[i] + 1` would add several times), and the load of the element it
// just stored takes the stored value on every replica, owner or not.
// CHECK-LABEL: gpu.func @replicas
// CHECK: %[[COPY_BITS:.*]] = arith.andi %thread_id_x, %{{.*}} : index
// CHECK: %[[OWNER:.*]] = arith.cmpi eq, %[[COPY_BITS]], %{{.*}} : index
// CHECK: %[[OLD:.*]] = memref.load %[[TILE:.*]][%{{.*}}] : memref<16xf32, #gpu.address_space<workgroup>>
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} : f32
// CHECK: scf.if %[[OWNER]] {
// CHECK-NEXT: memref.store %[[NEW]], %[[TILE]][%{{.*}}]
// CHECK-NEXT: }
// CHECK-NOT: memref.load %[[TILE]]
// CHECK: %[[TWICE:.*]] = arith.addf %[[NEW]], %[[NEW]] : f32
// CHECK: %[[OK:.*]] = arith.andi %[[OWNER]], %{{.*}} : i1
// CHECK: scf.if %[[OK]] {
// CHECK-NEXT: memref.store %[[TWICE]], %{{.*}}[%{{.*}}] : memref<?xf32, 1>
func.func @replicas(%out: memref<?xf32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %t = tile.alloc : memref<16xf32, "shared">
    %one = arith.constant 1.0 : f32
    tile.parallel [16] attributes {tile.layout = #tile.linear<[16], register = [], lane = [[1], [2], [4], [8], [0]], warp = [[0], [0]]>} {
    ^bb0(%i: index):
      %old = memref.load %t[%i] : memref<16xf32, "shared">
      %new = arith.addf %old, %one : f32
      memref.store %new, %t[%i] : memref<16xf32, "shared">
      %back = memref.load %t[%i] : memref<16xf32, "shared">
      %twice = arith.addf %back, %back : f32
      memref.store %twice, %out[%i] : memref<?xf32>
    }
  }
  return
}

// -----

// An unsigned dtype's row minimum ("umin"): the thread's own registers, then the butterfly
// shuffles, all combine with minui (minsi took 0x80000000 for the smallest word).
// CHECK-LABEL: gpu.func @row_umin
// CHECK-NOT: arith.minsi
// CHECK: arith.minui %{{.*}}, %{{.*}} : i32
// CHECK: %[[PEER:.*]], %{{.*}} = gpu.shuffle xor %[[MINE:.*]], %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: arith.minui %[[MINE]], %[[PEER]] : i32
// CHECK-NOT: arith.minsi
func.func @row_umin(%X: memref<16x64xi32>, %out: memref<16xi32>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tile.alloc {tile.layout = #tile.linear<[16, 64], register = [[0, 1], [0, 2], [8, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]]>} : memref<16x64xi32, "fragment">
    %s = tile.alloc {tile.layout = #tile.linear<[16], register = [[8]], lane = [[0], [0], [0], [0], [1]], warp = [[2], [4]]>} : memref<16xi32, "fragment">
    tile.copy %X[%c0, %c0] [16, 64] to %f[%c0, %c0] [16, 64] : memref<16x64xi32> to memref<16x64xi32, "fragment">
    tile.reduce "umin" %f to %s dim 1 : memref<16x64xi32, "fragment"> to memref<16xi32, "fragment">
    tile.copy %s[%c0] [16] to %out[%c0] [16] : memref<16xi32, "fragment"> to memref<16xi32>
  }
  return
}

// -----

// 8-bit integers reduce as i32 words: shfl.sync moves 32 bits (an i8 gpu.shuffle failed nvvm's
// verifier); sign extension keeps the unsigned order umax compares by, and the result is
// truncated back to the destination's bytes.
// CHECK-LABEL: gpu.func @row_umax_bytes
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.maxui %{{.*}}, %{{.*}} : i32
// CHECK: %[[PEER:.*]], %{{.*}} = gpu.shuffle xor %[[MINE:.*]], %{{.*}}, %{{.*}} : i32
// CHECK-NEXT: arith.maxui %[[MINE]], %[[PEER]] : i32
// CHECK: arith.trunci %{{.*}} : i32 to i8
func.func @row_umax_bytes(%X: memref<16x64xi8>, %out: memref<16xi8>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tile.alloc {tile.layout = #tile.linear<[16, 64], register = [[0, 1], [0, 2], [8, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]]>} : memref<16x64xi8, "fragment">
    %s = tile.alloc {tile.layout = #tile.linear<[16], register = [[8]], lane = [[0], [0], [0], [0], [1]], warp = [[2], [4]]>} : memref<16xi8, "fragment">
    tile.copy %X[%c0, %c0] [16, 64] to %f[%c0, %c0] [16, 64] : memref<16x64xi8> to memref<16x64xi8, "fragment">
    tile.reduce "umax" %f to %s dim 1 : memref<16x64xi8, "fragment"> to memref<16xi8, "fragment">
    tile.copy %s[%c0] [16] to %out[%c0] [16] : memref<16xi8, "fragment"> to memref<16xi8>
  }
  return
}
