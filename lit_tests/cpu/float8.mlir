// RUN: tilec-opt --run-target=cpu --stop-after=llvm %s | FileCheck %s
// Float8 values live as i8 in the LLVM dialect; their conversions are a table and integer code.

// CHECK: llvm.mlir.global private constant @__tilec_f8e4m3fn_to_f32(dense<"0x{{[0-9A-F]+}}"> : tensor<256xf32>)
// CHECK-LABEL: llvm.func @tilec_quantize(
// CHECK-SAME: %{{.*}}: f32)
// CHECK: llvm.mlir.addressof @__tilec_f8e4m3fn_to_f32
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> f32
// CHECK: llvm.store %{{.*}}, %{{.*}} : i8, !llvm.ptr
// CHECK-NOT: f8E4M3FN
func.func @quantize(%x: memref<16xf32>, %q: memref<16xf8E4M3FN>, %s: f8E4M3FN) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [16] {
  ^bb0(%bx: index):
    tile.parallel [16] {
    ^bb1(%i: index):
      %v = memref.load %x[%i] : memref<16xf32>
      %t = arith.truncf %v : f32 to f8E4M3FN
      %r = arith.mulf %t, %s : f8E4M3FN
      memref.store %r, %q[%i] : memref<16xf8E4M3FN>
    }
  }
  return
}
