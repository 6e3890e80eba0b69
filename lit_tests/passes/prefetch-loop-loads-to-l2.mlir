// RUN: tilec-opt --prefetch-loop-loads-to-l2 --split-input-file %s | FileCheck %s

// A GEMV-like step loop (prefetch-loop-loads' first case): a bounds-checked 16-byte load of
// weights and a 4-byte scale read, addressed from the loop variable. At the module's
// distance 2, iteration 1 is prefetched before the loop (its copy's check cloned, its load
// a prefetch of the element's address: base pointer + (offset + row * 64 + k) * 4 bytes),
// and each iteration prefetches iteration min(i + 2, 7) first; the loop's own loads stay as
// they were, no register is carried and no cap set. Only the then-branch of a check holds a
// prefetch (a run crossing the bounds is not prefetched).
// CHECK-LABEL: gpu.func @step_loop
// CHECK-NOT: nvvm.maxnreg
// CHECK: memref.alloca
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[K1:.*]] = arith.muli %[[ONE]], %{{.*}} : index
// CHECK: scf.if
// CHECK: %[[BASE:.*]], %[[OFFSET:.*]], %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[W:.*]] : memref<8x64xi32, 1>
// CHECK: arith.muli %[[K1]], %[[STRIDES]]#1 : index
// CHECK: memref.extract_aligned_pointer_as_index %[[BASE]]
// CHECK: %[[P1:.*]] = llvm.inttoptr %{{.*}} : i64 to !llvm.ptr<1>
// CHECK-NEXT: nvvm.prefetch level = L2, %[[P1]] : !llvm.ptr<1>
// CHECK: } else {
// CHECK-NOT: nvvm.prefetch
// CHECK: }
// CHECK: nvvm.prefetch level = L2
// CHECK: scf.for %[[I:[a-z0-9_]+]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32) {
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: %[[AHEAD:.*]] = arith.addi %[[I]], %[[TWO]] : index
// CHECK-NEXT: %[[LAST:.*]] = arith.constant 7 : index
// CHECK-NEXT: %[[NEXT:.*]] = arith.minsi %[[AHEAD]], %[[LAST]] : index
// CHECK-NEXT: arith.muli %[[NEXT]]
// CHECK: nvvm.prefetch level = L2
// CHECK: } else {
// CHECK-NOT: nvvm.prefetch
// CHECK: }
// CHECK: nvvm.prefetch level = L2
// CHECK-NOT: nvvm.prefetch
// CHECK: vector.load %[[W]][%{{.*}}, %{{.*}}] : memref<8x64xi32, 1>, vector<4xi32>
// CHECK: memref.load %{{.*}}[%[[I]]] : memref<8xf32, 1>
// CHECK: scf.yield %{{.*}} : f32
module attributes {gpu.container_module, tile.prefetch_l2_distance = 2 : i32} {
  gpu.module @kernels {
    gpu.func @step_loop(%w: memref<8x64xi32, 1>, %scales: memref<8xf32, 1>, %out: memref<1xf32, 1>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c60 = arith.constant 60 : index
      %zero = arith.constant 0.0 : f32
      %zeros = arith.constant dense<0> : vector<4xi32>
      %tid = gpu.thread_id x
      %row = arith.remui %tid, %c8 : index
      %b = memref.alloca() : memref<4xi32>
      %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
        %k = arith.muli %i, %c4 : index
        %fits = arith.cmpi ule, %k, %c60 : index
        %words = scf.if %fits -> (vector<4xi32>) {
          %v = vector.load %w[%row, %k] : memref<8x64xi32, 1>, vector<4xi32>
          scf.yield %v : vector<4xi32>
        } else {
          %e = memref.load %w[%row, %k] : memref<8x64xi32, 1>
          %v = vector.insert %e, %zeros [0] : i32 into vector<4xi32>
          scf.yield %v : vector<4xi32>
        }
        %scale = memref.load %scales[%i] : memref<8xf32, 1>
        vector.store %words, %b[%c0] : memref<4xi32>, vector<4xi32>
        %first = memref.load %b[%c0] : memref<4xi32>
        %f = arith.sitofp %first : i32 to f32
        %p = arith.mulf %f, %scale : f32
        %next = arith.addf %acc, %p : f32
        scf.yield %next : f32
      }
      memref.store %sum, %out[%c0] : memref<1xf32, 1>
      gpu.return
    }
  }
}

// -----

