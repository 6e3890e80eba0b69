// The softmax example through the hip target's MLIR stages (no AMD toolchain needed): layouts
// over 64-lane wavefronts, row reductions as xor shuffles of width 64 within a wave and through
// LDS across its two waves, fragments in private memory, then the ROCDL dialect, with ds_bpermute for the
// shuffles, a workgroup barrier, exp2 from ocml, the kernel's fixed workgroup size and grid
// (the workgroup index's range).
// RUN: tilec %examples/softmax.py --target hip:gfx942 --const M=256 --const N=512 --emit tile-hip | FileCheck %s --check-prefix=TILE
// RUN: tilec %examples/softmax.py --target hip:gfx942 --const M=256 --const N=512 --emit gpu | FileCheck %s --check-prefix=GPU
// RUN: tilec %examples/softmax.py --target hip:gfx942 --const M=256 --const N=512 --emit rocdl | FileCheck %s --check-prefix=ROCDL
// RUN: tilec %examples/softmax.py --target hip:gfx90a --const M=256 --const N=512 --emit llvmir | FileCheck %s --check-prefix=LLVMIR

// TILE: module attributes {tile.arch = "gfx942"}
// TILE: tile.layout = #tile.linear<[4, 512], register = {{.*}}, lane = {{\[\[0, 4\], \[0, 8\], \[0, 16\], \[0, 32\], \[0, 64\], \[0, 128\]\]}}, warp = {{\[\[0, 256\]\]}}>

// GPU: gpu.func @main(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) kernel attributes {known_block_size = array<i32: 128, 1, 1>, known_grid_size = array<i32: 64, 1, 1>, tile.shared_bytes = 160 : i64}
// GPU: %[[WAVE:.*]] = arith.constant 64 : i32
// GPU: memref.alloca() {alignment = 16 : i64} : memref<16xf32, #gpu.address_space<private>>
// GPU: gpu.shuffle  xor %{{.*}}, %{{.*}}, %[[WAVE]] : f32
// GPU: gpu.barrier
// GPU-NOT: nvvm.
// GPU-NOT: nvgpu.

// ROCDL: gpu.module @kernels [#rocdl.target<O = 3, chip = "gfx942">]
// ROCDL: llvm.func @__ocml_exp2_f32(f32) -> f32
// ROCDL: llvm.func @main(%arg0: !llvm.ptr<1>, %arg1: !llvm.ptr<1>) attributes {{{.*}}rocdl.flat_work_group_size = "128,128", rocdl.kernel, rocdl.reqd_work_group_size = array<i32: 128, 1, 1>
// ROCDL: llvm.mlir.addressof @__dynamic_shmem__0 : !llvm.ptr<3>
// ROCDL: rocdl.workitem.id.x range <i32, 0, 128>
// ROCDL: rocdl.workgroup.id.x range <i32, 0, 64>
// ROCDL: llvm.alloca %{{.*}} x f32 {alignment = 16 : i64} : (i64) -> !llvm.ptr<5>
// ROCDL: rocdl.ds_bpermute
// ROCDL: rocdl.barrier

// LLVMIR: target datalayout = "{{.*}}-p3:32:32-p4:64:64-p5:32:32
// LLVMIR: target triple = "amdgcn-amd-amdhsa"
// LLVMIR: define amdgpu_kernel void @main(ptr addrspace(1) %0, ptr addrspace(1) %1)
// LLVMIR: alloca float, i64 16, align 16, addrspace(5)
// LLVMIR: call i32 @llvm.amdgcn.ds.bpermute
