// RUN: tilec-opt --hint-streamed-loads --split-input-file %s | FileCheck %s

// A GEMV's step loop over a grid of 64 blocks of 32 x 4 threads (rows from the block and the
// warp, K from the lane and the step). The weights (16 bytes a lane, every thread its own, one
// block each) become one hinted ld.global.v4.b32 under the function's evict-first policy, made
// once at its entry; the element-wise fallback's 4-byte load of the same tensor (the else
// branch of the bounds check, inside the same loop) one hinted ld.global.b32. The activations
// (the same for the 4 warps: no tid.y in their address, and every block reads them) and the
// 2-byte scales stay plain loads.
// CHECK-LABEL: gpu.func @gemv_step
// CHECK-NEXT: %[[POLICY:.*]] = llvm.inline_asm "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;", "=l"  : () -> i64
// CHECK: scf.for
// CHECK: scf.if
// CHECK: memref.extract_strided_metadata %[[W:.*]] : memref<256x512xi32, 1>
// CHECK: %[[P:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<1>
// CHECK-NEXT: %[[R:.*]] = llvm.inline_asm "ld.global.L1::no_allocate.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;", "=r,=r,=r,=r,l,l" %[[P]], %[[POLICY]] : (!llvm.ptr<1>, i64) -> !llvm.struct<(i32, i32, i32, i32)>
// CHECK-NEXT: llvm.extractvalue %[[R]][0]
// CHECK-NEXT: llvm.extractvalue %[[R]][1]
// CHECK-NEXT: llvm.extractvalue %[[R]][2]
// CHECK-NEXT: llvm.extractvalue %[[R]][3]
// CHECK-NEXT: %[[V:.*]] = vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xi32>
// CHECK-NEXT: scf.yield %[[V]] : vector<4xi32>
// CHECK: } else {
// CHECK: llvm.inline_asm "ld.global.L1::no_allocate.L2::cache_hint.b32 $0, [$1], $2;", "=r,l,l" %{{.*}}, %[[POLICY]] : (!llvm.ptr<1>, i64) -> i32
// CHECK: vector.load %{{.*}} : memref<1x8192xf16, 1>, vector<8xf16>
// CHECK: memref.load %{{.*}} : memref<256x64xf16, 1>
// CHECK-NOT: llvm.inline_asm
// CHECK: gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @gemv_step(%w: memref<256x512xi32, 1>, %a: memref<1x8192xf16, 1>, %s: memref<256x64xf16, 1>, %out: memref<256xf32, 1>) kernel attributes {known_block_size = array<i32: 32, 4, 1>, known_grid_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %c508 = arith.constant 508 : index
      %c1024 = arith.constant 1024 : index
      %zero = arith.constant 0.0 : f32
      %zeros = arith.constant dense<0> : vector<4xi32>
      %bx = gpu.block_id x
      %lane = gpu.thread_id x
      %warp = gpu.thread_id y
      %rows = arith.muli %bx, %c4 : index
      %row = arith.addi %rows, %warp : index
      %lane_words = arith.muli %lane, %c4 : index
      %lane_k = arith.muli %lane, %c32 : index
      %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
        %step_words = arith.muli %i, %c128 : index
        %wk = arith.addi %step_words, %lane_words : index
        %fits = arith.cmpi ule, %wk, %c508 : index
        %words = scf.if %fits -> (vector<4xi32>) {
          %v = vector.load %w[%row, %wk] {alignment = 16 : i64} : memref<256x512xi32, 1>, vector<4xi32>
          scf.yield %v : vector<4xi32>
        } else {
          %e = memref.load %w[%row, %wk] : memref<256x512xi32, 1>
          %v = vector.insert %e, %zeros [0] : i32 into vector<4xi32>
          scf.yield %v : vector<4xi32>
        }
        %step_k = arith.muli %i, %c1024 : index
        %ak = arith.addi %step_k, %lane_k : index
        %acts = vector.load %a[%c0, %ak] {alignment = 16 : i64} : memref<1x8192xf16, 1>, vector<8xf16>
        %g = arith.muli %i, %c8 : index
        %scale = memref.load %s[%row, %g] : memref<256x64xf16, 1>
        %w0 = vector.extract %words[0] : i32 from vector<4xi32>
        %a0 = vector.extract %acts[0] : f16 from vector<8xf16>
        %wf = arith.sitofp %w0 : i32 to f32
        %af = arith.extf %a0 : f16 to f32
        %sf = arith.extf %scale : f16 to f32
        %p = arith.mulf %wf, %af : f32
        %q = arith.mulf %p, %sf : f32
        %next = arith.addf %acc, %q : f32
        scf.yield %next : f32
      }
      memref.store %sum, %out[%row] : memref<256xf32, 1>
      gpu.return
    }
  }
}

