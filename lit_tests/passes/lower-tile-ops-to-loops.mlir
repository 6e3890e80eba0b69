// RUN: tilec-opt --lower-tile-ops-to-loops %s --split-input-file | FileCheck %s
// Each block-level op becomes a loop nest of scalar loads and stores; region ops stay.

// A global source read through a guard (zero outside), a shared destination written directly.
// CHECK-LABEL: func.func @copy_global_to_shared
// CHECK: tile.kernel
// CHECK: %[[ROWS:.*]] = memref.dim %arg0, %{{.*}} : memref<?x?xf16>
// CHECK: %[[COLS:.*]] = memref.dim %arg0, %{{.*}} : memref<?x?xf16>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[R:.*]] = arith.addi %{{.*}}, %[[I]] : index
// CHECK: %[[C:.*]] = arith.addi %{{.*}}, %[[J]] : index
// CHECK: %[[IN_R:.*]] = arith.cmpi ult, %[[R]], %[[ROWS]] : index
// CHECK: %[[IN_C:.*]] = arith.cmpi ult, %[[C]], %[[COLS]] : index
// CHECK: %[[IN:.*]] = arith.andi %[[IN_R]], %[[IN_C]] : i1
// CHECK: %[[V:.*]] = scf.if %[[IN]] -> (f16) {
// CHECK: memref.load %arg0[%[[R]], %[[C]]] : memref<?x?xf16>
// CHECK: } else {
// CHECK: arith.constant 0.000000e+00 : f16
// CHECK: memref.store %[[V]], %{{.*}} : memref<4x8xf16, "shared">
// CHECK-NOT: tile.copy
func.func @copy_global_to_shared(%a: memref<?x?xf16>, %n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %s = tile.alloc : memref<4x8xf16, "shared">
    tile.copy %a[%bx, %c0] [4, 8] to %s[%c0, %c0] [4, 8] : memref<?x?xf16> to memref<4x8xf16, "shared">
  }
  return
}

// -----

// Writes to a global buffer are skipped outside it.
// CHECK-LABEL: func.func @copy_fragment_to_global
// CHECK: scf.for
// CHECK: %[[V:.*]] = memref.load %{{.*}} : memref<16xf32, "fragment">
// CHECK: %[[IN:.*]] = arith.cmpi ult
// CHECK: scf.if %[[IN]] {
// CHECK-NEXT: memref.store %[[V]], %arg0[%{{.*}}] : memref<?xf32>
func.func @copy_fragment_to_global(%out: memref<?xf32>, %n: index) {
  tile.kernel grid(%n) threads [16] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %f = tile.alloc : memref<16xf32, "fragment">
    tile.copy %f[%c0] [16] to %out[%bx] [16] : memref<16xf32, "fragment"> to memref<?xf32>
  }
  return
}

// -----

// A box provably inside a static global buffer needs no guard.
// CHECK-LABEL: func.func @copy_static_inside
// CHECK-NOT: scf.if
// CHECK-NOT: arith.cmpi
// CHECK: memref.load %arg0
// CHECK: memref.store
func.func @copy_static_inside(%a: memref<8x8xf32>) {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [32] {
  ^bb0(%bx: index):
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %s = tile.alloc : memref<4x8xf32, "shared">
    tile.copy %a[%c4, %c0] [4, 8] to %s[%c0, %c0] [4, 8] : memref<8x8xf32> to memref<4x8xf32, "shared">
  }
  return
}

// -----

