// RUN: tilec-opt --ring-loop-loads --split-input-file %s | FileCheck %s

// A GEMV-like step loop of a block of 64 threads in a grid of 64 blocks: a bounds-checked
// 16-byte load of weights, a 2-byte scale (both addressed by the block's rows) and a 4-byte
// activation every block reads. Two slots (the module's): slot = 64 threads x (16 + 4) bytes,
// 1280; the ring starts past the function's 100 bytes, at 112, so 112 + 2 x 1280 = 2672. Before
// the loop iteration 0 is issued into slot 0 (the weights' cp.async under the copy's check, .cg,
// nothing in the element-wise else branch; the scale's aligned word, address & -4, .ca) and
// committed; each iteration issues i + 1 into slot (n + 1) % 2 where i + 1 <= 7, commits,
// waits until one group is pending, and reads its own slot: the weights in the then branch
// (the else branch's element loads stay), the scale at its byte of the word (address & 3).
// The activation is not ringed.
// CHECK-LABEL: gpu.func @step_loop
// CHECK-SAME: tile.shared_bytes = 2672
// CHECK: gpu.dynamic_shared_memory
// CHECK: arith.constant 112 : index
// CHECK: scf.if
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg
// CHECK: } else {
// CHECK-NOT: nvvm.cp.async
// CHECK: }
// CHECK: %[[WORD:.*]] = arith.constant -4 : index
// CHECK: arith.andi %{{.*}}, %[[WORD]] : index
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache =  ca
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: scf.for %[[I:[a-z0-9_]+]] =
// CHECK: %[[AHEAD:.*]] = arith.addi %[[I]], %{{.*}} : index
// CHECK-NEXT: %[[LAST:.*]] = arith.constant 7 : index
// CHECK-NEXT: %[[ISSUE:.*]] = arith.cmpi sle, %[[AHEAD]], %[[LAST]] : index
// CHECK-NEXT: scf.if %[[ISSUE]] {
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache =  ca
// CHECK: }
// CHECK-NEXT: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// CHECK: } else {
// CHECK: memref.load %arg0
// CHECK: arith.andi %{{.*}}, %c3 : index
// CHECK: llvm.load %{{.*}} {alignment = 2 : i64} : !llvm.ptr<3> -> f16
// CHECK: memref.load %arg2
// CHECK: scf.yield
module attributes {gpu.container_module, tile.loop_load_ring_slots = 2 : i32} {
  gpu.module @kernels {
    gpu.func @step_loop(%w: memref<256x64xi32, 1>, %scales: memref<256x8xf16, 1>, %a: memref<256xi32, 1>, %out: memref<256xf32, 1>) kernel attributes {known_block_size = array<i32: 32, 2, 1>, known_grid_size = array<i32: 64, 1, 1>, tile.shared_bytes = 100 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c60 = arith.constant 60 : index
      %zero = arith.constant 0.0 : f32
      %zeros = arith.constant dense<0> : vector<4xi32>
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %row = arith.addi %tid, %bid : index
      %b = memref.alloca() : memref<4xi32>
      %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
        %k = arith.muli %i, %c4 : index
        %fits = arith.cmpi ule, %k, %c60 : index
        %words = scf.if %fits -> (vector<4xi32>) {
          %v = vector.load %w[%row, %k] {alignment = 16 : i64} : memref<256x64xi32, 1>, vector<4xi32>
          scf.yield %v : vector<4xi32>
        } else {
          %e = memref.load %w[%row, %k] : memref<256x64xi32, 1>
          %v = vector.insert %e, %zeros [0] : i32 into vector<4xi32>
          scf.yield %v : vector<4xi32>
        }
        %scale = memref.load %scales[%row, %i] : memref<256x8xf16, 1>
        %act = memref.load %a[%k] : memref<256xi32, 1>
        vector.store %words, %b[%c0] : memref<4xi32>, vector<4xi32>
        %first = memref.load %b[%c0] : memref<4xi32>
        %mixed = arith.addi %first, %act : i32
        %f = arith.sitofp %mixed : i32 to f32
        %s = arith.extf %scale : f16 to f32
        %p = arith.mulf %f, %s : f32
        %next = arith.addf %acc, %p : f32
        scf.yield %next : f32
      }
      memref.store %sum, %out[%row] : memref<256xf32, 1>
      gpu.return
    }
  }
}


// -----

