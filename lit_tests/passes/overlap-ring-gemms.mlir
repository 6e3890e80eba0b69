// RUN: tilec-opt --overlap-ring-gemms --split-input-file %s | FileCheck %s
// overlap-ring-gemms (opt-in: module attribute tile.overlap_ring_gemms): a TMA ring loop of
// several wgmma gemms (attention's S = Q K^T, softmax, O += P V) leaves its last gemm in
// flight into the next iteration (tile.tma_ring's overlap) and gets one slot more where
// shared memory holds it; a ring left at two slots, or a body that touches the last gemm's
// accumulator or A registers after it, is left alone.

// CHECK-LABEL: func.func @deepened
// Attention's loop (d 64) on a two-slot ring: P V left in flight, the ring one slot deeper
// (shared memory holds three).
// CHECK: tile.pipelined {{.*}}tile.tma_ring = {consumers = 2 : i64, overlap = true, persistent = true, stages = 3 : i64}
module attributes {tile.arch = "sm_90a", tile.overlap_ring_gemms} {
  func.func @deepened(%K: memref<4x128x64xf16>, %V: memref<4x128x64xf16>) attributes {tile.entry} {
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

// CHECK-LABEL: func.func @three_slots
// d 128 at three slots: a fourth does not fit, the three are enough (one to prefetch into).
// CHECK: tile.pipelined {{.*}}tile.tma_ring = {consumers = 2 : i64, overlap = true, persistent = true, stages = 3 : i64}
module attributes {tile.arch = "sm_90a", tile.overlap_ring_gemms} {
  func.func @three_slots(%K: memref<4x128x128xf16>, %V: memref<4x128x128xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c4) threads [256] {
    ^bb0(%bx: index):
      %qs = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf16, "shared">
      %ks = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf16, "shared">
      %vs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf16, "shared">
      %s = tile.alloc : memref<128x128xf32, "fragment">
      %p = tile.alloc : memref<128x128xf16, "fragment">
      %o = tile.alloc : memref<128x128xf32, "fragment">
      tile.pipelined %c0 to %c4 step %c1 stages 3 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = true, stages = 3 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c128 : index
        tile.copy %K[%bx, %k0, %c0] [1, 128, 128] to %ks[%c0, %c0] [128, 128] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 2 : i64, swizzle = 128 : i64}} : memref<4x128x128xf16> to memref<128x128xf16, "shared">
        tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x128xf16, "shared">, memref<128x128xf16, "shared">, memref<128x128xf32, "fragment">
        tile.parallel [128, 128] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<128x128xf32, "fragment">
          %e = math.exp2 %x : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<128x128xf16, "fragment">
        }
        tile.copy %V[%bx, %k0, %c0] [1, 128, 128] to %vs[%c0, %c0] [128, 128] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 2 : i64, swizzle = 128 : i64}} : memref<4x128x128xf16> to memref<128x128xf16, "shared">
        tile.gemm %p, %vs, %o {tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x128xf16, "fragment">, memref<128x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @two_slots_full
// d 128 at two slots beside a 32 KiB staging tile alive across the loop: a third slot does not fit, and two would
// leave none to prefetch into: left alone.
// CHECK: tile.pipelined {{.*}}tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = true, stages = 2 : i64}
module attributes {tile.arch = "sm_90a", tile.overlap_ring_gemms} {
  func.func @two_slots_full(%K: memref<4x128x128xf16>, %V: memref<4x128x128xf16>) attributes {tile.entry} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c128 = arith.constant 128 : index
    tile.kernel grid(%c4) threads [256] {
    ^bb0(%bx: index):
      %qs = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf16, "shared">
      %ks = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf16, "shared">
      %vs = tile.alloc {tile.shared_layout = {k_major = false, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x128xf16, "shared">
      %os = tile.alloc : memref<128x128xf16, "shared">
      %s = tile.alloc : memref<128x128xf32, "fragment">
      %p = tile.alloc : memref<128x128xf16, "fragment">
      %o = tile.alloc : memref<128x128xf32, "fragment">
      tile.copy %p[%c0, %c0] [128, 128] to %os[%c0, %c0] [128, 128] : memref<128x128xf16, "fragment"> to memref<128x128xf16, "shared">
      tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = true, stages = 2 : i64}} {
      ^bb0(%k: index):
        %k0 = arith.muli %k, %c128 : index
        tile.copy %K[%bx, %k0, %c0] [1, 128, 128] to %ks[%c0, %c0] [128, 128] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 2 : i64, swizzle = 128 : i64}} : memref<4x128x128xf16> to memref<128x128xf16, "shared">
        tile.gemm %qs, %ks, %s {clear_accum = true, transpose_b = true, tile.wgmma = {a_registers = false, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x128xf16, "shared">, memref<128x128xf16, "shared">, memref<128x128xf32, "fragment">
        tile.parallel [128, 128] {
        ^bb0(%i: index, %j: index):
          %x = memref.load %s[%i, %j] : memref<128x128xf32, "fragment">
          %e = math.exp2 %x : f32
          %h = arith.truncf %e : f32 to f16
          memref.store %h, %p[%i, %j] : memref<128x128xf16, "fragment">
        }
        tile.copy %V[%bx, %k0, %c0] [1, 128, 128] to %vs[%c0, %c0] [128, 128] {tile.async = "cp.async", tile.tma_load = {box = array<i64: 64, 128, 1>, boxes = 2 : i64, swizzle = 128 : i64}} : memref<4x128x128xf16> to memref<128x128xf16, "shared">
        tile.gemm %p, %vs, %o {tile.wgmma = {a_registers = true, dtype = "f16", k = 16 : i64, m_atoms = 1 : i64, n = 128 : i64, reordered = false, warpgroups = 2 : i64}} : memref<128x128xf16, "fragment">, memref<128x128xf16, "shared">, memref<128x128xf32, "fragment">
      }
      tile.copy %p[%c0, %c0] [128, 128] to %os[%c0, %c0] [128, 128] : memref<128x128xf16, "fragment"> to memref<128x128xf16, "shared">
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @accumulator_read_after
// O read after P V in the body: the group must be waited for there; left alone.
// CHECK: tile.pipelined {{.*}}tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = true, stages = 2 : i64}
module attributes {tile.arch = "sm_90a", tile.overlap_ring_gemms} {
  func.func @accumulator_read_after(%K: memref<4x128x64xf16>, %V: memref<4x128x64xf16>) attributes {tile.entry} {
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
        tile.parallel [128, 64] {
        ^bb0(%i: index, %j: index):
          %y = memref.load %o[%i, %j] : memref<128x64xf32, "fragment">
          %z = arith.addf %y, %y : f32
          memref.store %z, %o[%i, %j] : memref<128x64xf32, "fragment">
        }
      }
    }
    return
  }
}

// -----

// CHECK-LABEL: func.func @not_opted_in
// A module that did not opt in: left alone.
// CHECK: tile.pipelined {{.*}}tile.tma_ring = {consumers = 2 : i64, overlap = false, persistent = true, stages = 2 : i64}
module attributes {tile.arch = "sm_90a"} {
  func.func @not_opted_in(%K: memref<4x128x64xf16>, %V: memref<4x128x64xf16>) attributes {tile.entry} {
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
