// RUN: tilec-opt --run-target=ascend --stop-after=ascendc --split-input-file %s | FileCheck %s
// The AscendC the ascend target emits (not executed here; tests/test_ascend_target.py compiles
// it against ascend_include/kernel_operator.h).

// A T.Parallel of whole-tile arithmetic on UB buffers: vector instructions, a temporary for
// the intermediate, the pipes ordered by events (MTE2 loads, V compute, MTE3 store).
// CHECK-LABEL: extern "C" __global__ __aicore__ void tilec_axpy(GM_ADDR p0, GM_ADDR p1, GM_ADDR p2, int64_t dim0_0, int64_t dim1_0, int64_t dim2_0)
// CHECK: gm0.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(p0), dim0_0);
// CHECK: TBuf<TPosition::VECCALC> [[X:t[0-9]+]]_buf;
// CHECK: const int64_t bx = block % ([[GRID:v[0-9]+]]);
// CHECK: DataCopy([[X]], gm0[[[OFFSET:v[0-9]+]]], 256);
// CHECK: DataCopy([[Y:t[0-9]+]], gm1[[[OFFSET]]], 256);
// CHECK-NEXT: SetFlag<HardEvent::MTE2_V>(EVENT_ID0);
// CHECK-NEXT: WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
// CHECK-NEXT: Muls([[T:tmp[0-9]+]], [[X]], static_cast<float>(3.0f), 256);
// CHECK-NEXT: PipeBarrier<PIPE_V>();
// CHECK-NEXT: Add([[X]], [[T]], [[Y]], 256);
// CHECK-NEXT: SetFlag<HardEvent::V_MTE3>(EVENT_ID0);
// CHECK-NEXT: WaitFlag<HardEvent::V_MTE3>(EVENT_ID0);
// CHECK-NEXT: DataCopy(gm2[[[OFFSET]]], [[X]], 256);
module {
  func.func @axpy(%A: memref<?xf32>, %B: memref<?xf32>, %C: memref<?xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c256 = arith.constant 256 : index
    %n = memref.dim %A, %c0 : memref<?xf32>
    %g = arith.ceildivui %n, %c256 : index
    tile.kernel grid(%g) threads [128] {
    ^bb0(%bx: index):
      %x = tile.alloc : memref<256xf32, "fragment">
      %y = tile.alloc : memref<256xf32, "fragment">
      %start = arith.muli %bx, %c256 : index
      tile.copy %A[%start] [256] to %x[%c0] [256] : memref<?xf32> to memref<256xf32, "fragment">
      tile.copy %B[%start] [256] to %y[%c0] [256] : memref<?xf32> to memref<256xf32, "fragment">
      tile.parallel [256] {
      ^bb0(%i: index):
        %a = memref.load %x[%i] : memref<256xf32, "fragment">
        %three = arith.constant 3.0 : f32
        %s = arith.mulf %a, %three : f32
        %b = memref.load %y[%i] : memref<256xf32, "fragment">
        %r = arith.addf %s, %b : f32
        memref.store %r, %x[%i] : memref<256xf32, "fragment">
      }
      tile.copy %x[%c0] [256] to %C[%start] [256] : memref<256xf32, "fragment"> to memref<?xf32>
    }
    return
  }
}

// -----

// T.gemm on the cube: operands staged GM -> L1 (NZ) -> L0A / L0B through queues two deep
// (the loop's two stages), Mmad initializing L0C on the first step after the clear, the
// Fixpipe writing it out.
// CHECK-LABEL: void tilec_gemm(
// CHECK: TQue<TPosition::A1, 2> [[A:t[0-9]+]]_que;
// CHECK: TQue<TPosition::B1, 2> [[B:t[0-9]+]]_que;
// CHECK: TQue<TPosition::CO1, 1> [[C:t[0-9]+]]_que;
// CHECK: [[C]]_init = true;
// CHECK: for (int64_t [[K:i[0-9]+]] = 0; [[K]] < 4; [[K]] += 1) {
// CHECK: DataCopy(staged, gm0[{{.*}}], Nd2NzParams{1, 64, 32, 0, static_cast<uint16_t>(128), 64, 1, 0});
// CHECK: LoadData([[A]]_l0, [[A]]_l1, LoadData2DParams{0, 8, 1, 0, 0, false, 0});
// CHECK: LoadData([[B]]_l0, [[B]]_l1, LoadData2DParams{0, 8, 1, 0, 0, true, 0});
// CHECK: Mmad([[C]], a0, b0, MmadParams{64, 64, 32, [[C]]_init});
// CHECK-NEXT: [[C]]_init = false;
// CHECK: Fixpipe(gm2[{{.*}}], [[C]], FixpipeParamsV220{64, 64, 64, static_cast<uint32_t>(256)});
module {
  func.func @gemm(%A: memref<256x128xf16>, %B: memref<128x256xf16>, %C: memref<256x256xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    tile.kernel grid(%c4, %c4) threads [128] {
    ^bb0(%bx: index, %by: index):
      %a = tile.alloc : memref<64x32xf16, "shared">
      %b = tile.alloc : memref<32x64xf16, "shared">
      %acc = tile.alloc : memref<64x64xf32, "fragment">
      tile.fill %acc, %zero : memref<64x64xf32, "fragment">, f32
      %row = arith.muli %by, %c64 : index
      %col = arith.muli %bx, %c64 : index
      tile.pipelined %c0 to %c4 step %c1 stages 2 {
      ^bb0(%k: index):
        %kk = arith.muli %k, %c32 : index
        tile.copy %A[%row, %kk] [64, 32] to %a[%c0, %c0] [64, 32] : memref<256x128xf16> to memref<64x32xf16, "shared">
        tile.copy %B[%kk, %col] [32, 64] to %b[%c0, %c0] [32, 64] : memref<128x256xf16> to memref<32x64xf16, "shared">
        tile.gemm %a, %b, %acc : memref<64x32xf16, "shared">, memref<32x64xf16, "shared">, memref<64x64xf32, "fragment">
      }
      tile.copy %acc[%c0, %c0] [64, 64] to %C[%row, %col] [64, 64] : memref<64x64xf32, "fragment"> to memref<256x256xf32>
    }
    return
  }
}