// Without a slot count: a thread's ringed loads are 20 bytes an iteration, so 1 + ceil(64 / 20)
// = 5 slots (112 + 5 x 1280 bytes), four iterations issued before the loop, wait until four
// groups are pending.
// CHECK-LABEL: gpu.func @step_loop
// CHECK-SAME: tile.shared_bytes = 6512
// CHECK-COUNT-4: nvvm.cp.async.commit.group
// CHECK-NEXT: scf.for
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 4
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @step_loop(%w: memref<256x64xi32, 1>, %scales: memref<256x8xf16, 1>, %a: memref<256xi32, 1>, %out: memref<256xf32, 1>) kernel attributes {known_block_size = array<i32: 32, 2, 1>, known_grid_size = array<i32: 64, 1, 1>, tile.shared_bytes = 100 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c60 = arith.constant 60 : index
      %zero = arith.constant 0.0 : f32
      %zeros = arith.constant dense<0> : vector<4xi32>
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %row = arith.addi %tid, %bid : index
      %b = memref.alloca() : memref<4xi32>
      %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
        %k = arith.muli %i, %c4 : index
        %fits = arith.cmpi ule, %k, %c60 : index
        %words = scf.if %fits -> (vector<4xi32>) {
          %v = vector.load %w[%row, %k] {alignment = 16 : i64} : memref<256x64xi32, 1>, vector<4xi32>
          scf.yield %v : vector<4xi32>
        } else {
          %e = memref.load %w[%row, %k] : memref<256x64xi32, 1>
          %v = vector.insert %e, %zeros [0] : i32 into vector<4xi32>
          scf.yield %v : vector<4xi32>
        }
        %scale = memref.load %scales[%row, %i] : memref<256x8xf16, 1>
        %act = memref.load %a[%k] : memref<256xi32, 1>
        vector.store %words, %b[%c0] : memref<4xi32>, vector<4xi32>
        %first = memref.load %b[%c0] : memref<4xi32>
        %mixed = arith.addi %first, %act : i32
        %f = arith.sitofp %mixed : i32 to f32
        %s = arith.extf %scale : f16 to f32
        %p = arith.mulf %f, %s : f32
        %next = arith.addf %acc, %p : f32
        scf.yield %next : f32
      }
      memref.store %sum, %out[%row] : memref<256xf32, 1>
      gpu.return
    }
  }
}


// -----

// Three slots (the module's tile.loop_load_ring_slots): iterations 0 and 1 issued before the
// loop, each iteration issuing i + 2 into slot (n + 2) % 3 and waiting until two groups are
// pending; 112 + 3 x 1280 bytes.
// CHECK-LABEL: gpu.func @step_loop
// CHECK-SAME: tile.shared_bytes = 3952
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: scf.for
// CHECK: arith.constant 2 : index
// CHECK: arith.remui %{{.*}}, %{{.*}} : index
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 2
module attributes {gpu.container_module, tile.loop_load_ring_slots = 3 : i32} {
  gpu.module @kernels {
    gpu.func @step_loop(%w: memref<256x64xi32, 1>, %scales: memref<256x8xf16, 1>, %a: memref<256xi32, 1>, %out: memref<256xf32, 1>) kernel attributes {known_block_size = array<i32: 32, 2, 1>, known_grid_size = array<i32: 64, 1, 1>, tile.shared_bytes = 100 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c60 = arith.constant 60 : index
      %zero = arith.constant 0.0 : f32
      %zeros = arith.constant dense<0> : vector<4xi32>
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %row = arith.addi %tid, %bid : index
      %b = memref.alloca() : memref<4xi32>
      %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
        %k = arith.muli %i, %c4 : index
        %fits = arith.cmpi ule, %k, %c60 : index
        %words = scf.if %fits -> (vector<4xi32>) {
          %v = vector.load %w[%row, %k] {alignment = 16 : i64} : memref<256x64xi32, 1>, vector<4xi32>
          scf.yield %v : vector<4xi32>
        } else {
          %e = memref.load %w[%row, %k] : memref<256x64xi32, 1>
          %v = vector.insert %e, %zeros [0] : i32 into vector<4xi32>
          scf.yield %v : vector<4xi32>
        }
        %scale = memref.load %scales[%row, %i] : memref<256x8xf16, 1>
        %act = memref.load %a[%k] : memref<256xi32, 1>
        vector.store %words, %b[%c0] : memref<4xi32>, vector<4xi32>
        %first = memref.load %b[%c0] : memref<4xi32>
        %mixed = arith.addi %first, %act : i32
        %f = arith.sitofp %mixed : i32 to f32
        %s = arith.extf %scale : f16 to f32
        %p = arith.mulf %f, %s : f32
        %next = arith.addf %acc, %p : f32
        scf.yield %next : f32
      }
      memref.store %sum, %out[%row] : memref<256xf32, 1>
      gpu.return
    }
  }
}


