// RUN: tilec-opt --name-live-lanes %s --split-input-file --verify-diagnostics
// What name-live-lanes rejects: a shuffle that would read a lane not running it, and a
// warp-collective op in a loop some lanes of a warp leave early.

// A warp's butterfly (T.warp_reduce_sum) in a block of 48 threads: lane 0 of warp 1 reads
// lane 16, which the block lacks.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @absent_source(%x: f32, %out: memref<48xf32>) kernel attributes {known_block_size = array<i32: 48, 1, 1>} {
      %full = arith.constant -1 : i32
      %sixteen = arith.constant 16 : i32
      %clamp = arith.constant 31 : i32
      // expected-error @+1 {{this warp shuffle reads lane 16 on lane 0 of warp 1, and lane 16 does not run it (the block has 48 threads; 16 of warp 1's lanes reach this shuffle)}}
      %y = nvvm.shfl.sync bfly %full, %x, %sixteen, %clamp : f32 -> f32
      %tid = gpu.thread_id x
      memref.store %y, %out[%tid] : memref<48xf32>
      gpu.return
    }
  }
}

// -----

// A loop of `tid` iterations: lane 0 leaves at once, lane 31 after 31 trips.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @divergent_loop(%x: f32, %out: memref<32xf32>) kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      %full = arith.constant -1 : i32
      %one = arith.constant 1 : i32
      %clamp = arith.constant 31 : i32
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %tid = gpu.thread_id x
      scf.for %i = %c0 to %tid step %c1 {
        // expected-error @+1 {{a warp shuffle, vote or reduction in a loop whose trip count differs between the lanes of a warp}}
        %y = nvvm.shfl.sync bfly %full, %x, %one, %clamp : f32 -> f32
        memref.store %y, %out[%i] : memref<32xf32>
      }
      gpu.return
    }
  }
}
