// RUN: %python %S/Inputs/hopper_gemm.py dtype=f16 block_n=128 consumers=1 a_registers=True | tilec-opt --pass-pipeline="builtin.module(gpu-lower-to-nvvm-pipeline{cubin-chip=sm_90a cubin-features=+ptx80 cubin-format=isa})" | FileCheck %s

// The sm_90a generator's PTX with A from registers (HopperGemmConfig.a_registers; the
// lower-gemm-to-tensorcore pass does not choose it yet, so the generator's MLIR is lowered
// directly): each warp loads its 16 rows x 32 bytes of A from the swizzled TMA slot with
// ldmatrix x4 (the second 64-row atom at +8 KiB), fences, then issues the RS form of wgmma:
// four A registers, B's descriptor, scale-d, scale-a, scale-b and the transpose-B immediate
// alone (B is K x N: MN-major), one commit group per K step.
// CHECK: gpu.binary @kernels
// CHECK-SAME: cp.async.bulk.tensor.2d.shared::cluster.global
// CHECK-SAME: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%r{{[0-9]+}}+0];
// CHECK-SAME: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%r{{[0-9]+}}+8192];
// CHECK-SAME: wgmma.fence.sync.aligned;
// CHECK-SAME: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{{[^}]*}}}, {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %rd{{[0-9]+}}, p, 1, 1, 1;
// CHECK-SAME: wgmma.commit_group.sync.aligned;
// CHECK-SAME: wgmma.wait_group.sync.aligned 1;
// CHECK-SAME: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