// -----

// Left alone: the loop stores to global memory (a load issued ahead could read what another
// thread's store in between would write).
// CHECK-LABEL: gpu.func @step_loop
// CHECK-SAME: tile.shared_bytes = 100
// CHECK-NOT: nvvm.cp.async
// CHECK: gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @step_loop(%w: memref<256x64xi32, 1>, %scales: memref<256x8xf16, 1>, %a: memref<256xi32, 1>, %out: memref<256xf32, 1>) kernel attributes {known_block_size = array<i32: 32, 2, 1>, known_grid_size = array<i32: 64, 1, 1>, tile.shared_bytes = 100 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c60 = arith.constant 60 : index
      %zero = arith.constant 0.0 : f32
      %zeros = arith.constant dense<0> : vector<4xi32>
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %row = arith.addi %tid, %bid : index
      %b = memref.alloca() : memref<4xi32>
      %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
        %k = arith.muli %i, %c4 : index
        %fits = arith.cmpi ule, %k, %c60 : index
        %words = scf.if %fits -> (vector<4xi32>) {
          %v = vector.load %w[%row, %k] {alignment = 16 : i64} : memref<256x64xi32, 1>, vector<4xi32>
          scf.yield %v : vector<4xi32>
        } else {
          %e = memref.load %w[%row, %k] : memref<256x64xi32, 1>
          %v = vector.insert %e, %zeros [0] : i32 into vector<4xi32>
          scf.yield %v : vector<4xi32>
        }
        %scale = memref.load %scales[%row, %i] : memref<256x8xf16, 1>
        %act = memref.load %a[%k] : memref<256xi32, 1>
        vector.store %words, %b[%c0] : memref<4xi32>, vector<4xi32>
        %first = memref.load %b[%c0] : memref<4xi32>
        %mixed = arith.addi %first, %act : i32
        %f = arith.sitofp %mixed : i32 to f32
        %s = arith.extf %scale : f16 to f32
        %p = arith.mulf %f, %s : f32
        %next = arith.addf %acc, %p : f32
        memref.store %next, %out[%i] : memref<256xf32, 1>
        scf.yield %next : f32
      }
      memref.store %sum, %out[%row] : memref<256xf32, 1>
      gpu.return
    }
  }
}


// -----

// Left alone: three slots of 1024 threads x 20 bytes (60 KiB) are past the ring's 48 KiB.
// CHECK-LABEL: gpu.func @step_loop
// CHECK-SAME: tile.shared_bytes = 100
// CHECK-NOT: nvvm.cp.async
// CHECK: gpu.return
module attributes {gpu.container_module, tile.loop_load_ring_slots = 3 : i32} {
  gpu.module @kernels {
    gpu.func @step_loop(%w: memref<256x64xi32, 1>, %scales: memref<256x8xf16, 1>, %a: memref<256xi32, 1>, %out: memref<256xf32, 1>) kernel attributes {known_block_size = array<i32: 1024, 1, 1>, known_grid_size = array<i32: 64, 1, 1>, tile.shared_bytes = 100 : i64} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %c60 = arith.constant 60 : index
      %zero = arith.constant 0.0 : f32
      %zeros = arith.constant dense<0> : vector<4xi32>
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %row = arith.addi %tid, %bid : index
      %b = memref.alloca() : memref<4xi32>
      %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
        %k = arith.muli %i, %c4 : index
        %fits = arith.cmpi ule, %k, %c60 : index
        %words = scf.if %fits -> (vector<4xi32>) {
          %v = vector.load %w[%row, %k] {alignment = 16 : i64} : memref<256x64xi32, 1>, vector<4xi32>
          scf.yield %v : vector<4xi32>
        } else {
          %e = memref.load %w[%row, %k] : memref<256x64xi32, 1>
          %v = vector.insert %e, %zeros [0] : i32 into vector<4xi32>
          scf.yield %v : vector<4xi32>
        }
        %scale = memref.load %scales[%row, %i] : memref<256x8xf16, 1>
        %act = memref.load %a[%k] : memref<256xi32, 1>
        vector.store %words, %b[%c0] : memref<4xi32>, vector<4xi32>
        %first = memref.load %b[%c0] : memref<4xi32>
        %mixed = arith.addi %first, %act : i32
        %f = arith.sitofp %mixed : i32 to f32
        %s = arith.extf %scale : f16 to f32
        %p = arith.mulf %f, %s : f32
        %next = arith.addf %acc, %p : f32
        scf.yield %next : f32
      }
      memref.store %sum, %out[%row] : memref<256xf32, 1>
      gpu.return
    }
  }
}