// -----

// A loop and its unswitched version (the two branches of one scf.if): each version's load of
// the tensor is the other's alternative, so both are hinted; 16 bytes of f16 come back as the
// four words bitcast to vector<8xf16>.
// CHECK-LABEL: gpu.func @unswitched
// CHECK: scf.if
// CHECK: scf.for
// CHECK: llvm.inline_asm "ld.global.L1::no_allocate.L2::cache_hint.v4.b32
// CHECK: vector.bitcast %{{.*}} : vector<4xi32> to vector<8xf16>
// CHECK: } else {
// CHECK: scf.for
// CHECK: llvm.inline_asm "ld.global.L1::no_allocate.L2::cache_hint.v4.b32
// CHECK: vector.bitcast %{{.*}} : vector<4xi32> to vector<8xf16>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @unswitched(%x: memref<128x1024xf16, 1>, %out: memref<128x8xf16, 1>, %flag: i1) kernel attributes {known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 4, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %bx = gpu.block_id x
      %tid = gpu.thread_id x
      %base = arith.muli %bx, %c32 : index
      %row = arith.addi %base, %tid : index
      %zeros = arith.constant dense<0.0> : vector<8xf16>
      %sum = scf.if %flag -> (vector<8xf16>) {
        %s = scf.for %i = %c0 to %c32 step %c1 iter_args(%acc = %zeros) -> (vector<8xf16>) {
          %k = arith.muli %i, %c8 : index
          %v = vector.load %x[%row, %k] {alignment = 16 : i64} : memref<128x1024xf16, 1>, vector<8xf16>
          %n = arith.addf %acc, %v : vector<8xf16>
          scf.yield %n : vector<8xf16>
        }
        scf.yield %s : vector<8xf16>
      } else {
        %s = scf.for %i = %c0 to %c32 step %c1 iter_args(%acc = %zeros) -> (vector<8xf16>) {
          %k = arith.muli %i, %c8 : index
          %v = vector.load %x[%row, %k] {alignment = 16 : i64} : memref<128x1024xf16, 1>, vector<8xf16>
          %n = arith.addf %acc, %v : vector<8xf16>
          scf.yield %n : vector<8xf16>
        }
        scf.yield %s : vector<8xf16>
      }
      vector.store %sum, %out[%row, %c0] : memref<128x8xf16, 1>, vector<8xf16>
      gpu.return
    }
  }
}

// -----

// Left alone: a row read twice (a two-pass norm: a loop for the sum of squares, another to
// scale; the second pass wants the first's lines in L1 / L2), a tensor the kernel also stores
// to, and a vector load whose alignment is not known. No policy is made.
// CHECK-LABEL: gpu.func @read_twice
// CHECK-NOT: llvm.inline_asm
// CHECK: gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @read_twice(%x: memref<64x1024xf32, 1>, %y: memref<64x1024xf32, 1>, %u: memref<64x1024xf32, 1>) kernel attributes {known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 2, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c32 = arith.constant 32 : index
      %c256 = arith.constant 256 : index
      %zero = arith.constant dense<0.0> : vector<4xf32>
      %bx = gpu.block_id x
      %tid = gpu.thread_id x
      %base = arith.muli %bx, %c32 : index
      %row = arith.addi %base, %tid : index
      %squares = scf.for %i = %c0 to %c256 step %c1 iter_args(%acc = %zero) -> (vector<4xf32>) {
        %k = arith.muli %i, %c4 : index
        %v = vector.load %x[%row, %k] {alignment = 16 : i64} : memref<64x1024xf32, 1>, vector<4xf32>
        %sq = arith.mulf %v, %v : vector<4xf32>
        %n = arith.addf %acc, %sq : vector<4xf32>
        scf.yield %n : vector<4xf32>
      }
      scf.for %i = %c0 to %c256 step %c1 {
        %k = arith.muli %i, %c4 : index
        %v = vector.load %x[%row, %k] {alignment = 16 : i64} : memref<64x1024xf32, 1>, vector<4xf32>
        %scaled = arith.mulf %v, %squares : vector<4xf32>
        vector.store %scaled, %y[%row, %k] : memref<64x1024xf32, 1>, vector<4xf32>
        %old = vector.load %u[%row, %k] {alignment = 16 : i64} : memref<64x1024xf32, 1>, vector<4xf32>
        %new = arith.addf %old, %scaled : vector<4xf32>
        vector.store %new, %u[%row, %k] : memref<64x1024xf32, 1>, vector<4xf32>
        %any = vector.load %y[%row, %k] : memref<64x1024xf32, 1>, vector<4xf32>
        vector.store %any, %y[%row, %k] : memref<64x1024xf32, 1>, vector<4xf32>
      }
      gpu.return
    }
  }
}

