// RUN: tilec-opt --lower-tile-to-gpu %s --split-input-file | FileCheck %s
// The tile kernel becomes one gpu.func: bare global pointers then the dynamic sizes as i64,
// memref descriptors rebuilt inside, fragments as per-thread register arrays, 16-byte guarded
// vector copies, shuffles for an in-warp reduction, atomics from one owner thread.

// CHECK-LABEL: gpu.module @kernels
// CHECK: gpu.func @rowsum(%[[X:.*]]: !llvm.ptr<1>, %[[OUT:.*]]: !llvm.ptr<1>, %[[M:.*]]: i64, %[[N:.*]]: i64) kernel attributes {known_block_size = array<i32: 128, 1, 1>, tile.shared_bytes = 0 : i64}
// CHECK: llvm.insertvalue %[[M]], %{{.*}}[3, 0]
// CHECK: builtin.unrealized_conversion_cast %{{.*}} to memref<?x64xf32, 1>
// CHECK: %[[REGS:.*]] = memref.alloca() : memref<8xf32>
// CHECK: %[[SUMS:.*]] = memref.alloca() : memref<2xf32>
// in bounds, aligned and whole: one 16-byte load, else element by element with zeros
// CHECK: scf.if %{{.*}} -> (vector<4xf32>) {
// CHECK-NEXT: vector.load %{{.*}} {alignment = 16 : i64} : memref<?x64xf32, 1>, vector<4xf32>
// CHECK: } else {
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK: memref.load
// CHECK: } else {
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: memref.store %{{.*}}, %[[REGS]][%{{.*}}] : memref<8xf32>
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
    %f = tile.alloc {tile.layout = {spt = array<i64: 1, 4>, threads = 128 : i64, tpb = array<i64: 8, 16>, tstride = array<i64: 16, 1>}} : memref<16x64xf32, "fragment">
    %s = tile.alloc {tile.layout = {spt = array<i64: 1>, threads = 128 : i64, tpb = array<i64: 8>, tstride = array<i64: 16>}} : memref<16xf32, "fragment">
    %row = arith.muli %bx, %c16 : index
    tile.copy %X[%row, %c0] [16, 64] to %f[%c0, %c0] [16, 64] : memref<?x64xf32> to memref<16x64xf32, "fragment">
    tile.reduce "sum" %f to %s dim 1 : memref<16x64xf32, "fragment"> to memref<16xf32, "fragment">
    tile.parallel [16] attributes {tile.layout = {spt = array<i64: 1>, threads = 128 : i64, tpb = array<i64: 8>, tstride = array<i64: 16>}} {
    ^bb0(%i: index):
      %r = arith.addi %row, %i : index
      %v = memref.load %s[%i] : memref<16xf32, "fragment">
      tile.atomic_add %out[%r], %v : memref<?xf32>, f32
    }
  }
  return
}

// -----

// Shared buffers are views into the dynamic shared memory; a reduction across warps goes
// through a scratch buffer between two barriers.
// CHECK-LABEL: gpu.func @colsum
// CHECK-SAME: tile.shared_bytes = 10240 : i64
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory : memref<?xi8, #gpu.address_space<workgroup>>
// CHECK: %[[TILE:.*]] = memref.view %[[SMEM]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<32x64xf32, #gpu.address_space<workgroup>>
// CHECK: %[[SCRATCH:.*]] = memref.view %[[SMEM]][%{{.*}}][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<512xf32, #gpu.address_space<workgroup>>
// cooperative copy: thread t moves vectors t, t + 128, ...
// CHECK: scf.for %{{.*}} = %thread_id_x to %{{.*}} step %{{.*}} {
// CHECK: vector.store %{{.*}}, %[[TILE]][%{{.*}}, %{{.*}}] {alignment = 16 : i64}
// CHECK: gpu.barrier
// CHECK: vector.load %[[TILE]]
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
    %f = tile.alloc {tile.layout = {spt = array<i64: 1, 4>, threads = 128 : i64, tpb = array<i64: 8, 16>, tstride = array<i64: 16, 1>}} : memref<32x64xf32, "fragment">
    %s = tile.alloc {tile.layout = {spt = array<i64: 4>, threads = 128 : i64, tpb = array<i64: 16>, tstride = array<i64: 1>}} : memref<64xf32, "fragment">
    tile.copy %A[%c0, %c0] [32, 64] to %t[%c0, %c0] [32, 64] : memref<32x64xf32> to memref<32x64xf32, "shared">
    gpu.barrier
    tile.copy %t[%c0, %c0] [32, 64] to %f[%c0, %c0] [32, 64] : memref<32x64xf32, "shared"> to memref<32x64xf32, "fragment">
    tile.reduce "sum" %f to %s dim 0 : memref<32x64xf32, "fragment"> to memref<64xf32, "fragment">
    tile.copy %s[%c0] [64] to %out[%c0] [64] : memref<64xf32, "fragment"> to memref<64xf32>
  }
  return
}