// -----

// Left alone: a loop over i32 values (the ring counts iterations in index values).
// CHECK-LABEL: gpu.func @i32_loop
// CHECK-NOT: nvvm.cp.async
// CHECK: gpu.return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @i32_loop(%w: memref<256x64xi32, 1>, %out: memref<256xi32, 1>) kernel attributes {known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c8 = arith.constant 8 : i32
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %row = arith.addi %tid, %bid : index
      %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %c0) -> (i32) : i32 {
        %k = arith.index_cast %i : i32 to index
        %v = memref.load %w[%row, %k] : memref<256x64xi32, 1>
        %next = arith.addi %acc, %v : i32
        scf.yield %next : i32
      }
      memref.store %sum, %out[%row] : memref<256xi32, 1>
      gpu.return
    }
  }
}

// -----

// A 1-byte float8 block scale (T.float8_e8m0fnu): its aligned word copied, the byte read back
// as an i8 and bitcast (LLVM loads no float8).
// CHECK-LABEL: gpu.func @float8_scales
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache =  ca
// CHECK: scf.for
// CHECK: nvvm.cp.async.wait.group 1
// CHECK: %[[BYTE:.*]] = llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr<3> -> i8
// CHECK-NEXT: arith.bitcast %[[BYTE]] : i8 to f8E8M0FNU
module attributes {gpu.container_module, tile.loop_load_ring_slots = 2 : i32} {
  gpu.module @kernels {
    gpu.func @float8_scales(%scales: memref<256x8xf8E8M0FNU, 1>, %out: memref<256xf32, 1>) kernel attributes {known_block_size = array<i32: 32, 1, 1>, known_grid_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c8 = arith.constant 8 : index
      %zero = arith.constant 0.0 : f32
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %row = arith.addi %tid, %bid : index
      %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (f32) {
        %e = memref.load %scales[%row, %i] : memref<256x8xf8E8M0FNU, 1>
        %f = arith.extf %e : f8E8M0FNU to f32
        %next = arith.addf %acc, %f : f32
        scf.yield %next : f32
      }
      memref.store %sum, %out[%row] : memref<256xf32, 1>
      gpu.return
    }
  }
}

// -----

// A block of 34 threads: the 4-byte scales take 136 bytes of a slot, so the 16-byte weights'
// shares start at 144 (16-byte aligned), the slot is 144 + 34 x 16 = 688 bytes, two 1376.
// CHECK-LABEL: gpu.func @odd_block
// CHECK-SAME: tile.shared_bytes = 1376
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache =  ca
// CHECK: arith.constant 144 : index
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg
module attributes {gpu.container_module, tile.loop_load_ring_slots = 2 : i32} {
  gpu.module @kernels {
    gpu.func @odd_block(%scales: memref<256x8xi32, 1>, %w: memref<256x64xi32, 1>, %out: memref<256xi32, 1>) kernel attributes {known_block_size = array<i32: 34, 1, 1>, known_grid_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c8 = arith.constant 8 : index
      %zero = arith.constant 0 : i32
      %tid = gpu.thread_id x
      %bid = gpu.block_id x
      %row = arith.addi %tid, %bid : index
      %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%acc = %zero) -> (i32) {
        %s = memref.load %scales[%row, %i] : memref<256x8xi32, 1>
        %k = arith.muli %i, %c4 : index
        %v = vector.load %w[%row, %k] {alignment = 16 : i64} : memref<256x64xi32, 1>, vector<4xi32>
        %e = vector.extract %v[0] : i32 from vector<4xi32>
        %p = arith.muli %s, %e : i32
        %next = arith.addi %acc, %p : i32
        scf.yield %next : i32
      }
      memref.store %sum, %out[%row] : memref<256xi32, 1>
      gpu.return
    }
  }
}