// -----

// Left alone: a grid not known at compile time (whether other blocks read the bytes is not
// known), and a load outside any loop on its address.
// CHECK-LABEL: gpu.func @unknown_grid
// CHECK-NOT: llvm.inline_asm
// CHECK: gpu.return
// CHECK-LABEL: gpu.func @no_loop
// CHECK-NOT: llvm.inline_asm
// CHECK: gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @unknown_grid(%x: memref<64x1024xi32, 1>, %out: memref<64xi32, 1>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %zero = arith.constant 0 : i32
      %tid = gpu.thread_id x
      %sum = scf.for %i = %c0 to %c32 step %c1 iter_args(%acc = %zero) -> (i32) {
        %v = memref.load %x[%tid, %i] : memref<64x1024xi32, 1>
        %n = arith.addi %acc, %v : i32
        scf.yield %n : i32
      }
      memref.store %sum, %out[%tid] : memref<64xi32, 1>
      gpu.return
    }
    gpu.func @no_loop(%x: memref<64x1024xi32, 1>, %out: memref<64xi32, 1>) kernel attributes {known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 2, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c32 = arith.constant 32 : index
      %bx = gpu.block_id x
      %tid = gpu.thread_id x
      %base = arith.muli %bx, %c32 : index
      %row = arith.addi %base, %tid : index
      %v = memref.load %x[%row, %c0] : memref<64x1024xi32, 1>
      memref.store %v, %out[%row] : memref<64xi32, 1>
      gpu.return
    }
  }
}

// -----

// With the module's register cap for streaming functions: the function holding hinted loads
// gets nvvm.maxnreg 80 (one with a cap of its own keeps it; one without hinted loads none).
// CHECK-LABEL: gpu.func @capped
// CHECK-SAME: nvvm.maxnreg = 80 : i32
// CHECK-LABEL: gpu.func @own_cap
// CHECK-SAME: nvvm.maxnreg = 64 : i32
// CHECK-LABEL: gpu.func @nothing_streamed
// CHECK-NOT: nvvm.maxnreg
// CHECK: gpu.return
module attributes {gpu.container_module, tile.stream_max_registers = 80 : i32} {
  gpu.module @kernels {
    gpu.func @capped(%x: memref<64x1024xi32, 1>, %out: memref<64xi32, 1>) kernel attributes {known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 2, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %zero = arith.constant 0 : i32
      %bx = gpu.block_id x
      %tid = gpu.thread_id x
      %base = arith.muli %bx, %c32 : index
      %row = arith.addi %base, %tid : index
      %sum = scf.for %i = %c0 to %c32 step %c1 iter_args(%acc = %zero) -> (i32) {
        %v = memref.load %x[%row, %i] : memref<64x1024xi32, 1>
        %n = arith.addi %acc, %v : i32
        scf.yield %n : i32
      }
      memref.store %sum, %out[%row] : memref<64xi32, 1>
      gpu.return
    }
    gpu.func @own_cap(%x: memref<64x1024xi32, 1>, %out: memref<64xi32, 1>) kernel attributes {known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 2, 1, 1>, nvvm.maxnreg = 64 : i32} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c32 = arith.constant 32 : index
      %zero = arith.constant 0 : i32
      %bx = gpu.block_id x
      %tid = gpu.thread_id x
      %base = arith.muli %bx, %c32 : index
      %row = arith.addi %base, %tid : index
      %sum = scf.for %i = %c0 to %c32 step %c1 iter_args(%acc = %zero) -> (i32) {
        %v = memref.load %x[%row, %i] : memref<64x1024xi32, 1>
        %n = arith.addi %acc, %v : i32
        scf.yield %n : i32
      }
      memref.store %sum, %out[%row] : memref<64xi32, 1>
      gpu.return
    }
    gpu.func @nothing_streamed(%x: memref<64x1024xi32, 1>, %out: memref<64xi32, 1>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %tid = gpu.thread_id x
      %v = memref.load %x[%tid, %c0] : memref<64x1024xi32, 1>
      memref.store %v, %out[%tid] : memref<64xi32, 1>
      gpu.return
    }
  }
}

