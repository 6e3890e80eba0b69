// RUN: tilec-opt --unswitch-invariant-conditions --split-input-file %s | FileCheck %s

// A vector copy's alignment fallback (lower-tile-to-gpu's form): the base pointer's check is
// computed before the loop from a kernel argument and tested in every iteration. The loop runs
// in two versions: where the check holds, a copy with the check replaced by true (canonicalize
// folds its branch), and the loop as it was where it fails.
// CHECK-LABEL: gpu.func @aligned_copy
// CHECK: %[[ALIGNED:.*]] = arith.cmpi eq
// CHECK: scf.if %[[ALIGNED]] {
// CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: scf.for
// CHECK: arith.andi %{{.*}}, %[[TRUE]] : i1
// CHECK: vector.load
// CHECK: memref.load
// CHECK: vector.store
// CHECK: } else {
// CHECK-NEXT: scf.for
// CHECK: arith.andi %{{.*}}, %[[ALIGNED]] : i1
// CHECK: vector.load
// CHECK: memref.load
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @aligned_copy(%src: memref<64xf32, 1>, %dst: memref<64xf32, 1>) kernel {
      %c0 = arith.constant 0 : index
      %c4 = arith.constant 4 : index
      %c16 = arith.constant 16 : index
      %c64 = arith.constant 64 : index
      %p = memref.extract_aligned_pointer_as_index %src : memref<64xf32, 1> -> index
      %r = arith.remui %p, %c16 : index
      %aligned = arith.cmpi eq, %r, %c0 : index
      scf.for %i = %c0 to %c64 step %c4 {
        %in = arith.cmpi ult, %i, %c64 : index
        %ok = arith.andi %in, %aligned : i1
        %v = scf.if %ok -> (vector<4xf32>) {
          %w = vector.load %src[%i] : memref<64xf32, 1>, vector<4xf32>
          scf.yield %w : vector<4xf32>
        } else {
          %e = memref.load %src[%i] : memref<64xf32, 1>
          %w = vector.broadcast %e : f32 to vector<4xf32>
          scf.yield %w : vector<4xf32>
        }
        vector.store %v, %dst[%i] : memref<64xf32, 1>, vector<4xf32>
      }
      gpu.return
    }
  }
}

// -----

// Two uniform conditions (a block index and a kernel argument) and a loop carrying a value:
// one version where both hold, the results those of whichever version ran. The inner loop is
// left as it is in both (the outer one was versioned).
// CHECK-LABEL: gpu.func @two_conditions
// CHECK: %[[FIRST:.*]] = arith.cmpi ult, %block_id_x
// CHECK: %[[SECOND:.*]] = arith.cmpi sgt, %arg1
// CHECK: %[[BOTH:.*]] = arith.andi %[[FIRST]], %[[SECOND]] : i1
// CHECK: %[[SUM:.*]] = scf.if %[[BOTH]] -> (f32) {
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: %[[FAST:.*]] = scf.for {{.*}} -> (f32) {
// CHECK: scf.for
// CHECK: scf.if %[[TRUE]]
// CHECK: scf.if %[[TRUE]]
// CHECK: scf.yield %[[FAST]] : f32
// CHECK: } else {
// CHECK: %[[SLOW:.*]] = scf.for {{.*}} -> (f32) {
// CHECK: scf.for
// CHECK: scf.if %[[FIRST]]
// CHECK: scf.if %[[SECOND]]
// CHECK: scf.yield %[[SLOW]] : f32
// CHECK: memref.store %[[SUM]]
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @two_conditions(%x: memref<64xf32, 1>, %n: i32, %out: memref<1xf32, 1>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %c0_i32 = arith.constant 0 : i32
      %zero = arith.constant 0.0 : f32
      %bx = gpu.block_id x
      %first = arith.cmpi ult, %bx, %c8 : index
      %second = arith.cmpi sgt, %n, %c0_i32 : i32
      %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
        %inner = scf.for %j = %c0 to %c8 step %c1 iter_args(%a = %acc) -> (f32) {
          %k = arith.addi %i, %j : index
          %v = scf.if %first -> (f32) {
            %e = memref.load %x[%k] : memref<64xf32, 1>
            scf.yield %e : f32
          } else {
            scf.yield %zero : f32
          }
          %w = scf.if %second -> (f32) {
            %s = arith.addf %a, %v : f32
            scf.yield %s : f32
          } else {
            scf.yield %a : f32
          }
          scf.yield %w : f32
        }
        scf.yield %inner : f32
      }
      memref.store %sum, %out[%c0] : memref<1xf32, 1>
      gpu.return
    }
  }
}

// -----

// Left alone: a condition on the thread index (threads could take different versions, and a
// barrier or shuffle in the loop would not meet them all), one read from memory, one computed
// in the loop, and a constant (canonicalize's to fold).
// CHECK-LABEL: gpu.func @not_invariant_or_not_uniform
// CHECK-NOT: scf.if {{.*}} {
// CHECK: scf.for
// CHECK: scf.if %{{.*}}
// CHECK: scf.if %{{.*}}
// CHECK: scf.if %{{.*}}
// CHECK: scf.if %{{.*}}
// CHECK-NOT: scf.for
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @not_invariant_or_not_uniform(%x: memref<64xf32, 1>, %flags: memref<1xi1, 1>)
        kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %true = arith.constant true
      %tx = gpu.thread_id x
      %lane_first = arith.cmpi eq, %tx, %c0 : index
      %flag = memref.load %flags[%c0] : memref<1xi1, 1>
      %one = arith.constant 1.0 : f32
      scf.for %i = %c0 to %c8 step %c1 {
        %odd = arith.cmpi eq, %i, %c1 : index
        scf.if %lane_first {
          memref.store %one, %x[%i] : memref<64xf32, 1>
        }
        scf.if %flag {
          memref.store %one, %x[%i] : memref<64xf32, 1>
        }
        scf.if %odd {
          memref.store %one, %x[%i] : memref<64xf32, 1>
        }
        scf.if %true {
          memref.store %one, %x[%i] : memref<64xf32, 1>
        }
      }
      gpu.return
    }
  }
}
