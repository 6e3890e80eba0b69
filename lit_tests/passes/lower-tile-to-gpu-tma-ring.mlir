// RUN: tilec-opt --lower-tile-to-gpu --split-input-file %s | FileCheck %s
// A tile.tma_ring loop (plan-tma-pipelines) lowers to a producer warpgroup beside the kernel's:
// mbarriers full/empty per slot (thread 0 prefetches the tensor maps beside their
// initialization), the producer's first thread streaming each copy's boxes with
// cp.async.bulk.tensor through a tensor map argument, the consumers waiting on full and handing
// slots back on empty (no setmaxnreg between them: one consumer warpgroup's 256 threads may hold
// 255 registers each anyway; lower-tile-to-gpu-deferred-waits' two consumers get it, their
// loop doing more than copies and gemms, as do two whose loop's fragments need more than a
// 384-thread block's 168 or whose epilogue loads memory: tests/test_wgmma_per_op.py), block
// barriers named over the consumers, and
// a persistent loop over the grid's tiles on both sides. With tile.ring_private_tiles (the
// CUDA target's default, TILEC_RING_PRIVATE_TILES=0 leaves it out), a GEMM's statements touch
// no shared memory but the ring's slots: its consumers meet at no block barrier around the loop
// or between tiles (the next cases: without the attribute, and a tile filled before the loop,
// keep them).

// CHECK-LABEL: gpu.func @ring
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) kernel attributes {known_block_size = array<i32: 256, 1, 1>, tile.persistent_tiles = 16 : i64
// CHECK-SAME: tile.tensor_maps = [{box = array<i64: 64, 128>, param = 0 : i64, swizzle = 128 : i64}, {box = array<i64: 64, 64>, param = 1 : i64, swizzle = 128 : i64}]
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.prefetch tensormap, %arg{{[0-9]+}} : !llvm.ptr
// CHECK-NEXT: nvvm.prefetch tensormap, %arg{{[0-9]+}} : !llvm.ptr
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.shuffle idx
// CHECK: scf.if
// CHECK-NOT: nvvm.setmaxregister
// CHECK: scf.for
// CHECK: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx {{.*}}, %c32768_i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: } else {
// CHECK-NOT: nvvm.setmaxregister
// CHECK: scf.for
// CHECK-NOT: nvvm.barrier
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return
module attributes {tile.arch = "sm_90a", tile.ring_private_tiles} {
  func.func @ring(%A: memref<512x512xf16>, %B: memref<512x512xf16>, %C: memref<512x512xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %g = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
      %acc = tile.alloc {tile.layout = #tile.linear<[128, 128], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64], [64, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]]>} : memref<128x128xf32, "fragment">
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}, tile.tma_ring = {consumers = 1 : i64, overlap = true, persistent = true, stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%k0, %col] [64, 128] to %bs[%c0, %c0] [64, 128] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 64>, boxes = 2 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<64x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf32, "fragment"> to memref<512x512xf32>
    }
    return
  }
}

// -----

// The same GEMM not opted in: the consumers meet at a barrier ahead of the loop, after its drain
// and at the end of each persistent tile.
// CHECK-LABEL: gpu.func @ring_not_opted_in
// CHECK: } else {
// CHECK: scf.for
// CHECK: nvvm.barrier id = {{.*}} number_of_threads = %c128_i32
// CHECK-NEXT: scf.for
// CHECK: wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.barrier id = {{.*}} number_of_threads = %c128_i32
// CHECK: nvvm.barrier id = {{.*}} number_of_threads = %c128_i32
// CHECK-NEXT: scf.yield
module attributes {tile.arch = "sm_90a"} {
  func.func @ring_not_opted_in(%A: memref<512x512xf16>, %B: memref<512x512xf16>, %C: memref<512x512xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %g = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
      %acc = tile.alloc {tile.layout = #tile.linear<[128, 128], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64], [64, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]]>} : memref<128x128xf32, "fragment">
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}, tile.tma_ring = {consumers = 1 : i64, overlap = true, persistent = true, stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%k0, %col] [64, 128] to %bs[%c0, %c0] [64, 128] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 64>, boxes = 2 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<64x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf32, "fragment"> to memref<512x512xf32>
    }
    return
  }
}

// -----