// -----

// An atomic add into GM: the value through a UB scratch element, copied out by MTE3 with the
// atomic add set, skipped past the tensor's end; into the core's own UB, a read-modify-write.
// CHECK-LABEL: void tilec_column_sum(GM_ADDR p0, GM_ADDR p1, int64_t dim0_0, int64_t dim0_1, int64_t dim1_0)
// CHECK: LocalTensor<float> [[SCRATCH:tmp[0-9]+]] = [[SCRATCH]]_buf.Get<float>();
// CHECK: for (int64_t [[J:j[0-9]+]] = 0; [[J]] < 64; ++[[J]]) {
// CHECK-NEXT: const float [[X:v[0-9]+]] = [[S:t[0-9]+]].GetValue([[J]]);
// CHECK-NEXT: [[ACC:t[0-9]+]].SetValue([[J]], [[ACC]].GetValue([[J]]) + [[X]]);
// CHECK-NEXT: const int64_t [[Q:v[0-9]+]] = [[Q0:v[0-9]+]] + [[J]];
// CHECK-NEXT: const float [[V:v[0-9]+]] = [[ACC]].GetValue([[J]]);
// CHECK-NEXT: if ([[Q]] >= 0 && [[Q]] < dim1_0) {
// CHECK-NEXT: [[SCRATCH]].SetValue(0, static_cast<float>([[V]]));
// CHECK-NEXT: SetFlag<HardEvent::S_MTE3>(EVENT_ID0);
// CHECK-NEXT: WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);
// CHECK-NEXT: SetAtomicAdd<float>();
// CHECK-NEXT: DataCopyPad(gm1[[[Q]]], [[SCRATCH]], DataCopyExtParams{1, sizeof(float), 0, 0, 0});
// CHECK-NEXT: SetAtomicNone();
// CHECK-NEXT: SetFlag<HardEvent::MTE3_S>(EVENT_ID0);
// CHECK-NEXT: WaitFlag<HardEvent::MTE3_S>(EVENT_ID0);
// CHECK-NEXT: }
module {
  func.func @column_sum(%A: memref<?x?xf32>, %out: memref<?xf32>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %zero = arith.constant 0.0 : f32
    %N = memref.dim %A, %c1 : memref<?x?xf32>
    %gx = arith.ceildivui %N, %c64 : index
    tile.kernel grid(%gx) threads [128] {
    ^bb0(%bx: index):
      %F = tile.alloc : memref<8x64xf32, "fragment">
      %s = tile.alloc : memref<64xf32, "fragment">
      %acc = tile.alloc : memref<64xf32, "shared">
      tile.fill %acc, %zero : memref<64xf32, "shared">, f32
      %q0 = arith.muli %bx, %c64 : index
      tile.copy %A[%c0, %q0] [8, 64] to %F[%c0, %c0] [8, 64] : memref<?x?xf32> to memref<8x64xf32, "fragment">
      tile.reduce "sum" %F to %s dim 0 : memref<8x64xf32, "fragment"> to memref<64xf32, "fragment">
      tile.parallel [64] {
      ^bb0(%j: index):
        %x = memref.load %s[%j] : memref<64xf32, "fragment">
        tile.atomic_add %acc[%j], %x : memref<64xf32, "shared">, f32
        %q = arith.addi %q0, %j : index
        %v = memref.load %acc[%j] : memref<64xf32, "shared">
        tile.atomic_add %out[%q], %v : memref<?xf32>, f32
      }
    }
    return
  }
}
