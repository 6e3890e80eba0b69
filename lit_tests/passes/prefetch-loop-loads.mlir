// RUN: tilec-opt --prefetch-loop-loads --split-input-file %s | FileCheck %s

// A GEMV-like step loop: a bounds-checked 16-byte load of weights (lower-tile-to-gpu's form),
// an unchecked scalar scale read, both at addresses computed from the loop variable, stored
// to a private buffer and summed. The first iteration's loads run before the loop; each
// iteration issues the next one's (at min(i + 1, 7): the last re-reads its own) before its
// own arithmetic, which reads the values the loop carries. The function gets a register cap
// (128 without the module's tile.prefetch_max_registers) so ptxas keeps the loads early.
// CHECK-LABEL: gpu.func @step_loop
// CHECK-SAME: nvvm.maxnreg = 128 : i32
// CHECK: %[[FIRST:.*]] = scf.if
// CHECK: vector.load %{{.*}} : memref<8x64xi32, 1>, vector<4xi32>
// CHECK: %[[SCALE0:.*]] = memref.load %{{.*}} : memref<8xf32, 1>
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[W:.*]] = %[[FIRST]], %[[S:.*]] = %[[SCALE0]]) -> (f32, vector<4xi32>, f32)
// CHECK-NEXT: %[[STEP:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK-NEXT: %[[LAST:.*]] = arith.constant 7 : index
// CHECK-NEXT: %[[NEXT:.*]] = arith.minsi %[[STEP]], %[[LAST]] : index
// CHECK-NEXT: %[[K:.*]] = arith.muli %[[NEXT]]
// CHECK: %[[WNEXT:.*]] = scf.if
// CHECK: vector.load
// CHECK: %[[SNEXT:.*]] = memref.load %{{.*}}[%[[NEXT]]] : memref<8xf32, 1>
// CHECK: vector.store %[[W]], %{{.*}} : memref<4xi32>, vector<4xi32>
// CHECK: arith.mulf %{{.*}}, %[[S]]
// CHECK: scf.yield %{{.*}}, %[[WNEXT]], %[[SNEXT]] : f32, vector<4xi32>, f32
// CHECK-NOT: vector.load
// CHECK: memref.store
module attributes {gpu.container_module} {
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
          scf.yield %zeros : vector<4xi32>
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

// A loop that stores to global memory is left alone: a load issued an iteration early could
// read before this thread's (or another's) store of the iteration before.
// CHECK-LABEL: gpu.func @stores_globally
// CHECK-NOT: nvvm.maxnreg
// CHECK: scf.for
// CHECK-NEXT: memref.load
// CHECK-NEXT: arith.addi
// CHECK-NEXT: memref.store
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @stores_globally(%a: memref<8xf32, 1>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c7 = arith.constant 7 : index
      scf.for %i = %c0 to %c7 step %c1 {
        %x = memref.load %a[%i] : memref<8xf32, 1>
        %j = arith.addi %i, %c1 : index
        memref.store %x, %a[%j] : memref<8xf32, 1>
      }
      gpu.return
    }
  }
}

// -----

// A barrier in the loop orders the block's accesses: left alone. So is a load from shared
// memory and a loop that runs once. Of a gather, the index is prefetched, the load at it
// (its address loaded in the loop) stays.
// CHECK-LABEL: gpu.func @left_alone
// CHECK: scf.for
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.load
// CHECK: scf.for
// CHECK-NEXT: memref.load %{{.*}} : memref<8xf32, 3>
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[J:.*]] = %{{.*}}) -> (f32, index)
// CHECK: memref.load %{{.*}} : memref<8xindex, 1>
// CHECK-NEXT: memref.load %{{.*}}[%[[J]]] : memref<8xf32, 1>
// CHECK: scf.for
// CHECK-NEXT: memref.load
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @left_alone(%a: memref<8xf32, 1>, %s: memref<8xf32, 3>, %idx: memref<8xindex, 1>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %zero = arith.constant 0.0 : f32
      %r0 = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
        gpu.barrier
        %x = memref.load %a[%i] : memref<8xf32, 1>
        %n = arith.addf %acc, %x : f32
        scf.yield %n : f32
      }
      %r1 = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %r0) -> (f32) {
        %x = memref.load %s[%i] : memref<8xf32, 3>
        %n = arith.addf %acc, %x : f32
        scf.yield %n : f32
      }
      %r2 = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %r1) -> (f32) {
        %j = memref.load %idx[%i] : memref<8xindex, 1>
        %x = memref.load %a[%j] : memref<8xf32, 1>
        %n = arith.addf %acc, %x : f32
        scf.yield %n : f32
      }
      %r3 = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %r2) -> (f32) {
        %x = memref.load %a[%i] : memref<8xf32, 1>
        %n = arith.addf %acc, %x : f32
        scf.yield %n : f32
      }
      memref.store %r3, %a[%c0] : memref<8xf32, 1>
      gpu.return
    }
  }
}

// -----

// The module's tile.prefetch_max_registers is the cap (TILEC_PREFETCH_LOOP_LOADS=96).
// CHECK-LABEL: gpu.func @capped
// CHECK-SAME: nvvm.maxnreg = 96 : i32
// CHECK: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32)
module attributes {gpu.container_module, tile.prefetch_max_registers = 96 : i32} {
  gpu.module @kernels {
    gpu.func @capped(%a: memref<8xf32, 1>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %zero = arith.constant 0.0 : f32
      %r = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
        %x = memref.load %a[%i] : memref<8xf32, 1>
        %n = arith.addf %acc, %x : f32
        scf.yield %n : f32
      }
      memref.store %r, %a[%c0] : memref<8xf32, 1>
      gpu.return
    }
  }
}