// -----

// The module's cap 0 (TILEC_STREAM_MAX_REGISTERS=auto): the registers one iteration's far loads
// fill, the weights' bounds-checked 16 bytes (4), the activations' 16 bytes (4) and the 2-byte
// scale (1), plus 40 for the rest of the step, to a multiple of 8: 56.
// CHECK-LABEL: gpu.func @auto_cap
// CHECK-SAME: nvvm.maxnreg = 56 : i32
module attributes {gpu.container_module, tile.stream_max_registers = 0 : i32} {
  gpu.module @kernels {
    gpu.func @auto_cap(%w: memref<256x512xi32, 1>, %a: memref<1x8192xf16, 1>, %s: memref<256x64xf16, 1>, %out: memref<256xf32, 1>) kernel attributes {known_block_size = array<i32: 32, 4, 1>, known_grid_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %c128 = arith.constant 128 : index
      %c508 = arith.constant 508 : index
      %c1024 = arith.constant 1024 : index
      %zero = arith.constant 0.0 : f32
      %zeros = arith.constant dense<0> : vector<4xi32>
      %bx = gpu.block_id x
      %lane = gpu.thread_id x
      %warp = gpu.thread_id y
      %rows = arith.muli %bx, %c4 : index
      %row = arith.addi %rows, %warp : index
      %lane_words = arith.muli %lane, %c4 : index
      %lane_k = arith.muli %lane, %c32 : index
      %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
        %step_words = arith.muli %i, %c128 : index
        %wk = arith.addi %step_words, %lane_words : index
        %fits = arith.cmpi ule, %wk, %c508 : index
        %words = scf.if %fits -> (vector<4xi32>) {
          %v = vector.load %w[%row, %wk] {alignment = 16 : i64} : memref<256x512xi32, 1>, vector<4xi32>
          scf.yield %v : vector<4xi32>
        } else {
          %e = memref.load %w[%row, %wk] : memref<256x512xi32, 1>
          %v = vector.insert %e, %zeros [0] : i32 into vector<4xi32>
          scf.yield %v : vector<4xi32>
        }
        %step_k = arith.muli %i, %c1024 : index
        %ak = arith.addi %step_k, %lane_k : index
        %acts = vector.load %a[%c0, %ak] {alignment = 16 : i64} : memref<1x8192xf16, 1>, vector<8xf16>
        %g = arith.muli %i, %c8 : index
        %scale = memref.load %s[%row, %g] : memref<256x64xf16, 1>
        %w0 = vector.extract %words[0] : i32 from vector<4xi32>
        %a0 = vector.extract %acts[0] : f16 from vector<8xf16>
        %wf = arith.sitofp %w0 : i32 to f32
        %af = arith.extf %a0 : f16 to f32
        %sf = arith.extf %scale : f16 to f32
        %p = arith.mulf %wf, %af : f32
        %q = arith.mulf %p, %sf : f32
        %next = arith.addf %acc, %q : f32
        scf.yield %next : f32
      }
      memref.store %sum, %out[%row] : memref<256xf32, 1>
      gpu.return
    }
  }
}
