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
// CHECK-NEXT: .param .u64 .ptr .global .align 1 matmul_param_0,
// CHECK-NEXT: .param .u64 .ptr .global .align 1 matmul_param_1,
// CHECK-NEXT: .param .u64 .ptr .global .align 1 matmul_param_2
// CHECK: .maxntid 128, 1, 1
// tiles staged in shared memory with 16-byte global loads, a barrier between copy and gemm
// CHECK: ld.global.v4.b32
// CHECK: st.shared.v4.b32
// CHECK: bar.sync
// CHECK: fma.rn.f32
