// RUN: tilec-opt --infer-mma-layout --select-shared-swizzle --select-epilogue-store --pipeline-async-copies --specialize-warps --rasterize-blocks --lower-gemm-to-tensorcore --split-input-file %s | FileCheck %s

// The canonical tile GEMM becomes a generated tensor-core kernel: gpu.module @kernels with the
// kernel named as the entry, the entry emptied, launch metadata as tile.tensorcore (JSON).

// The quickstart (128x128x32, 128 threads, 3 stages) on sm_90a (the default arch).
// CHECK: module attributes {gpu.container_module, tile.tensorcore = "{\22arch\22: \22sm_90a\22, \22abi\22: {{\[}}[\22tma\22, 0, \22A\22], [\22tma\22, 1, \22B\22], [\22tma\22, 2, \22C\22]], \22threads\22: [256, 1, 1]
// CHECK-SAME: \22grid\22: [132, 1, 1]
// CHECK-LABEL: func.func @matmul
// CHECK-NEXT: return
// CHECK: gpu.module @kernels
// CHECK: gpu.func @matmul(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) kernel attributes {known_block_size = array<i32: 256, 1, 1>
// CHECK: arith.constant 4096 : i32
// CHECK: gpu.shuffle idx
// CHECK: nvgpu.mbarrier.init
// CHECK: nvgpu.tma.async.load
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16
// CHECK: cvt.rn.f16x2.f32
// CHECK: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
module {
  func.func @matmul(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// TileLang's tuned config, bf16, ragged sizes: 2 consumer warpgroups, m64n256 wgmma.
// CHECK: \22threads\22: [384, 1, 1]
// CHECK-LABEL: func.func @tuned
// CHECK: gpu.func @tuned(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: arith.constant 1000 : i32
// CHECK: arith.constant 1016 : i32
// CHECK: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK: cvt.rn.bf16x2.f32
module {
  func.func @tuned(%A: memref<1000x1000xbf16>, %B: memref<1000x1016xbf16>, %C: memref<1000x1016xbf16>) attributes {tile.entry} {
    %gx = arith.constant 4 : index
    %gy = arith.constant 8 : index
    tile.kernel grid(%gx, %gy) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 256 : index
      %bk = arith.constant 64 : index
      %kt = arith.constant 16 : index
      %as = tile.alloc : memref<128x64xbf16, "shared">
      %bs = tile.alloc : memref<64x256xbf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x256xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 4 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<1000x1000xbf16> to memref<128x64xbf16, "shared">
        tile.copy %B[%k0, %col] [64, 256] to %bs[%c0, %c0] [64, 256] : memref<1000x1016xbf16> to memref<64x256xbf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x64xbf16, "shared">, memref<64x256xbf16, "shared">, memref<128x256xf32, "fragment">
      }
      %h = tile.alloc : memref<128x256xbf16, "fragment">
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x256xf32, "fragment">
        %t = arith.truncf %v : f32 to bf16
        memref.store %t, %h[%i, %j] : memref<128x256xbf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 256] to %C[%row, %col] [128, 256] : memref<128x256xbf16, "fragment"> to memref<1000x1016xbf16>
    }
    return
  }
}

// -----

