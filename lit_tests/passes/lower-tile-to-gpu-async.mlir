// RUN: tilec-opt --insert-shared-barriers --lower-tile-to-gpu %s --split-input-file | FileCheck %s
// T.Pipelined loops marked by pipeline-async-copies (written here by hand) become cp.async
// software pipelines: each pipelined copy's shared tile gets S slots, a prologue fills slots
// 0..S-2, every iteration waits for its own group (wait_group S-2), synchronizes, issues the
// copies of iteration i+S-1 into slot (i+S-1) mod S (predicated off past the end), commits and
// computes on slot i mod S; the drain waits for everything. Elements outside the tensor are
// zero-filled through cp.async's src-size; where the tensor's alignment does not allow cp.async
// (checked once per iteration's copies) they are read element by element (0 outside), as the
// synchronous copy does. Copies not
// marked, and loops not marked, stay synchronous.

// Three stages, f32 rows of 64 (16-byte chunks of 4 elements, 256 chunks over 128 threads).
// CHECK-LABEL: gpu.func @rowsum_stages3
// three 16x64xf32 slots
// CHECK-SAME: tile.shared_bytes = 12288 : i64
// CHECK: %[[SMEM:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[KT:.*]] = arith.ceildivui %{{.*}}, %c64
// prologue: iteration 0 into slot 0 (offset 0), iteration 1 into slot 1 (offset 4096)
// CHECK: %[[GO0:.*]] = arith.cmpi slt, %{{.*}}, %[[KT]] : index
// CHECK-NEXT: scf.if %[[GO0]] {
// the base pointer's and the row length's alignment, checked once for the iteration's copies
// CHECK: %[[PITCH:.*]] = arith.remui %{{.*}}, %c4 : index
// CHECK: %[[PITCHOK:.*]] = arith.cmpi eq, %[[PITCH]], %{{.*}} : index
// CHECK: %[[ALIGNED:.*]] = arith.andi %{{.*}}, %[[PITCHOK]] : i1
// CHECK-NEXT: scf.if %[[ALIGNED]] {
// CHECK: %[[SLOT0:.*]] = memref.view %[[SMEM]][%c0{{.*}}][] : {{.*}} to memref<16x64xf32, #gpu.address_space<workgroup>>
// two chunks per thread (256 over 128 threads), straight-line code: the first at the thread's
// index; the column is a multiple of the chunk and so is the row length (checked), so each
// chunk is one cp.async with no branch, src-size 4 inside the tensor and 0 outside (a row
// below it then reads from element [0, 0])
// CHECK-NOT: scf.for
// CHECK: arith.remui %thread_id_x, %c16
// CHECK-NOT: scf.if
// CHECK: %[[INROW:.*]] = arith.cmpi ult, %[[COL:.*]], %[[LEN:.*]] : index
// CHECK: %[[UPTO4:.*]] = arith.select %[[INROW]], %c4{{.*}}, %{{.*}} : index
// CHECK: %[[ROWOK:.*]] = arith.cmpi ult, %[[ROW:.*]], %{{.*}} : index
// CHECK: %[[COUNT:.*]] = arith.select %[[ROWOK]], %[[UPTO4]], %{{.*}} : index
// CHECK: %[[LIVE:.*]] = arith.cmpi ne, %[[COUNT]], %{{.*}} : index
// CHECK-NEXT: %{{.*}} = arith.constant 0 : index
// CHECK-NEXT: %[[R:.*]] = arith.select %[[LIVE]], %[[ROW]], %{{.*}} : index
// CHECK-NEXT: %{{.*}} = arith.constant 0 : index
// CHECK-NEXT: %[[C:.*]] = arith.select %[[LIVE]], %[[COL]], %{{.*}} : index
// CHECK-NEXT: %{{.*}} = nvgpu.device_async_copy %{{.*}}[%[[R]], %[[C]]], %[[SLOT0]][%{{.*}}, %{{.*}}], 4, %[[COUNT]] {bypassL1} : memref<?x?xf32, 1> to memref<16x64xf32, #gpu.address_space<workgroup>>
// CHECK-NOT: scf.if
// CHECK: nvgpu.device_async_copy
// otherwise every chunk element by element, zeros outside, one 16-byte store into the slot
// CHECK: } else {
// CHECK: memref.view %[[SMEM]][%c0{{.*}}][]
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: scf.if %{{.*}} -> (f32) {
// CHECK: memref.load %{{.*}} : memref<?x?xf32, 1>
// CHECK: } else {
// CHECK: arith.constant 0.000000e+00 : f32
// CHECK: vector.from_elements
// CHECK-NEXT: vector.store %{{.*}} {alignment = 16 : i64}
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK: arith.cmpi slt, %c1{{.*}}, %[[KT]] : index
// CHECK: memref.view %[[SMEM]][%c4096{{.*}}][]
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// the loop: wait for iteration k's group (one may stay in flight), barrier, issue k + 2
// into slot (k + 2) mod 3, commit, compute on slot k mod 3
// CHECK-NEXT: scf.for %[[K:.*]] = %{{.*}} to %[[KT]] step %{{.*}} {
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK: %[[NOW:.*]] = arith.remui %[[K]], %c3
// CHECK: %[[NOWAT:.*]] = arith.muli %[[NOW]], %c4096
// CHECK-NEXT: %[[CURRENT:.*]] = memref.view %[[SMEM]][%[[NOWAT]]][]
// CHECK: %[[AHEAD:.*]] = arith.addi %[[K]], %c2
// CHECK: %[[NEXT:.*]] = arith.remui %{{.*}}, %c3
// CHECK: %[[GO:.*]] = arith.cmpi slt, %[[AHEAD]], %[[KT]] : index
// CHECK-NEXT: scf.if %[[GO]] {
// CHECK: %[[NEXTAT:.*]] = arith.muli %[[NEXT]], %c4096
// CHECK-NEXT: %[[LATER:.*]] = memref.view %[[SMEM]][%[[NEXTAT]]][]
// CHECK: arith.muli %[[AHEAD]], %c64
// CHECK: nvgpu.device_async_copy %{{.*}}, %[[LATER]]
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: gpu.barrier
// CHECK: vector.load %[[CURRENT]]
// CHECK: gpu.shuffle xor
// the drain, behind the loop
// CHECK-NOT: nvvm.cp.async
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: gpu.return
func.func @rowsum_stages3(%X: memref<?x?xf32>, %out: memref<?xf32>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %M = memref.dim %X, %c0 : memref<?x?xf32>
  %K = memref.dim %X, %c1 : memref<?x?xf32>
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %g = arith.ceildivui %M, %c16 : index
  %kt = arith.ceildivui %K, %c64 : index
  tile.kernel grid(%g) threads [128] {
  ^bb0(%bx: index):
    %Xs = tile.alloc : memref<16x64xf32, "shared">
    %F = tile.alloc {tile.layout = #tile.linear<[16, 64], register = [[0, 1], [0, 2], [8, 0]], lane = [[0, 4], [0, 8], [0, 16], [0, 32], [1, 0]], warp = [[2, 0], [4, 0]]>} : memref<16x64xf32, "fragment">
    %s = tile.alloc {tile.layout = #tile.linear<[16], register = [[8]], lane = [[0], [0], [0], [0], [1]], warp = [[2], [4]]>} : memref<16xf32, "fragment">
    %zero = arith.constant 0.0 : f32
    tile.fill %s, %zero : memref<16xf32, "fragment">, f32
    %row = arith.muli %bx, %c16 : index
    tile.pipelined %c0 to %kt step %c1 stages 3 attributes {tile.pipeline = {stages = 3 : i64, k_tile = 64 : i64, mechanism = "cp.async"}} {
    ^bb0(%k: index):
      %kk = arith.muli %k, %c64 : index
      tile.copy %X[%row, %kk] [16, 64] to %Xs[%c0, %c0] [16, 64] {tile.async = "cp.async"} : memref<?x?xf32> to memref<16x64xf32, "shared">
      tile.copy %Xs[%c0, %c0] [16, 64] to %F[%c0, %c0] [16, 64] : memref<16x64xf32, "shared"> to memref<16x64xf32, "fragment">
      tile.reduce "sum" %F to %s dim 1 {clear = false} : memref<16x64xf32, "fragment"> to memref<16xf32, "fragment">
    }
    tile.copy %s[%c0] [16] to %out[%row] [16] : memref<16xf32, "fragment"> to memref<?xf32>
  }
  return
}

// -----

// Two stages, two f16 tiles (8-element chunks), a loop from 2 by 2: the iteration number is
// (k - 2) / 2; one prologue group, wait_group 0 in the loop. The two tiles get two slots each
// (2 x 2048 bytes, the second ring at the next 128-byte boundary).
// CHECK-LABEL: gpu.func @two_tiles_stages2
// CHECK-SAME: tile.shared_bytes = 8192 : i64
// CHECK: %[[GO:.*]] = arith.cmpi slt, %c2{{.*}}, %[[N:.*]] : index
// CHECK-NEXT: scf.if %[[GO]] {
// CHECK: %[[A0:.*]] = memref.view %{{.*}}[%c0{{.*}}][] : {{.*}} to memref<32x32xf16, #gpu.address_space<workgroup>>
// CHECK: %[[B0:.*]] = memref.view %{{.*}}[%c4096{{.*}}][] : {{.*}} to memref<32x32xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy %{{.*}}, %[[A0]][%{{.*}}, %{{.*}}], 8, %{{.*}} {bypassL1} : memref<?x?xf16, 1>
// CHECK: nvgpu.device_async_copy %{{.*}}, %[[B0]][%{{.*}}, %{{.*}}], 8, %{{.*}} {bypassL1} : memref<?x?xf16, 1>
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: scf.for %[[K:.*]] = %c2{{.*}} to %[[N]] step %c2{{.*}} {
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[SHIFTED:.*]] = arith.subi %[[K]], %c2
// CHECK-NEXT: %[[I:.*]] = arith.divui %[[SHIFTED]], %c2
// CHECK: arith.remui %[[I]], %c2
// CHECK: arith.addi %[[K]], %c2
// CHECK: nvgpu.device_async_copy
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK: arith.mulf
// CHECK-NOT: nvvm.cp.async
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
func.func @two_tiles_stages2(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %out: memref<32x32xf32>, %n: index) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %As = tile.alloc : memref<32x32xf16, "shared">
    %Bs = tile.alloc : memref<32x32xf16, "shared">
    %Fa = tile.alloc {tile.layout = #tile.linear<[32, 32], register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]]>} : memref<32x32xf16, "fragment">
    %Fb = tile.alloc {tile.layout = #tile.linear<[32, 32], register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]]>} : memref<32x32xf16, "fragment">
    %acc = tile.alloc {tile.layout = #tile.linear<[32, 32], register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]]>} : memref<32x32xf32, "fragment">
    %zero = arith.constant 0.0 : f32
    tile.fill %acc, %zero : memref<32x32xf32, "fragment">, f32
    tile.pipelined %c2 to %n step %c2 stages 2 attributes {tile.pipeline = {stages = 2 : i64, k_tile = 32 : i64, mechanism = "cp.async"}} {
    ^bb0(%k: index):
      %c32 = arith.constant 32 : index
      %kk = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %kk] [32, 32] to %As[%c0, %c0] [32, 32] {tile.async = "cp.async"} : memref<?x?xf16> to memref<32x32xf16, "shared">
      tile.copy %B[%kk, %c0] [32, 32] to %Bs[%c0, %c0] [32, 32] {tile.async = "cp.async"} : memref<?x?xf16> to memref<32x32xf16, "shared">
      tile.copy %As[%c0, %c0] [32, 32] to %Fa[%c0, %c0] [32, 32] : memref<32x32xf16, "shared"> to memref<32x32xf16, "fragment">
      tile.copy %Bs[%c0, %c0] [32, 32] to %Fb[%c0, %c0] [32, 32] : memref<32x32xf16, "shared"> to memref<32x32xf16, "fragment">
      tile.parallel [32, 32] attributes {tile.layout = #tile.linear<[32, 32], register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]]>} {
      ^bb0(%i: index, %j: index):
        %a = memref.load %Fa[%i, %j] : memref<32x32xf16, "fragment">
        %b = memref.load %Fb[%i, %j] : memref<32x32xf16, "fragment">
        %c = memref.load %acc[%i, %j] : memref<32x32xf32, "fragment">
        %p = arith.mulf %a, %b : f16
        %w = arith.extf %p : f16 to f32
        %s = arith.addf %c, %w : f32
        memref.store %s, %acc[%i, %j] : memref<32x32xf32, "fragment">
      }
    }
    tile.copy %acc[%c0, %c0] [32, 32] to %out[%c0, %c0] [32, 32] : memref<32x32xf32, "fragment"> to memref<32x32xf32>
  }
  return
}

// -----

// Only the marked copy runs ahead: B's copy (not marked) stays a synchronous copy into its one
// buffer, inside the loop's compute (guarded 16-byte vector loads, zeros outside).
// CHECK-LABEL: gpu.func @unmarked_copy_stays
// 2 x 2048 bytes for A's slots, then B's single 2048-byte buffer
// CHECK-SAME: tile.shared_bytes = 6144 : i64
// CHECK: %[[BS:.*]] = memref.view %{{.*}}[%c4096{{.*}}][] : {{.*}} to memref<32x32xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: scf.for
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: scf.if %{{.*}} -> (vector<8xf16>) {
// CHECK-NEXT: vector.load %{{.*}} {alignment = 16 : i64} : memref<?x?xf16, 1>, vector<8xf16>
// CHECK: vector.store %{{.*}}, %[[BS]]
// CHECK: gpu.barrier
// CHECK: vector.load %[[BS]]
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
func.func @unmarked_copy_stays(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %out: memref<32x32xf32>, %n: index) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %As = tile.alloc : memref<32x32xf16, "shared">
    %Bs = tile.alloc : memref<32x32xf16, "shared">
    %Fa = tile.alloc {tile.layout = #tile.linear<[32, 32], register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]]>} : memref<32x32xf16, "fragment">
    %Fb = tile.alloc {tile.layout = #tile.linear<[32, 32], register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]]>} : memref<32x32xf16, "fragment">
    tile.pipelined %c0 to %n step %c1 stages 2 attributes {tile.pipeline = {stages = 2 : i64, k_tile = 32 : i64, mechanism = "cp.async"}} {
    ^bb0(%k: index):
      %c32 = arith.constant 32 : index
      %kk = arith.muli %k, %c32 : index
      tile.copy %A[%c0, %kk] [32, 32] to %As[%c0, %c0] [32, 32] {tile.async = "cp.async"} : memref<?x?xf16> to memref<32x32xf16, "shared">
      tile.copy %B[%kk, %c0] [32, 32] to %Bs[%c0, %c0] [32, 32] : memref<?x?xf16> to memref<32x32xf16, "shared">
      tile.copy %As[%c0, %c0] [32, 32] to %Fa[%c0, %c0] [32, 32] : memref<32x32xf16, "shared"> to memref<32x32xf16, "fragment">
      tile.copy %Bs[%c0, %c0] [32, 32] to %Fb[%c0, %c0] [32, 32] : memref<32x32xf16, "shared"> to memref<32x32xf16, "fragment">
    }
  }
  return
}

// -----

// A loop pipeline-async-copies left alone stays a plain loop of synchronous copies, even
// with a copy marked.
// CHECK-LABEL: gpu.func @unmarked_loop
// CHECK-SAME: tile.shared_bytes = 2048 : i64
// CHECK-NOT: nvvm.cp.async
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: gpu.return
func.func @unmarked_loop(%A: memref<?x?xf16>, %n: index) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %As = tile.alloc : memref<32x32xf16, "shared">
    %Fa = tile.alloc {tile.layout = #tile.linear<[32, 32], register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]]>} : memref<32x32xf16, "fragment">
    tile.pipelined %c0 to %n step %c1 stages 3 {
    ^bb0(%k: index):
      tile.copy %A[%c0, %k] [32, 32] to %As[%c0, %c0] [32, 32] {tile.async = "cp.async"} : memref<?x?xf16> to memref<32x32xf16, "shared">
      tile.copy %As[%c0, %c0] [32, 32] to %Fa[%c0, %c0] [32, 32] : memref<32x32xf16, "shared"> to memref<32x32xf16, "fragment">
    }
  }
  return
}

// -----

// Copies whose meaning would change stay synchronous: the tile is read before the copy in the
// body (that read sees the previous iteration's data), and a copy whose source the loop
// writes. Nothing is left to pipeline, so the loop stays as it was.
// CHECK-LABEL: gpu.func @meaning_kept
// CHECK-SAME: tile.shared_bytes = 4096 : i64
// CHECK-NOT: nvvm.cp.async
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: gpu.return
func.func @meaning_kept(%A: memref<?x?xf16>, %B: memref<?x?xf16>, %n: index) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %As = tile.alloc : memref<32x32xf16, "shared">
    %Bs = tile.alloc : memref<32x32xf16, "shared">
    %Fa = tile.alloc {tile.layout = #tile.linear<[32, 32], register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]]>} : memref<32x32xf16, "fragment">
    tile.pipelined %c0 to %n step %c1 stages 3 attributes {tile.pipeline = {stages = 3 : i64, k_tile = 32 : i64, mechanism = "cp.async"}} {
    ^bb0(%k: index):
      tile.copy %As[%c0, %c0] [32, 32] to %Fa[%c0, %c0] [32, 32] : memref<32x32xf16, "shared"> to memref<32x32xf16, "fragment">
      tile.copy %A[%c0, %k] [32, 32] to %As[%c0, %c0] [32, 32] {tile.async = "cp.async"} : memref<?x?xf16> to memref<32x32xf16, "shared">
      tile.copy %B[%c0, %k] [32, 32] to %Bs[%c0, %c0] [32, 32] {tile.async = "cp.async"} : memref<?x?xf16> to memref<32x32xf16, "shared">
      tile.copy %Bs[%c0, %c0] [32, 32] to %Fa[%c0, %c0] [32, 32] : memref<32x32xf16, "shared"> to memref<32x32xf16, "fragment">
      tile.copy %Fa[%c0, %c0] [32, 32] to %B[%k, %c0] [32, 32] : memref<32x32xf16, "fragment"> to memref<?x?xf16>
    }
  }
  return
}

// -----

// A copy whose corner comes from a load pipeline-async-copies marked `tile.table_load` (a
// tensor the function only loads from: a paged cache's block table) runs ahead too: the
// table's element is loaded again for the iteration the copy is issued for, inside the branch
// that issues it only when that iteration exists (in bounds exactly where the loop's own load
// is).
// CHECK-LABEL: gpu.func @paged_copy
// CHECK-SAME: tile.shared_bytes = 4096 : i64
// prologue: iteration 0's page, loaded under its branch
// CHECK: %[[GO0:.*]] = arith.cmpi slt, %{{.*}}, %[[N:.*]] : index
// CHECK-NEXT: scf.if %[[GO0]] {
// CHECK: memref.load %{{.*}}[%{{.*}}, %c0{{.*}}] {tile.table_load} : memref<?x?xi32, 1>
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
// the loop: iteration k + 1's page, loaded under the branch that issues its copy
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %[[N]] step %{{.*}} {
// CHECK: nvvm.cp.async.wait.group 0
// CHECK: %[[AHEAD:.*]] = arith.addi %[[K]], %c1
// CHECK: %[[GO:.*]] = arith.cmpi slt, %[[AHEAD]], %[[N]] : index
// CHECK-NEXT: scf.if %[[GO]] {
// CHECK: memref.load %{{.*}}[%{{.*}}, %[[AHEAD]]] {tile.table_load} : memref<?x?xi32, 1>
// CHECK: nvgpu.device_async_copy
// CHECK: nvvm.cp.async.commit.group
func.func @paged_copy(%A: memref<?x?xf16>, %table: memref<?x?xi32>, %n: index) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %As = tile.alloc : memref<32x32xf16, "shared">
    %Fa = tile.alloc {tile.layout = #tile.linear<[32, 32], register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]]>} : memref<32x32xf16, "fragment">
    tile.pipelined %c0 to %n step %c1 stages 2 attributes {tile.pipeline = {stages = 2 : i64, k_tile = 32 : i64, mechanism = "cp.async"}} {
    ^bb0(%k: index):
      %entry = memref.load %table[%bx, %k] {tile.table_load} : memref<?x?xi32>
      %page = arith.index_cast %entry : i32 to index
      %c32 = arith.constant 32 : index
      %row = arith.muli %page, %c32 : index
      tile.copy %A[%row, %c0] [32, 32] to %As[%c0, %c0] [32, 32] {tile.async = "cp.async"} : memref<?x?xf16> to memref<32x32xf16, "shared">
      tile.copy %As[%c0, %c0] [32, 32] to %Fa[%c0, %c0] [32, 32] : memref<32x32xf16, "shared"> to memref<32x32xf16, "fragment">
    }
  }
  return
}

// -----

// The same load unmarked keeps the copy synchronous (its corner is no pure arithmetic of the
// loop index), and nothing is left to pipeline.
// CHECK-LABEL: gpu.func @paged_copy_unmarked
// CHECK-SAME: tile.shared_bytes = 2048 : i64
// CHECK-NOT: nvvm.cp.async
// CHECK-NOT: nvgpu.device_async_copy
// CHECK: gpu.return
func.func @paged_copy_unmarked(%A: memref<?x?xf16>, %table: memref<?x?xi32>, %n: index) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [128] {
  ^bb0(%bx: index):
    %As = tile.alloc : memref<32x32xf16, "shared">
    %Fa = tile.alloc {tile.layout = #tile.linear<[32, 32], register = [[0, 1], [0, 2], [0, 4]], lane = [[0, 8], [0, 16], [1, 0], [2, 0], [4, 0]], warp = [[8, 0], [16, 0]]>} : memref<32x32xf16, "fragment">
    tile.pipelined %c0 to %n step %c1 stages 2 attributes {tile.pipeline = {stages = 2 : i64, k_tile = 32 : i64, mechanism = "cp.async"}} {
    ^bb0(%k: index):
      %entry = memref.load %table[%bx, %k] : memref<?x?xi32>
      %page = arith.index_cast %entry : i32 to index
      %c32 = arith.constant 32 : index
      %row = arith.muli %page, %c32 : index
      tile.copy %A[%row, %c0] [32, 32] to %As[%c0, %c0] [32, 32] {tile.async = "cp.async"} : memref<?x?xf16> to memref<32x32xf16, "shared">
      tile.copy %As[%c0, %c0] [32, 32] to %Fa[%c0, %c0] [32, 32] : memref<32x32xf16, "shared"> to memref<32x32xf16, "fragment">
    }
  }
  return
}
