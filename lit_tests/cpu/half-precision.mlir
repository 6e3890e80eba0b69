// RUN: tilec-opt --run-target=cpu --stop-after=llvm %s --split-input-file | FileCheck %s
// x86 has no f16/bf16 arithmetic: math and arith run in f32 between conversions; bf16
// conversions become integer code (no __truncsfbf2 call).

// CHECK-LABEL: llvm.func @tilec_half(
// CHECK-SAME: %{{.*}}: f32)
// CHECK: llvm.fptrunc %{{.*}} : f32 to f16
// CHECK: llvm.fpext %{{.*}} : f16 to f32
// CHECK: llvm.intr.exp(%{{.*}}) : (f32) -> f32
// CHECK: llvm.fmul %{{.*}}, %{{.*}} : f32
// CHECK: llvm.fptrunc %{{.*}} : f32 to f16
// CHECK-NOT: llvm.fmul {{.*}} : f16
func.func @half(%x: memref<8xf16>, %s: f16) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [8] {
  ^bb0(%bx: index):
    tile.parallel [8] {
    ^bb1(%i: index):
      %v = memref.load %x[%i] : memref<8xf16>
      %e = math.exp %v : f16
      %r = arith.mulf %e, %s : f16
      memref.store %r, %x[%i] : memref<8xf16>
    }
  }
  return
}

// -----

// CHECK-LABEL: llvm.func @tilec_brain(
// CHECK-NOT: llvm.fptrunc {{.*}} to bf16
// CHECK-NOT: llvm.fpext {{.*}} : bf16
// CHECK: llvm.bitcast %{{.*}} : bf16 to i16
// CHECK: llvm.intr.tanh(%{{.*}}) : (f32) -> f32
// CHECK: llvm.bitcast %{{.*}} : i16 to bf16
func.func @brain(%x: memref<8xbf16>) attributes {tile.entry} {
  %c1 = arith.constant 1 : index
  tile.kernel grid(%c1) threads [8] {
  ^bb0(%bx: index):
    tile.parallel [8] {
    ^bb1(%i: index):
      %v = memref.load %x[%i] : memref<8xbf16>
      %t = math.tanh %v : bf16
      memref.store %t, %x[%i] : memref<8xbf16>
    }
  }
  return
}
