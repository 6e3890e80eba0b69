// RUN: tilec-opt --plan-warpgroup-pingpong --split-input-file --verify-diagnostics %s | FileCheck %s
// Attention's loop on a TMA ring of two consumer warpgroups (S = Q K^T over both, the softmax
// in registers, O += P V over both) gets tile.pingpong in a module that opted in; a loop
// already marked is checked, whether or not the module opted in. The loop as written takes
// turns apart (together = false), a rotated one (both gemms tile.deferred_wait, side by side)
// both gemms in one turn (together = true).

// CHECK-LABEL: func.func @attention
// CHECK: tile.pipelined {{.*}}{tile.pingpong = {barrier = 4 : i64, together = false}
module attributes {tile.arch = "sm_90a", tile.warpgroup_pingpong} {
  func.func @attention(%K: memref<4x128x64xf16>, %V: memref<4x128x64xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c4) threads [256] {
    ^bb0(%bx: index):
      %qs = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %ks = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %vs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %s = tile.alloc : memref<128x128xf32, "fragment">
      %p = tile.alloc : memref<128x128xf16, "fragment">
      %o = tile.alloc : memref<128x64xf32, "fragment">
      tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = true, stages = 2 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c128 : index
        tile.copy %K[%bx, %k0, %c0] [1, 128, 64] to %ks[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<4x128x64xf16> to memref<128x64xf16, "shared">
        tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
        tile.parallel [128, 128] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<128x128xf32, "fragment">
          %e = math.exp2 %x : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<128x128xf16, "fragment">
        }
        tile.copy %V[%bx, %k0, %c0] [1, 128, 64] to %vs[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<4x128x64xf16> to memref<128x64xf16, "shared">
        tile.gemm %p, %vs, %o {tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 64 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x128xf16, "fragment">, memref<128x64xf16, "shared">, memref<128x64xf32, "fragment">
      }
    }
    return
  }
}

// -----

