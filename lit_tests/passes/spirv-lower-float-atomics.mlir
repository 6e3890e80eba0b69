// RUN: tilec-opt --spirv-lower-float-atomics --split-input-file --verify-diagnostics %s | FileCheck %s

// A marked store to a float pointer is the float atomic add; to an i32 pointer (the buffer
// held as bits) a loop of two atomic exchanges: the sum taken out (+0.0's bits left), the
// value carried added, the total put back, and again with what came back while it was out
// until that is +0.0's bits; the carried bits in a variable of the function's entry block.
// No compare-exchange (wgpu-native's naga misreads its result). Device scope on storage
// buffers, Workgroup scope on shared memory; an unmarked store stays.
// CHECK-LABEL: spirv.func @atomics
// CHECK: %[[CARRIED:.*]] = spirv.Variable : !spirv.ptr<i32, Function>
// CHECK: spirv.EXT.AtomicFAdd <Device> <AcquireRelease> %{{.*}}, %[[X:.*]] : !spirv.ptr<f32, StorageBuffer>
// CHECK: spirv.Store "Function" %[[CARRIED]], %[[BITS:.*]] : i32
// CHECK: spirv.mlir.loop {
// CHECK:   spirv.Branch ^[[HEADER:.*]]
// CHECK: ^[[HEADER]]:
// CHECK:   %[[ZERO:.*]] = spirv.Constant 0 : i32
// CHECK:   %[[HELD:.*]] = spirv.AtomicExchange <Workgroup> <AcquireRelease> %[[SLOT:.*]], %[[ZERO]] : !spirv.ptr<i32, Workgroup>
// CHECK:   %[[HELD_FLOAT:.*]] = spirv.Bitcast %[[HELD]] : i32 to f32
// CHECK:   %[[OWN:.*]] = spirv.Load "Function" %[[CARRIED]] : i32
// CHECK:   %[[OWN_FLOAT:.*]] = spirv.Bitcast %[[OWN]] : i32 to f32
// CHECK:   %[[SUM:.*]] = spirv.FAdd %[[HELD_FLOAT]], %[[OWN_FLOAT]] : f32
// CHECK:   %[[NEW:.*]] = spirv.Bitcast %[[SUM]] : f32 to i32
// CHECK:   %[[BACK:.*]] = spirv.AtomicExchange <Workgroup> <AcquireRelease> %[[SLOT]], %[[NEW]] : !spirv.ptr<i32, Workgroup>
// CHECK:   spirv.Store "Function" %[[CARRIED]], %[[BACK]] : i32
// CHECK:   %[[AGAIN:.*]] = spirv.INotEqual %[[BACK]], %[[ZERO]] : i32
// CHECK:   spirv.BranchConditional %[[AGAIN]], ^[[RETRY:.*]], ^[[MERGE:.*]]
// CHECK: ^[[RETRY]]:
// CHECK:   spirv.Branch ^[[HEADER]]
// CHECK: ^[[MERGE]]:
// CHECK:   spirv.mlir.merge
// CHECK: spirv.Store "StorageBuffer" %{{.*}}, %[[X]] : f32
// CHECK-NOT: spirv.AtomicCompareExchange
spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader, AtomicFloat32AddEXT], [SPV_KHR_storage_buffer_storage_class, SPV_EXT_shader_atomic_float_add]> {
  spirv.GlobalVariable @shared : !spirv.ptr<!spirv.array<8 x i32>, Workgroup>
  spirv.func @atomics(%out: !spirv.ptr<f32, StorageBuffer>, %x: f32) "None" {
    %c0 = spirv.Constant 0 : i32
    spirv.Store "StorageBuffer" %out, %x : f32 loc("tilec.float_atomic_add"("k.py":3:4))
    %base = spirv.mlir.addressof @shared : !spirv.ptr<!spirv.array<8 x i32>, Workgroup>
    %slot = spirv.AccessChain %base[%c0] : !spirv.ptr<!spirv.array<8 x i32>, Workgroup>, i32 -> !spirv.ptr<i32, Workgroup>
    %bits = spirv.Bitcast %x : f32 to i32
    spirv.Store "Workgroup" %slot, %bits : i32 loc("tilec.float_atomic_add"("k.py":5:4))
    spirv.Store "StorageBuffer" %out, %x : f32
    spirv.Return
  }
}

// -----

// A float atomic add into memory other than a storage buffer or shared memory is an error.
spirv.module Logical GLSL450 requires #spirv.vce<v1.3, [Shader], []> {
  spirv.func @private_add(%x: i32) "None" {
    %v = spirv.Variable : !spirv.ptr<i32, Function>
    // expected-error @below {{a float atomic add on Function memory}}
    spirv.Store "Function" %v, %x : i32 loc("tilec.float_atomic_add"("-":54:5))
    spirv.Return
  }
}
