// RUN: tilec-opt --run-target=hip:gfx942 --stop-after=rocdl --split-input-file %s | FileCheck %s
// RUN: tilec-opt --run-target=hip:gfx90a --stop-after=rocdl --split-input-file %s | FileCheck %s --check-prefix=GFX90A
// tile.gemm on AMD matrix cores through the hip target's MLIR stages (no AMD toolchain
// needed): plan-mfma-gemms' instruction per operand type and chip, lowered to rocdl.mfma ops fed
// from LDS by the operand layouts.

// f16 on gfx942, 2 x 2 waves of one 32 x 32 block each, K 32 in four steps: after the barrier
// that follows the copies into LDS, each lane reads its four A elements from LDS (address
// space 3) as one vector (they lie side by side in A's row) and its four B elements one by one
// (down B's column), and issues the MFMA on its 16 accumulator registers; the steps chain
// through the accumulator vector. The T.Parallel epilogue reads the
// registers where the MFMA left them (no conversion through LDS).
// GFX90A: gpu.module @kernels [#rocdl.target<O = 3, chip = "gfx90a">]
// GFX90A-LABEL: llvm.func @gemm_relu(
// GFX90A-COUNT-4: rocdl.mfma.f32.32x32x8f16
// CHECK-LABEL: llvm.func @gemm_relu(
// CHECK: rocdl.barrier
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> vector<4xf16>
// CHECK-COUNT-4: llvm.load %{{.*}} : !llvm.ptr<3> -> f16
// CHECK: %[[ACC:.*]] = rocdl.mfma.f32.32x32x8f16 %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (vector<4xf16>, vector<4xf16>, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
// CHECK-COUNT-2: rocdl.mfma.f32.32x32x8f16
// CHECK: rocdl.mfma.f32.32x32x8f16
// CHECK-NOT: rocdl.mfma
// CHECK: llvm.intr.maximum
module {
  func.func @gemm_relu(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %zero = arith.constant 0.0 : f32
      %as = tile.alloc : memref<64x32xf16, "shared">
      %bs = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.fill %acc, %zero : memref<64x64xf32, "fragment">, f32
      %row = arith.muli %by, %c64 : index
      %col = arith.muli %bx, %c64 : index
      tile.for %c0 to %c8 step %c1 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%row, %k0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<256x256xf16> to memref<64x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<256x256xf16> to memref<32x64xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      tile.parallel [64, 64] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<64x64xf32, "fragment">
        %r = arith.maximumf %v, %zero : f32
        memref.store %r, %acc[%i, %j] : memref<64x64xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%row, %col] [64, 64] : memref<64x64xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// bf16: the _1k instruction, its operands as vector<4xi16>.
// GFX90A-LABEL: llvm.func @bf16(
// GFX90A-COUNT-4: rocdl.mfma.f32.32x32x8bf16.1k
// CHECK-LABEL: llvm.func @bf16(
// CHECK-COUNT-4: rocdl.mfma.f32.32x32x8bf16.1k %{{.*}} : (vector<4xi16>, vector<4xi16>, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
// CHECK-NOT: rocdl.mfma
module {
  func.func @bf16(%A: memref<256x256xbf16>, %B: memref<256x256xbf16>, %C: memref<256x256xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %zero = arith.constant 0.0 : f32
      %as = tile.alloc : memref<64x32xbf16, "shared">
      %bs = tile.alloc : memref<32x64xbf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.fill %acc, %zero : memref<64x64xf32, "fragment">, f32
      %row = arith.muli %by, %c64 : index
      %col = arith.muli %bx, %c64 : index
      tile.for %c0 to %c8 step %c1 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%row, %k0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<256x256xbf16> to memref<64x32xbf16, "shared">
        tile.copy %B[%k0, %col] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<256x256xbf16> to memref<32x64xbf16, "shared">
        tile.gemm %as, %bs, %acc : memref<64x32xbf16, "shared">, memref<32x64xbf16, "shared">, memref<64x64xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%row, %col] [64, 64] : memref<64x64xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// int8 on gfx942: eight bytes per lane as one i64, K 32 in two steps of 16.
// On gfx90a: four bytes per lane as one i32, four steps of 8.
// GFX90A-LABEL: llvm.func @int8(
// GFX90A-COUNT-4: rocdl.mfma.i32.32x32x8i8 %{{.*}} : (i32, i32, vector<16xi32>, i32, i32, i32) -> vector<16xi32>
// GFX90A-NOT: rocdl.mfma
// CHECK-LABEL: llvm.func @int8(
// CHECK-COUNT-2: rocdl.mfma.i32.32x32x16.i8 %{{.*}} : (i64, i64, vector<16xi32>, i32, i32, i32) -> vector<16xi32>
// CHECK-NOT: rocdl.mfma
module {
  func.func @int8(%A: memref<256x256xi8>, %B: memref<256x256xi8>, %C: memref<256x256xi32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %zero = arith.constant 0 : i32
      %as = tile.alloc : memref<64x32xi8, "shared">
      %bs = tile.alloc : memref<32x64xi8, "shared">
      %acc = tile.alloc : memref<64x64xi32, "fragment">
      tile.fill %acc, %zero : memref<64x64xi32, "fragment">, i32
      %row = arith.muli %by, %c64 : index
      %col = arith.muli %bx, %c64 : index
      tile.for %c0 to %c8 step %c1 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%row, %k0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<256x256xi8> to memref<64x32xi8, "shared">
        tile.copy %B[%k0, %col] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<256x256xi8> to memref<32x64xi8, "shared">
        tile.gemm %as, %bs, %acc : memref<64x32xi8, "shared">, memref<32x64xi8, "shared">, memref<64x64xi32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%row, %col] [64, 64] : memref<64x64xi32, "fragment"> to memref<256x256xi32>
    }
    return
  }
}