// The same loop in a module that did not opt in: left alone.
// CHECK-LABEL: func.func @not_opted_in
// CHECK-NOT: tile.pingpong
module attributes {tile.arch = "sm_90a"} {
  func.func @not_opted_in(%K: memref<4x128x64xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    tile.kernel grid(%c4) threads [256] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<128x64xf16, "shared">
      %ks = tile.alloc : memref<128x64xf16, "shared">
      %s = tile.alloc : memref<128x128xf32, "fragment">
      %t = tile.alloc : memref<128x128xf32, "fragment">
      tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = true, stages = 2 : i64}} {
      ^bb0(%k: index):
        tile.gemm %qs, %ks, %s {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
        tile.gemm %qs, %ks, %t {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// One consumer warpgroup has no one to take turns with; a one-gemm loop (its gemm left in
// flight) has no softmax to hide: neither is marked.
// CHECK-LABEL: func.func @declined
// CHECK-NOT: tile.pingpong
module attributes {tile.arch = "sm_90a", tile.warpgroup_pingpong} {
  func.func @declined(%K: memref<4x128x64xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    tile.kernel grid(%c4) threads [128] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<128x64xf16, "shared">
      %ks = tile.alloc : memref<128x64xf16, "shared">
      %s = tile.alloc : memref<128x128xf32, "fragment">
      %t = tile.alloc : memref<128x128xf32, "fragment">
      tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.tma_ring = {consumers = 1 : i64, overlap = false, persistent = true, stages = 2 : i64}} {
      ^bb0(%k: index):
        tile.gemm %qs, %ks, %s {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
        tile.gemm %qs, %ks, %t {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 2 : i64, n = 128 : i64, reordered = false, warpgroups = 1 : i64}} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    tile.kernel grid(%c4) threads [256] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<128x64xf16, "shared">
      %ks = tile.alloc : memref<128x64xf16, "shared">
      %s = tile.alloc : memref<128x128xf32, "fragment">
      tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = true, persistent = true, stages = 2 : i64}} {
      ^bb0(%k: index):
        tile.gemm %qs, %ks, %s {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// A hand-marked loop with one gemm: rejected.
module attributes {tile.arch = "sm_90a"} {
  func.func @one_gemm(%K: memref<4x128x64xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    tile.kernel grid(%c4) threads [256] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<128x64xf16, "shared">
      %ks = tile.alloc : memref<128x64xf16, "shared">
      %s = tile.alloc : memref<128x128xf32, "fragment">
      // expected-error @+1 {{tile.pingpong needs a tile.tma_ring loop of 2 consumer warpgroups whose body holds two tile.wgmma gemms over both}}
      tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.pingpong = {barrier = 4 : i64}, tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = true, stages = 2 : i64}} {
      ^bb0(%k: index):
        tile.gemm %qs, %ks, %s {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// Named barriers stop at 15: a turn barrier pair starting at 15 is rejected.
module attributes {tile.arch = "sm_90a"} {
  func.func @barrier_out_of_range(%K: memref<4x128x64xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    tile.kernel grid(%c4) threads [256] {
    ^bb0(%bx: index):
      %qs = tile.alloc : memref<128x64xf16, "shared">
      %ks = tile.alloc : memref<128x64xf16, "shared">
      %s = tile.alloc : memref<128x128xf32, "fragment">
      %t = tile.alloc : memref<128x128xf32, "fragment">
      // expected-error @+1 {{tile.pingpong barrier = 15: named barriers 15 and 16 must lie in 1..15}}
      tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.pingpong = {barrier = 15 : i64}, tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = true, stages = 2 : i64}} {
      ^bb0(%k: index):
        tile.gemm %qs, %ks, %s {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
        tile.gemm %qs, %ks, %t {transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// A rotated loop (rotate-attention-loop): Q K^T of tile k, the copy of V_{k-1} with its corner's
// index arithmetic, P V of tile k - 1, both gemms deferred, then the softmax: one turn takes both.
// CHECK-LABEL: func.func @rotated
// CHECK: tile.pipelined {{.*}}{tile.pingpong = {barrier = 4 : i64, together = true}
module attributes {tile.arch = "sm_90a", tile.warpgroup_pingpong} {
  func.func @rotated(%K: memref<4x128x64xf16>, %V: memref<4x128x64xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c4) threads [256] {
    ^bb0(%bx: index):
      %qs = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %ks = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %vs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %s = tile.alloc : memref<128x128xf32, "fragment">
      %p = tile.alloc : memref<128x128xf16, "fragment">
      %o = tile.alloc : memref<128x64xf32, "fragment">
      tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = true, stages = 2 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c128 : index
        tile.copy %K[%bx, %k0, %c0] [1, 128, 64] to %ks[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<4x128x64xf16> to memref<128x64xf16, "shared">
        tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true, tile.deferred_wait, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
        %prev = arith.subi %k, %c1 : index
        %kv = arith.maxsi %prev, %c0 : index
        %v0 = arith.muli %kv, %c128 : index
        tile.copy %V[%bx, %v0, %c0] [1, 128, 64] to %vs[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<4x128x64xf16> to memref<128x64xf16, "shared">
        tile.gemm %p, %vs, %o {tile.deferred_wait, tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 64 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x128xf16, "fragment">, memref<128x64xf16, "shared">, memref<128x64xf32, "fragment">
        tile.parallel [128, 128] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<128x128xf32, "fragment">
          %e = math.exp2 %x : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<128x128xf16, "fragment">
        }
      }
    }
    return
  }
}

// -----

// A rotated loop with the softmax between its gemms: a turn taking both gemms would hold the
// softmax too (and any barrier in it over both warpgroups would wait on a warpgroup waiting for
// its turn): left alone.
// CHECK-LABEL: func.func @softmax_between
// CHECK-NOT: tile.pingpong
module attributes {tile.arch = "sm_90a", tile.warpgroup_pingpong} {
  func.func @softmax_between(%K: memref<4x128x64xf16>, %V: memref<4x128x64xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c4) threads [256] {
    ^bb0(%bx: index):
      %qs = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %ks = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %vs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %s = tile.alloc : memref<128x128xf32, "fragment">
      %p = tile.alloc : memref<128x128xf16, "fragment">
      %o = tile.alloc : memref<128x64xf32, "fragment">
      tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = true, stages = 2 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c128 : index
        tile.copy %K[%bx, %k0, %c0] [1, 128, 64] to %ks[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<4x128x64xf16> to memref<128x64xf16, "shared">
        tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true, tile.deferred_wait, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
        tile.parallel [128, 128] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<128x128xf32, "fragment">
          %e = math.exp2 %x : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<128x128xf16, "fragment">
        }
        %prev = arith.subi %k, %c1 : index
        %kv = arith.maxsi %prev, %c0 : index
        %v0 = arith.muli %kv, %c128 : index
        tile.copy %V[%bx, %v0, %c0] [1, 128, 64] to %vs[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<4x128x64xf16> to memref<128x64xf16, "shared">
        tile.gemm %p, %vs, %o {tile.deferred_wait, tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 64 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x128xf16, "fragment">, memref<128x64xf16, "shared">, memref<128x64xf32, "fragment">
      }
    }
    return
  }
}

// -----

// One gemm deferred and not the other: neither schedule's turns fit; left alone.
// CHECK-LABEL: func.func @one_deferred
// CHECK-NOT: tile.pingpong
module attributes {tile.arch = "sm_90a", tile.warpgroup_pingpong} {
  func.func @one_deferred(%K: memref<4x128x64xf16>, %V: memref<4x128x64xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c4) threads [256] {
    ^bb0(%bx: index):
      %qs = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %ks = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %vs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %s = tile.alloc : memref<128x128xf32, "fragment">
      %p = tile.alloc : memref<128x128xf16, "fragment">
      %o = tile.alloc : memref<128x64xf32, "fragment">
      tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = true, stages = 2 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c128 : index
        tile.copy %K[%bx, %k0, %c0] [1, 128, 64] to %ks[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<4x128x64xf16> to memref<128x64xf16, "shared">
        tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
        tile.parallel [128, 128] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<128x128xf32, "fragment">
          %e = math.exp2 %x : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<128x128xf16, "fragment">
        }
        tile.copy %V[%bx, %k0, %c0] [1, 128, 64] to %vs[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<4x128x64xf16> to memref<128x64xf16, "shared">
        tile.gemm %p, %vs, %o {tile.deferred_wait, tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 64 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x128xf16, "fragment">, memref<128x64xf16, "shared">, memref<128x64xf32, "fragment">
      }
    }
    return
  }
}

// -----

// A rotated loop marked by hand with turns apart: rejected.
module attributes {tile.arch = "sm_90a"} {
  func.func @marked_apart(%K: memref<4x128x64xf16>, %V: memref<4x128x64xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c4) threads [256] {
    ^bb0(%bx: index):
      %qs = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %ks = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %vs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
      %s = tile.alloc : memref<128x128xf32, "fragment">
      %p = tile.alloc : memref<128x128xf16, "fragment">
      %o = tile.alloc : memref<128x64xf32, "fragment">
      // expected-error @+1 {{tile.pingpong together = false: the loop's gemms are tile.deferred_wait (rotate-attention-loop)}}
      tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.pingpong = {barrier = 4 : i64, together = false}, tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = true, stages = 2 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c128 : index
        tile.copy %K[%bx, %k0, %c0] [1, 128, 64] to %ks[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<4x128x64xf16> to memref<128x64xf16, "shared">
        tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true, tile.deferred_wait, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x64xf16, "shared">, memref<128x64xf16, "shared">, memref<128x128xf32, "fragment">
        %prev = arith.subi %k, %c1 : index
        %kv = arith.maxsi %prev, %c0 : index
        %v0 = arith.muli %kv, %c128 : index
        tile.copy %V[%bx, %v0, %c0] [1, 128, 64] to %vs[%c0, %c0] [128, 64] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<4x128x64xf16> to memref<128x64xf16, "shared">
        tile.gemm %p, %vs, %o {tile.deferred_wait, tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 64 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x128xf16, "fragment">, memref<128x64xf16, "shared">, memref<128x64xf32, "fragment">
        tile.parallel [128, 128] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<128x128xf32, "fragment">
          %e = math.exp2 %x : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<128x128xf16, "fragment">
        }
      }
    }
    return
  }
}