// C[i, j] += A[i, k] * B[k, j] in i, k, j order, accumulated in f32 with the f16 inputs
// extended first.
// CHECK-LABEL: func.func @gemm
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[A:.*]] = memref.load %{{.*}}[%[[I]], %[[K]]] : memref<16x32xf16, "shared">
// CHECK: %[[A32:.*]] = arith.extf %[[A]] : f16 to f32
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[B:.*]] = memref.load %{{.*}}[%[[K]], %[[J]]] : memref<32x8xf16, "shared">
// CHECK: %[[B32:.*]] = arith.extf %[[B]] : f16 to f32
// CHECK: %[[OLD:.*]] = memref.load %[[C:.*]][%[[I]], %[[J]]] : memref<16x8xf32, "fragment">
// CHECK: %[[P:.*]] = arith.mulf %[[A32]], %[[B32]] : f32
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[P]] : f32
// CHECK: memref.store %[[NEW]], %[[C]][%[[I]], %[[J]]]
func.func @gemm(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<16x32xf16, "shared">
    %b = tile.alloc : memref<32x8xf16, "shared">
    %c = tile.alloc : memref<16x8xf32, "fragment">
    tile.gemm %a, %b, %c : memref<16x32xf16, "shared">, memref<32x8xf16, "shared">, memref<16x8xf32, "fragment">
  }
  return
}

// -----

// Transposed operands swap their load indices; clear_accum zeroes C first.
// CHECK-LABEL: func.func @gemm_transposed_clear
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: scf.for %[[ZI:.*]] =
// CHECK: scf.for %[[ZJ:.*]] =
// CHECK: memref.store %[[ZERO]], %[[C:.*]][%[[ZI]], %[[ZJ]]] : memref<16x8xf32, "fragment">
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.load %{{.*}}[%[[K]], %[[I]]] : memref<32x16xf32, "shared">
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.load %{{.*}}[%[[J]], %[[K]]] : memref<8x32xf32, "fragment">
// CHECK-NOT: arith.extf
func.func @gemm_transposed_clear(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<32x16xf32, "shared">
    %b = tile.alloc : memref<8x32xf32, "fragment">
    %c = tile.alloc : memref<16x8xf32, "fragment">
    tile.gemm %a, %b, %c {transpose_a = true, transpose_b = true, clear_accum = true} : memref<32x16xf32, "shared">, memref<8x32xf32, "fragment">, memref<16x8xf32, "fragment">
  }
  return
}

// -----

// Integer inputs are sign-extended to the accumulator and combined with muli/addi.
// CHECK-LABEL: func.func @gemm_int8
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.extsi %{{.*}} : i8 to i32
// CHECK: arith.muli
// CHECK: arith.addi
func.func @gemm_int8(%n: index) {
  tile.kernel grid(%n) threads [128] {
  ^bb0(%bx: index):
    %a = tile.alloc : memref<16x32xi8, "shared">
    %b = tile.alloc : memref<32x8xi8, "shared">
    %c = tile.alloc : memref<16x8xi32, "fragment">
    tile.gemm %a, %b, %c : memref<16x32xi8, "shared">, memref<32x8xi8, "shared">, memref<16x8xi32, "fragment">
  }
  return
}

// -----

// CHECK-LABEL: func.func @fill
// CHECK: %[[V:.*]] = arith.constant 2.500000e+00 : f32
// CHECK: scf.for %[[I:.*]] =
// CHECK: scf.for %[[J:.*]] =
// CHECK: memref.store %[[V]], %{{.*}}[%[[I]], %[[J]]] : memref<4x8xf32, "fragment">
// CHECK-NOT: tile.fill
func.func @fill(%n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %f = tile.alloc : memref<4x8xf32, "fragment">
    %v = arith.constant 2.5 : f32
    tile.fill %f, %v : memref<4x8xf32, "fragment">, f32
  }
  return
}

// -----

// A plain read-modify-write: one CPU thread runs every block in turn.
// CHECK-LABEL: func.func @atomic_add
// CHECK: %[[OLD:.*]] = memref.load %arg0[%{{.*}}] : memref<?xf32>
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %{{.*}} : f32
// CHECK: memref.store %[[NEW]], %arg0[%{{.*}}] : memref<?xf32>
func.func @atomic_add(%out: memref<?xf32>, %n: index) {
  tile.kernel grid(%n) threads [32] {
  ^bb0(%bx: index):
    %one = arith.constant 1.0 : f32
    tile.atomic_add %out[%bx], %one : memref<?xf32>, f32
  }
  return
}