// The same GEMM with its clear folded into the gemm (fold-accumulator-clears): the first K
// step's scale-d is (iteration != 0), so the ring's first iteration of every tile overwrites
// the accumulator; the later steps accumulate.
// CHECK-LABEL: gpu.func @ring_clear_first_iteration
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %c8 step %c1 {
// CHECK: %[[NOT_FIRST:.*]] = arith.cmpi ne, %[[K]], %{{.*}} : index
// CHECK: %[[SCALE:.*]] = arith.extui %[[NOT_FIRST]] : i1 to i32
// CHECK: wgmma.mma_async{{.*}}, %[[SCALE]] : (
// CHECK: wgmma.mma_async{{.*}}, %[[SCALE]] : (
// CHECK: wgmma.mma_async{{.*}}, %c1_i32{{.*}} : (
module attributes {tile.arch = "sm_90a"} {
  func.func @ring_clear_first_iteration(%A: memref<512x512xf16>, %B: memref<512x512xf16>, %C: memref<512x512xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %g = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
      %acc = tile.alloc {tile.layout = #tile.linear<[128, 128], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64], [64, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]]>} : memref<128x128xf32, "fragment">
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}, tile.tma_ring = {consumers = 1 : i64, overlap = true, persistent = true, stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%k0, %col] [64, 128] to %bs[%c0, %c0] [64, 128] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 64>, boxes = 2 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<64x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.clear_first_iteration, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf32, "fragment"> to memref<512x512xf32>
    }
    return
  }
}

// -----

// A tile filled before the ring loop and read by its gemm (attention's Q tile): the consumers
// meet at a barrier ahead of the loop (the tile's writes are read in it), after its drain and
// at the end of each tile (the next tile's copy overwrites what this one's gemms read).
// CHECK-LABEL: gpu.func @ring_tile_before_loop
// CHECK: } else {
// CHECK: scf.for
// CHECK: nvvm.barrier id = {{.*}} number_of_threads = %c128_i32
// CHECK-NEXT: scf.for
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: wgmma.mma_async
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.barrier id = {{.*}} number_of_threads = %c128_i32
// CHECK: nvvm.barrier id = {{.*}} number_of_threads = %c128_i32
// CHECK-NEXT: scf.yield
module attributes {tile.arch = "sm_90a"} {
  func.func @ring_tile_before_loop(%A: memref<512x64xf16>, %B: memref<512x512xf16>, %C: memref<512x512xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %g = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
      %acc = tile.alloc {tile.layout = #tile.linear<[128, 128], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64], [64, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]]>} : memref<128x128xf32, "fragment">
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.copy %A[%row, %c0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<512x64xf16> to memref<128x64xf16, "shared">
      tile.pipelined %c0 to %c8 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}, tile.tma_ring = {consumers = 1 : i64, overlap = true, persistent = true, stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %B[%k0, %col] [64, 128] to %bs[%c0, %c0] [64, 128] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 64>, boxes = 2 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<64x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf32, "fragment"> to memref<512x512xf32>
    }
    return
  }
}

// -----

// The accumulator's store with tile.tma_store: a third tensor map (C's, for storing); per pass
// of 64 columns the consumers' first thread waits until the previous stores have read the
// staging tile, everyone writes its registers there (128B-swizzled, 2-element vectors), fences
// them for the async proxy, and after a barrier the first thread stores the pass's two
// 32-column boxes by TMA and goes on; the kernel waits for its stores' reads before it exits.
// A register's index is its thread's swizzled index with the register's 16-byte chunk XORed in
// (one base per chunk: the next chunk's base XORs 8 into the thread's column) plus a constant
// (8 rows further: + 256), which folds into st.shared's immediate.
// CHECK-LABEL: gpu.func @ring_tma_store
// CHECK-SAME: tile.tensor_maps = [{{.*}}, {{.*}}, {box = array<i64: 32, 128>, param = 2 : i64, swizzle = 128 : i64}]
// CHECK: } else {
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.barrier id
// CHECK: vector.store %{{.*}}, %[[STAGING:.*]][%[[BASE:.*]]] {alignment = 8 : i64} : memref<8192xf32, #gpu.address_space<workgroup>>, vector<2xf32>
// CHECK-NEXT: %[[ROWS_8:.*]] = arith.constant 256 : index
// CHECK-NEXT: %[[AT:.*]] = arith.addi %[[BASE]], %[[ROWS_8]] : index
// CHECK: vector.store %{{.*}}, %[[STAGING]][%[[AT]]]
// CHECK-NEXT: %[[CHUNK_1:.*]] = arith.constant 8 : index
// CHECK-NEXT: arith.xori %[[COLUMN:.*]], %[[CHUNK_1]] : index
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.commit.group
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT: gpu.return
module attributes {tile.arch = "sm_90a"} {
  func.func @ring_tma_store(%A: memref<512x512xf16>, %B: memref<512x512xf16>, %C: memref<512x512xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %g = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
      %acc = tile.alloc {tile.layout = #tile.linear<[128, 128], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64], [64, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]]>} : memref<128x128xf32, "fragment">
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}, tile.tma_ring = {consumers = 1 : i64, overlap = true, persistent = true, stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%k0, %col] [64, 128] to %bs[%c0, %c0] [64, 128] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 64>, boxes = 2 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<64x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] {tile.store = {columns = 64 : i64, kind = "tma", swizzle = "128B"}, tile.tma_store = {box = array<i64: 32, 128>, columns = 64 : i64, swizzle = 128 : i64}} : memref<128x128xf32, "fragment"> to memref<512x512xf32>
    }
    return
  }
}