// -----

// FNUZ fp8 on gfx942: eight per lane as one i64; gfx90a has no fp8 MFMA (the SIMT path).
// GFX90A-LABEL: llvm.func @fp8(
// GFX90A-NOT: rocdl.mfma
// CHECK-LABEL: llvm.func @fp8(
// CHECK-COUNT-2: rocdl.mfma.f32.32x32x16.fp8.fp8 %{{.*}} : (i64, i64, vector<16xf32>, i32, i32, i32) -> vector<16xf32>
// CHECK-NOT: rocdl.mfma
module {
  func.func @fp8(%A: memref<256x256xf8E4M3FNUZ>, %B: memref<256x256xf8E4M3FNUZ>, %C: memref<256x256xf32>) attributes {tile.entry} {
    %g = arith.constant 4 : index
    tile.kernel grid(%g, %g) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %c64 = arith.constant 64 : index
      %zero = arith.constant 0.0 : f32
      %as = tile.alloc : memref<64x32xf8E4M3FNUZ, "shared">
      %bs = tile.alloc : memref<32x64xf8E4M3FNUZ, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.fill %acc, %zero : memref<64x64xf32, "fragment">, f32
      %row = arith.muli %by, %c64 : index
      %col = arith.muli %bx, %c64 : index
      tile.for %c0 to %c8 step %c1 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c32 : index
        tile.copy %A[%row, %k0] [64, 32] to %as[%c0, %c0] [64, 32] : memref<256x256xf8E4M3FNUZ> to memref<64x32xf8E4M3FNUZ, "shared">
        tile.copy %B[%k0, %col] [32, 64] to %bs[%c0, %c0] [32, 64] : memref<256x256xf8E4M3FNUZ> to memref<32x64xf8E4M3FNUZ, "shared">
        tile.gemm %as, %bs, %acc : memref<64x32xf8E4M3FNUZ, "shared">, memref<32x64xf8E4M3FNUZ, "shared">, memref<64x64xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%row, %col] [64, 64] : memref<64x64xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}
