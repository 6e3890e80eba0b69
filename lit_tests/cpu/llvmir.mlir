// RUN: tilec-opt --run-target=cpu --stop-after=llvmir %s | FileCheck %s
// The LLVM IR the CPU target links: memref parameters expanded (pointer, pointer, offset,
// sizes, strides), bf16 values carried as i16 bit patterns.

// CHECK: define void @tilec_copy_bf16(ptr %{{.*}}, ptr %{{.*}}, i64 %{{.*}}, i64 %{{.*}}, i64 %{{.*}}, i64 %{{.*}}, i64 %{{.*}}, ptr %{{.*}}, ptr %{{.*}}, i64 %{{.*}}, i64 %{{.*}}, i64 %{{.*}}, i64 %{{.*}}, i64 %{{.*}})
// CHECK-NOT: bfloat
// CHECK: load i16
// CHECK: store i16
func.func @copy_bf16(%x: memref<?x?xbf16>, %y: memref<?x?xbf16>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x?xbf16>
  tile.kernel grid(%rows) threads [16] {
  ^bb0(%r: index):
    %f = tile.alloc : memref<16xbf16, "fragment">
    tile.copy %x[%r, %c0] [1, 16] to %f[%c0] [16] : memref<?x?xbf16> to memref<16xbf16, "fragment">
    tile.copy %f[%c0] [16] to %y[%r, %c0] [1, 16] : memref<16xbf16, "fragment"> to memref<?x?xbf16>
  }
  return
}
