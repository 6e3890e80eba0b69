// The softmax example through the vulkan target's MLIR stages: layouts over 8-lane subgroups,
// the tensors as typed storage buffers (no pointers), each reduction's scratch a workgroup
// array of its own, row reductions as xor shuffles of width 8 and through workgroup memory,
// then the SPIR-V dialect: one GLCompute entry point of the block's size, subgroup shuffles,
// workgroup barriers, exp2 through GLSL's Exp.
// RUN: tilec %examples/softmax.py --target vulkan --const M=256 --const N=512 --emit gpu | FileCheck %s --check-prefix=GPU
// RUN: tilec %examples/softmax.py --target vulkan --const M=256 --const N=512 --emit spirv | FileCheck %s --check-prefix=SPIRV

// GPU: module attributes {gpu.container_module, tile.arch = "vulkan"}
// GPU: subgroup_size = 8
// GPU: gpu.func @main(%arg0: memref<131072xf16, #spirv.storage_class<StorageBuffer>>, %arg1: memref<131072xf16, #spirv.storage_class<StorageBuffer>>) kernel
// GPU-SAME: spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [128, 1, 1]>
// GPU: %[[WIDTH:.*]] = arith.constant 8 : i32
// GPU: memref.reinterpret_cast %arg0 to offset: [0], sizes: [256, 512], strides: [512, 1]
// GPU: memref.alloca() {alignment = 16 : i64} : memref<16xf32, #spirv.storage_class<Function>>
// GPU: gpu.shuffle  xor %{{.*}}, %{{.*}}, %[[WIDTH]] : f32
// GPU: memref.alloc() : memref<{{[0-9]+}}xf32, #spirv.storage_class<Workgroup>>
// GPU: gpu.barrier
// GPU-NOT: llvm.
// GPU-NOT: gpu.dynamic_shared_memory

// SPIRV: spirv.module @__spv__kernels Logical GLSL450 requires #spirv.vce<v1.3, [{{.*}}GroupNonUniformShuffle{{.*}}]
// SPIRV-DAG: spirv.GlobalVariable @{{.*}} : !spirv.ptr<!spirv.struct<(!spirv.array<64 x f32>)>, Workgroup>
// SPIRV-DAG: spirv.GlobalVariable @main_arg_0 bind(0, 0) : !spirv.ptr<!spirv.struct<(!spirv.array<131072 x f16, stride=2> [0])>, StorageBuffer>
// SPIRV-DAG: spirv.GlobalVariable @main_arg_1 bind(0, 1) : !spirv.ptr<!spirv.struct<(!spirv.array<131072 x f16, stride=2> [0])>, StorageBuffer>
// SPIRV: spirv.func @main
// SPIRV: spirv.GroupNonUniformShuffleXor <Subgroup>
// SPIRV: spirv.ControlBarrier <Workgroup>, <Workgroup>, <AcquireRelease|WorkgroupMemory>
// SPIRV: spirv.GL.Exp
// SPIRV: spirv.EntryPoint "GLCompute" @main
// SPIRV: spirv.ExecutionMode @main "LocalSize", 128, 1, 1