// sm_80 (from the module's tile.arch): cp.async + ldmatrix + mma.sync, pointers in the ABI.
// CHECK: \22arch\22: \22sm_80\22, \22abi\22: {{\[}}[\22ptr\22, 0], [\22ptr\22, 1], [\22ptr\22, 2]], \22threads\22: [128, 1, 1]
// CHECK-LABEL: func.func @ampere
// CHECK: gpu.func @ampere(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: cp.async.cg.shared.global
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
module attributes {tile.arch = "sm_80"} {
  func.func @ampere(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// Dynamic M (T.dynamic): its size comes from the ABI's dim slots (i64), the frontend's 2-d grid
// is kept (no "grid" in the launch metadata), and the kernel is not persistent.
// CHECK: \22abi\22: {{\[}}[\22tma\22, 0, \22A\22], [\22tma\22, 1, \22B\22], [\22tma\22, 2, \22C\22], [\22dim\22, 0, 0], [\22dim\22, 2, 0]], \22threads\22: [384, 1, 1]
// CHECK-SAME: \22persistent\22: false
// CHECK-NOT: \22grid\22
// CHECK-LABEL: func.func @matmul
// CHECK: gpu.func @matmul(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64)
// CHECK: arith.trunci %{{.*}} : i64 to i32
// CHECK: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
module {
  func.func @matmul(%arg0: memref<?x4096xf16>, %arg1: memref<4096x4096xf16>, %arg2: memref<?x4096xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %dim = memref.dim %arg0, %c0 : memref<?x4096xf16>
    %c1 = arith.constant 1 : index
    %dim_0 = memref.dim %arg0, %c1 : memref<?x4096xf16>
    %c1_1 = arith.constant 1 : index
    %dim_2 = memref.dim %arg1, %c1_1 : memref<4096x4096xf16>
    %c256 = arith.constant 256 : index
    %0 = arith.ceildivsi %dim_2, %c256 : index
    %c128 = arith.constant 128 : index
    %1 = arith.ceildivsi %dim, %c128 : index
    tile.kernel grid(%0, %1) threads [256] {
    ^bb0(%arg3: index, %arg4: index):
      %2 = tile.alloc : memref<128x64xf16, "shared">
      %3 = tile.alloc : memref<64x256xf16, "shared">
      %4 = tile.alloc : memref<128x256xf32, "fragment">
      %cst = arith.constant 0.000000e+00 : f32
      tile.fill %4, %cst : memref<128x256xf32, "fragment">, f32
      %c64 = arith.constant 64 : index
      %5 = arith.ceildivsi %dim_0, %c64 : index
      %c0_3 = arith.constant 0 : index
      %c1_4 = arith.constant 1 : index
      tile.pipelined %c0_3 to %5 step %c1_4 stages 4 {
      ^bb0(%arg5: index):
        %c128_9 = arith.constant 128 : index
        %9 = arith.muli %arg4, %c128_9 : index
        %c64_10 = arith.constant 64 : index
        %10 = arith.muli %arg5, %c64_10 : index
        %c0_11 = arith.constant 0 : index
        %c0_12 = arith.constant 0 : index
        tile.copy %arg0[%9, %10] [128, 64] to %2[%c0_11, %c0_12] [128, 64] : memref<?x4096xf16> to memref<128x64xf16, "shared">
        %c64_13 = arith.constant 64 : index
        %11 = arith.muli %arg5, %c64_13 : index
        %c256_14 = arith.constant 256 : index
        %12 = arith.muli %arg3, %c256_14 : index
        %c0_15 = arith.constant 0 : index
        %c0_16 = arith.constant 0 : index
        tile.copy %arg1[%11, %12] [64, 256] to %3[%c0_15, %c0_16] [64, 256] : memref<4096x4096xf16> to memref<64x256xf16, "shared">
        tile.gemm %2, %3, %4 : memref<128x64xf16, "shared">, memref<64x256xf16, "shared">, memref<128x256xf32, "fragment">
      }
      %c128_5 = arith.constant 128 : index
      %6 = arith.muli %arg4, %c128_5 : index
      %c256_6 = arith.constant 256 : index
      %7 = arith.muli %arg3, %c256_6 : index
      %8 = tile.alloc : memref<128x256xf16, "fragment">
      tile.parallel [128, 256] {
      ^bb0(%arg5: index, %arg6: index):
        %9 = memref.load %4[%arg5, %arg6] : memref<128x256xf32, "fragment">
        %10 = arith.truncf %9 : f32 to f16
        memref.store %10, %8[%arg5, %arg6] : memref<128x256xf16, "fragment">
      }
      %c0_7 = arith.constant 0 : index
      %c0_8 = arith.constant 0 : index
      tile.copy %8[%c0_7, %c0_8] [128, 256] to %arg2[%6, %7] [128, 256] : memref<128x256xf16, "fragment"> to memref<?x4096xf16>
    }
    return
  }
}

// -----

// transpose_b (B stored N x K): B is K-major, one TMA box of 64 K by 128 N; wgmma's B
// transpose bit is 0 (lower-gemm-to-tensorcore-types.mlir has the other types and layouts).
// CHECK: \22B\22: {\22box\22: [64, 128], \22swizzle\22: 128}
// CHECK-LABEL: func.func @transposed
// CHECK-NEXT: return
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, p, 1, 1, 0, 0;
module {
  func.func @transposed(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<128x32xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%col, %k0] [128, 32] to %bs[%c0, %c0] [128, 32] : memref<256x256xf16> to memref<128x32xf16, "shared">
        tile.gemm %as, %bs, %acc {transpose_b = true} : memref<128x32xf16, "shared">, memref<128x32xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// Not the canonical GEMM: a ReLU epilogue. Left for the SIMT lowering.
// CHECK-NOT: tile.tensorcore
// CHECK-LABEL: func.func @relu
// CHECK: tile.gemm
// CHECK-NOT: gpu.module
module {
  func.func @relu(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<256x256xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %z = arith.constant 0.0 : f32
        %r = arith.maximumf %v, %z : f32
        %t = arith.truncf %r : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// fp32 output: the accumulators are staged as 32 columns of 4 bytes per swizzled row.
// CHECK: \22C\22: {\22box\22: [32, 128], \22swizzle\22: 128}
// CHECK-LABEL: func.func @f32out
// CHECK-NEXT: return
// CHECK: st.shared.v2.f32
module {
  func.func @f32out(%A: memref<256x256xf16>, %B: memref<256x256xf16>, %C: memref<256x256xf32>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<256x256xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// Not supported: N not a multiple of 8 (rows of B must be 16-byte aligned for TMA).
// CHECK-NOT: tile.tensorcore
// CHECK-LABEL: func.func @oddn
// CHECK: tile.gemm
// CHECK-NOT: gpu.module
module {
  func.func @oddn(%A: memref<256x256xf16>, %B: memref<256x250xf16>, %C: memref<256x250xf16>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x256xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<256x250xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<256x250xf16>
    }
    return
  }
}

// -----

// A dynamic K: the rows of A might not be 16-byte multiples, which TMA and cp.async need, so
// the kernel is left for the SIMT lowering.
// CHECK-NOT: tile.tensorcore
// CHECK-LABEL: func.func @dynamic_k
// CHECK: tile.gemm
module attributes {tile.arch = "sm_90a"} {
  func.func @dynamic_k(%A: memref<256x?xf16>, %B: memref<?x256xf16>, %C: memref<256x256xf16>) attributes {tile.entry} {
    %gx = arith.constant 2 : index
    %gy = arith.constant 2 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 8 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<256x?xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<?x256xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<256x256xf16>
    }
    return
  }
}

// -----

// A in registers as TileLang writes it (T.copy(A_shared, A_frag) in the loop, then
// T.gemm(A_frag, B_shared, C)): the wgmma kernel with a_registers, A staged by TMA in the
// shared tile and ldmatrix-loaded by each warp (the second 64-row atom 8 KiB further), then the
// RS form of wgmma (four A registers, B's descriptor, transpose-B alone).
// CHECK: tile.tensorcore = "{\22arch\22: \22sm_90a\22, \22abi\22: {{\[}}[\22tma\22, 0, \22A\22], [\22tma\22, 1, \22B\22], [\22tma\22, 2, \22C\22]], \22threads\22: [256, 1, 1]
// CHECK-SAME: \22block_k\22: 64, \22stages\22: 6, \22consumers\22: 1
// CHECK-SAME: \22a_registers\22: true
// CHECK-LABEL: func.func @register_a
// CHECK-NEXT: return
// CHECK: gpu.func @register_a(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK: nvgpu.tma.async.load
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4+0];
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4+8192];
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{{[^}]*}}}, {$128, $129, $130, $131}, $132, p, 1, 1, 1;
module {
  func.func @register_a(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %af = tile.alloc : memref<128x32xf16, "fragment">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.copy %as[%c0, %c0] [128, 32] to %af[%c0, %c0] [128, 32] : memref<128x32xf16, "shared"> to memref<128x32xf16, "fragment">
        tile.gemm %af, %bs, %acc : memref<128x32xf16, "fragment">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// bf16, 256 threads, 128 x 256 tiles, ragged sizes: two consumer warpgroups from registers.
// CHECK: \22threads\22: [384, 1, 1]
// CHECK-SAME: \22a_registers\22: true
// CHECK-LABEL: func.func @register_a_bf16
// CHECK: arith.constant 1000 : i32
// CHECK: arith.constant 1016 : i32
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {{{[^}]*}}}, {$256, $257, $258, $259}, $260, p, 1, 1, 1;
module {
  func.func @register_a_bf16(%A: memref<1000x1000xbf16>, %B: memref<1000x1016xbf16>, %C: memref<1000x1016xbf16>) attributes {tile.entry} {
    %gx = arith.constant 4 : index
    %gy = arith.constant 8 : index
    tile.kernel grid(%gx, %gy) threads [256] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 256 : index
      %bk = arith.constant 64 : index
      %kt = arith.constant 16 : index
      %as = tile.alloc : memref<128x64xbf16, "shared">
      %af = tile.alloc : memref<128x64xbf16, "fragment">
      %bs = tile.alloc : memref<64x256xbf16, "shared">
      %acc = tile.alloc : memref<128x256xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x256xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<1000x1000xbf16> to memref<128x64xbf16, "shared">
        tile.copy %B[%k0, %col] [64, 256] to %bs[%c0, %c0] [64, 256] : memref<1000x1016xbf16> to memref<64x256xbf16, "shared">
        tile.copy %as[%c0, %c0] [128, 64] to %af[%c0, %c0] [128, 64] : memref<128x64xbf16, "shared"> to memref<128x64xbf16, "fragment">
        tile.gemm %af, %bs, %acc : memref<128x64xbf16, "fragment">, memref<64x256xbf16, "shared">, memref<128x256xf32, "fragment">
      }
      %h = tile.alloc : memref<128x256xbf16, "fragment">
      tile.parallel [128, 256] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x256xf32, "fragment">
        %t = arith.truncf %v : f32 to bf16
        memref.store %t, %h[%i, %j] : memref<128x256xbf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 256] to %C[%row, %col] [128, 256] : memref<128x256xbf16, "fragment"> to memref<1000x1016xbf16>
    }
    return
  }
}

