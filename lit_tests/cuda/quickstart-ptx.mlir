// The quickstart GEMM (examples/quickstart.py) through the whole CUDA target: its PTX must
// assemble with ptxas for both chips, with the kernel's structure visible in it.
// RUN: tilec %examples/quickstart.py --target cuda:sm_90a --const M=512 --const N=384 --const K=256 --emit ptx -o %t.sm_90a.ptx
// RUN: %ptxas -arch=sm_90a %t.sm_90a.ptx -o %t.sm_90a.cubin
// RUN: FileCheck %s --check-prefixes=CHECK,SM90 < %t.sm_90a.ptx
// RUN: tilec %examples/quickstart.py --target cuda:sm_80 --const M=512 --const N=384 --const K=256 --emit ptx -o %t.sm_80.ptx
// RUN: %ptxas -arch=sm_80 %t.sm_80.ptx -o %t.sm_80.cubin
// RUN: FileCheck %s --check-prefixes=CHECK,SM80 < %t.sm_80.ptx

// SM90: .target sm_90a
// SM80: .target sm_80
// CHECK: .entry matmul(
// CHECK-NEXT: .param .u64 .ptr .align 1 matmul_param_0,
// CHECK-NEXT: .param .u64 .ptr .align 1 matmul_param_1,
// CHECK-NEXT: .param .u64 .ptr .align 1 matmul_param_2
// The GEMM runs on tensor cores. sm_90a: a producer warpgroup beside the user's 128 threads
// loads tiles with TMA into an mbarrier ring, the consumer warpgroup multiplies with wgmma, and
// the epilogue stores C with TMA.
// SM90: .maxntid 256, 1, 1
// SM90: mbarrier.init.shared.b64
// SM90: cp.async.bulk.tensor.2d.shared::cluster.global
// SM90: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// SM90: cp.async.bulk.tensor.2d.global.shared::cta
// sm_80: a cp.async ring, ldmatrix fragments and mma.sync.
// SM80: .maxntid 128, 1, 1
// SM80: cp.async.cg.shared.global
// SM80: ldmatrix.sync.aligned
// SM80: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