// A known grid of 64 x 4 blocks (rows along x, batch rows along y): the weights (row from
// block x) are read by the 4 blocks along y and are prefetched; the activations (row from
// block y: read by the 64 blocks along x, in L2 after the first) and the 2-byte scales
// (narrower than 4 bytes) are not. The module's distance 1: nothing before the loop,
// iteration min(i + 1, 3) in it.
// CHECK-LABEL: gpu.func @streamed_only
// CHECK: scf.for %[[I:[a-z0-9_]+]] =
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: arith.addi %[[I]], %[[ONE]] : index
// CHECK: memref.extract_strided_metadata %[[W:.*]] : memref<64x512xi32, 1>
// CHECK: nvvm.prefetch level = L2
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.return
module attributes {gpu.container_module, tile.prefetch_l2_distance = 1 : i32} {
  gpu.module @kernels {
    gpu.func @streamed_only(%w: memref<64x512xi32, 1>, %a: memref<4x4096xf16, 1>, %s: memref<64x32xf16, 1>, %out: memref<64xf32, 1>) kernel attributes {known_grid_size = array<i32: 64, 4, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c32 = arith.constant 32 : index
      %c1024 = arith.constant 1024 : index
      %zero = arith.constant 0.0 : f32
      %bx = gpu.block_id x
      %by = gpu.block_id y
      %tid = gpu.thread_id x
      %lane_words = arith.muli %tid, %c4 : index
      %lane_k = arith.muli %tid, %c32 : index
      %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> (f32) {
        %step_words = arith.muli %i, %c32 : index
        %wk = arith.addi %step_words, %lane_words : index
        %words = vector.load %w[%bx, %wk] : memref<64x512xi32, 1>, vector<4xi32>
        %step_k = arith.muli %i, %c1024 : index
        %ak = arith.addi %step_k, %lane_k : index
        %acts = vector.load %a[%by, %ak] : memref<4x4096xf16, 1>, vector<8xf16>
        %g = arith.muli %i, %c8 : index
        %scale = memref.load %s[%bx, %g] : memref<64x32xf16, 1>
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
      memref.store %sum, %out[%bx] : memref<64xf32, 1>
      gpu.return
    }
  }
}

// -----

// Without a distance: as many iterations as make 128 bytes of a thread's streamed loads, here
// two rows of 32 bytes an iteration: 2 (iteration 1 before the loop, min(i + 2, 15) in it).
// CHECK-LABEL: gpu.func @automatic_distance
// CHECK-COUNT-2: nvvm.prefetch level = L2
// CHECK: scf.for %[[I:[a-z0-9_]+]] =
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2 : index
// CHECK-NEXT: arith.addi %[[I]], %[[TWO]] : index
// CHECK-NEXT: arith.constant 15 : index
// CHECK-COUNT-2: nvvm.prefetch level = L2
// CHECK-NOT: nvvm.prefetch
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @automatic_distance(%w: memref<64x1024xi32, 1>, %out: memref<64xi32, 1>) kernel attributes {known_grid_size = array<i32: 32, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %c8 = arith.constant 8 : index
      %c16 = arith.constant 16 : index
      %bx = gpu.block_id x
      %row = arith.muli %bx, %c2 : index
      %next_row = arith.addi %row, %c1 : index
      %zeros = arith.constant dense<0> : vector<8xi32>
      %sum = scf.for %i = %c0 to %c16 step %c1 iter_args(%acc = %zeros) -> (vector<8xi32>) {
        %k = arith.muli %i, %c8 : index
        %a = vector.load %w[%row, %k] : memref<64x1024xi32, 1>, vector<8xi32>
        %b = vector.load %w[%next_row, %k] : memref<64x1024xi32, 1>, vector<8xi32>
        %ab = arith.addi %a, %b : vector<8xi32>
        %next = arith.addi %acc, %ab : vector<8xi32>
        scf.yield %next : vector<8xi32>
      }
      %first = vector.extract %sum[0] : i32 from vector<8xi32>
      memref.store %first, %out[%bx] : memref<64xi32, 1>
      gpu.return
    }
  }
}

// -----

// A memref of vectors: an element is 16 bytes, so the address is the pointer plus the
// element's position times 16.
// CHECK-LABEL: gpu.func @vector_elements
// CHECK: scf.for
// CHECK: memref.extract_strided_metadata
// CHECK-NEXT: arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT: arith.addi
// CHECK-NEXT: %[[POINTER:.*]] = memref.extract_aligned_pointer_as_index
// CHECK-NEXT: %[[SIXTEEN:.*]] = arith.constant 16 : index
// CHECK-NEXT: %[[BYTES:.*]] = arith.muli %{{.*}}, %[[SIXTEEN]] : index
// CHECK-NEXT: arith.addi %[[POINTER]], %[[BYTES]] : index
// CHECK: nvvm.prefetch level = L2
module attributes {gpu.container_module, tile.prefetch_l2_distance = 1 : i32} {
  gpu.module @kernels {
    gpu.func @vector_elements(%a: memref<8xvector<4xf32>, 1>, %out: memref<1xvector<4xf32>, 1>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %z = arith.constant dense<0.0> : vector<4xf32>
      %s = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %z) -> (vector<4xf32>) {
        %x = memref.load %a[%i] : memref<8xvector<4xf32>, 1>
        %n = arith.addf %acc, %x : vector<4xf32>
        scf.yield %n : vector<4xf32>
      }
      memref.store %s, %out[%c0] : memref<1xvector<4xf32>, 1>
      gpu.return
    }
  }
}

// -----

// A loop storing to global memory is left alone (prefetch-loop-loads' rule: its loads may
// read what it stores).
// CHECK-LABEL: gpu.func @stores_globally
// CHECK-NOT: nvvm.prefetch
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @stores_globally(%a: memref<8xvector<4xf32>, 1>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c7 = arith.constant 7 : index
      scf.for %i = %c0 to %c7 step %c1 {
        %x = memref.load %a[%i] : memref<8xvector<4xf32>, 1>
        %j = arith.addi %i, %c1 : index
        memref.store %x, %a[%j] : memref<8xvector<4xf32>, 1>
      }
      gpu.return
    }
  }
}