// -----

// Register A on sm_80: the mma.sync kernel reads A from shared memory only, so the kernel is
// left for the SIMT lowering.
// CHECK-NOT: tile.tensorcore
// CHECK-LABEL: func.func @register_a_sm80
// CHECK: tile.gemm
// CHECK-NOT: gpu.module
module attributes {tile.arch = "sm_80"} {
  func.func @register_a_sm80(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %af = tile.alloc : memref<128x32xf16, "fragment">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.copy %as[%c0, %c0] [128, 32] to %af[%c0, %c0] [128, 32] : memref<128x32xf16, "shared"> to memref<128x32xf16, "fragment">
        tile.gemm %af, %bs, %acc : memref<128x32xf16, "fragment">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// The fragment filled before the global copies (it reads the previous iteration's tile): not
// the form the kernel computes. Left for the SIMT lowering.
// CHECK-NOT: tile.tensorcore
// CHECK-LABEL: func.func @register_a_fill_first
// CHECK: tile.gemm
// CHECK-NOT: gpu.module
module {
  func.func @register_a_fill_first(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %af = tile.alloc : memref<128x32xf16, "fragment">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %as[%c0, %c0] [128, 32] to %af[%c0, %c0] [128, 32] : memref<128x32xf16, "shared"> to memref<128x32xf16, "fragment">
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.gemm %af, %bs, %acc : memref<128x32xf16, "fragment">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}

// -----

// The same kernel in a module with tile.per_op_gemms (TILEC_PER_OP_GEMMS=1): declined, so
// its gemm takes the per-op path (plan-wgmma-gemms) and benchmarks time both paths' kernels.
// CHECK: module attributes {tile.per_op_gemms} {
// CHECK-LABEL: func.func @per_op
// CHECK: tile.kernel
// CHECK: tile.gemm
// CHECK-NOT: gpu.module
module attributes {tile.per_op_gemms} {
  func.func @per_op(%A: memref<4096x4096xf16>, %B: memref<4096x4096xf16>, %C: memref<4096x4096xf16>) attributes {tile.entry} {
    %gx = arith.constant 32 : index
    %gy = arith.constant 32 : index
    tile.kernel grid(%gx, %gy) threads [128] {
    ^bb0(%bx: index, %by: index):
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %bm = arith.constant 128 : index
      %bn = arith.constant 128 : index
      %bk = arith.constant 32 : index
      %kt = arith.constant 128 : index
      %as = tile.alloc : memref<128x32xf16, "shared">
      %bs = tile.alloc : memref<32x128xf16, "shared">
      %acc = tile.alloc : memref<128x128xf32, "fragment">
      %zero = arith.constant 0.0 : f32
      tile.fill %acc, %zero : memref<128x128xf32, "fragment">, f32
      %row = arith.muli %by, %bm : index
      %col = arith.muli %bx, %bn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %bk : index
        tile.copy %A[%row, %k0] [128, 32] to %as[%c0, %c0] [128, 32] : memref<4096x4096xf16> to memref<128x32xf16, "shared">
        tile.copy %B[%k0, %col] [32, 128] to %bs[%c0, %c0] [32, 128] : memref<4096x4096xf16> to memref<32x128xf16, "shared">
        tile.gemm %as, %bs, %acc : memref<128x32xf16, "shared">, memref<32x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      %h = tile.alloc : memref<128x128xf16, "fragment">
      tile.parallel [128, 128] {
      ^bb0(%i: index, %j: index):
        %v = memref.load %acc[%i, %j] : memref<128x128xf32, "fragment">
        %t = arith.truncf %v : f32 to f16
        memref.store %t, %h[%i, %j] : memref<128x128xf16, "fragment">
      }
      tile.copy %h[%c0, %c0] [128, 128] to %C[%row, %col] [128, 128] : memref<128x128xf16, "fragment"> to memref<4096x4096xf16>
    }
    return
  }
}