// -----

// lag = 2: the consumers leave two wgmma groups in flight and hand back the slot read two
// iterations before; after the loop both last slots go back.
// CHECK-LABEL: gpu.func @ring_lag
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 2
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return
module attributes {tile.arch = "sm_90a", tile.ring_private_tiles} {
  func.func @ring_lag(%A: memref<512x512xf16>, %B: memref<512x512xf16>, %C: memref<512x512xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %g = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
      %acc = tile.alloc {tile.layout = #tile.linear<[128, 128], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64], [64, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]]>} : memref<128x128xf32, "fragment">
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}, tile.tma_ring = {consumers = 1 : i64, lag = 2 : i64, overlap = true, persistent = true, stages = 4 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%k0, %col] [64, 128] to %bs[%c0, %c0] [64, 128] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 64>, boxes = 2 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<64x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf32, "fragment"> to memref<512x512xf32>
    }
    return
  }
}

// -----

// A register-A chain on the ring (overlap = false): after the full barrier's wait the
// consumers load their A registers from the slot's 128B-swizzled tile (plan-tma-pipelines gave
// it wgmma's K-major layout), run the gemm with A from registers and wait for it, and only
// then hand the slot back: its tile was read by the loads and its B by the wgmmas.
// CHECK-LABEL: gpu.func @ring_register_a
// CHECK: } else {
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: memref.view
// CHECK: memref.view
// CHECK-COUNT-32: vector.load {{.*}} : memref<8192xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}}, {$128, $129, $130, $131}, $132
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.wgmma.wait.group
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: nvvm.mbarrier.arrive
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return
module attributes {tile.arch = "sm_90a", tile.ring_private_tiles} {
  func.func @ring_register_a(%A: memref<512x512xf16>, %B: memref<512x512xf16>, %C: memref<512x512xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %g = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %af = tile.alloc {tile.layout = #tile.linear<[128, 64], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [64, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]]>} : memref<128x64xf16, "fragment">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
      %acc = tile.alloc {tile.layout = #tile.linear<[128, 128], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64], [64, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]]>} : memref<128x128xf32, "fragment">
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}, tile.tma_ring = {consumers = 1 : i64, overlap = false, persistent = true, stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%k0, %col] [64, 128] to %bs[%c0, %c0] [64, 128] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 64>, boxes = 2 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<64x128xf16, "shared">
        tile.copy %as[%c0, %c0] [128, 64] to %af[%c0, %c0] [128, 64] : memref<128x64xf16, "shared"> to memref<128x64xf16, "fragment">
        tile.gemm %af, %bs, %acc {tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "fragment">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf32, "fragment"> to memref<512x512xf32>
    }
    return
  }
}

// -----

// groups = 4 with the A copy's tile.a_step_loads (TILEC_REGISTER_A_STEPS=1): the copy emits
// nothing; per 32-byte K step the gemm waits until at most 3 groups are in flight (the same
// step's group of the iteration before has read its registers), loads the step's registers of
// both atoms from the slot, fences, issues the step's two wgmmas and commits them as a group;
// the slot read one iteration before goes back after wait_group 4 (all of its groups done).
// CHECK-LABEL: gpu.func @ring_register_a_steps
// CHECK: } else {
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: vector.load
// CHECK: nvvm.wgmma.wait.group.sync.aligned 3
// CHECK-COUNT-8: vector.load {{.*}} : memref<8192xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-2: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 3
// CHECK-COUNT-3: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NOT: wgmma
// CHECK: nvvm.wgmma.wait.group.sync.aligned 4
// CHECK: nvvm.mbarrier.arrive
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: nvvm.barrier
// CHECK: gpu.return
module attributes {tile.arch = "sm_90a", tile.ring_private_tiles} {
  func.func @ring_register_a_steps(%A: memref<512x512xf16>, %B: memref<512x512xf16>, %C: memref<512x512xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %g = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %af = tile.alloc {tile.layout = #tile.linear<[128, 64], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [64, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]]>} : memref<128x64xf16, "fragment">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
      %acc = tile.alloc {tile.layout = #tile.linear<[128, 128], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64], [64, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]]>} : memref<128x128xf32, "fragment">
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      tile.pipelined %c0 to %c8 step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}, tile.tma_ring = {consumers = 1 : i64, groups = 4 : i64, overlap = true, persistent = true, stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%k0, %col] [64, 128] to %bs[%c0, %c0] [64, 128] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 64>, boxes = 2 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<64x128xf16, "shared">
        tile.copy %as[%c0, %c0] [128, 64] to %af[%c0, %c0] [128, 64] {tile.a_step_loads} : memref<128x64xf16, "shared"> to memref<128x64xf16, "fragment">
        tile.gemm %af, %bs, %acc {tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "fragment">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf32, "fragment"> to memref<512x512xf32>
    }
    return
  }
}

// -----

// A ring whose B rows start at a page a block table names and whose trip count is a
// sequence's length, both loads marked tile.table_load: the producer (thread 128) loads the
// tile's length again for its loop's bound and the table's entry again in each of its
// iterations, before that iteration's cp.async.bulk.tensor.
// CHECK-LABEL: gpu.func @paged_ring
// the producer's persistent loop over the grid's tiles: the tile's length, then its ring loop
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %grid_dim_x
// CHECK: memref.load %{{.*}}[%[[BY:[0-9a-z_]+]]] {tile.table_load} : memref<4xi32, 1>
// CHECK: scf.for %[[K:[0-9a-z_]+]] = %{{.*}} to %{{.*}} step
// CHECK: memref.load %{{.*}}[%[[BY]], %[[K]]] {tile.table_load} : memref<4x16xi32, 1>
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
module attributes {tile.arch = "sm_90a"} {
  func.func @paged_ring(%A: memref<512x512xf16>, %B: memref<512x512xf16>, %C: memref<512x512xf32>, %table: memref<4x16xi32>, %lengths: memref<4xi32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %c128 = arith.constant 128 : index
    %g = arith.constant 4 : index
    %zero = arith.constant 0.0 : f32
    tile.kernel grid(%g, %g) threads [128] {
    ^bb0(%bx: index, %by: index):
      %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %bs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<64x128xf16, "shared">
      %acc = tile.alloc {tile.layout = #tile.linear<[128, 128], register = [[0, 1], [8, 0], [0, 8], [0, 16], [0, 32], [0, 64], [64, 0]], lane = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]], warp = [[16, 0], [32, 0]]>} : memref<128x128xf32, "fragment">
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %c128 : index
      %col = arith.muli %bx, %c128 : index
      %length = memref.load %lengths[%by] {tile.table_load} : memref<4xi32>
      %n = arith.index_cast %length : i32 to index
      tile.pipelined %c0 to %n step %c1 stages 3 attributes {tile.pipeline = {k_tile = 64 : i64, mechanism = "cp.async", stages = 3 : i64}, tile.tma_ring = {consumers = 1 : i64, overlap = true, persistent = true, stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c64 : index
        %entry = memref.load %table[%by, %k] {tile.table_load} : memref<4x16xi32>
        %page = arith.index_cast %entry : i32 to index
        %b0 = arith.muli %page, %c64 : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<128x64xf16, "shared">
        tile.copy %B[%b0, %col] [64, 128] to %bs[%c0, %c0] [64, 128] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 64>, boxes = 2 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<64x128xf16, "shared">
        tile.gemm %as, %bs, %acc {tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<64x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf32, "fragment"> to memref<512x512xf32>
    }
    return
  }
}
