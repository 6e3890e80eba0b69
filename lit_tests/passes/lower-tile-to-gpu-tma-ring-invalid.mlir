// RUN: not tilec-opt --lower-tile-to-gpu %s --split-input-file 2>&1 | FileCheck %s
// A tile.tma_ring loop is lowered from what plan-tma-pipelines recorded: a ring without its
// fields or with more wgmma groups in flight than slots, a copy of the loop without its
// box, or stage-epilogue-source's tile without a ring, past its slots or twice, is an op's error.

// CHECK: lower-tile-to-gpu-tma-ring-invalid.mlir:14: error: tile.tma_ring needs stages, consumers and overlap
func.func @incomplete_ring(%A: memref<512x512xf16>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  tile.kernel grid(%c4) threads [128] {
  ^bb0(%bx: index):
    %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
    tile.pipelined %c0 to %c4 step %c1 stages 3 attributes {tile.tma_ring = {stages = 3 : i64}} {
    ^bb0(%k: index):
      tile.copy %A[%c0, %c0] [128, 64] to %as[%c0, %c0] [128, 64] : memref<512x512xf16> to memref<128x64xf16, "shared">
    }
  }
  return
}

// -----

// CHECK: lower-tile-to-gpu-tma-ring-invalid.mlir:34: error: a copy of a tile.tma_ring loop needs tile.tma_load = {box, boxes, swizzle} (plan-tma-pipelines writes it)
func.func @copy_without_box(%A: memref<512x512xf16>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  tile.kernel grid(%c4) threads [128] {
  ^bb0(%bx: index):
    %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
    tile.pipelined %c0 to %c4 step %c1 stages 3 attributes {tile.tma_ring = {consumers = 1 : i64, overlap = false, stages = 3 : i64}} {
    ^bb0(%k: index):
      tile.copy %A[%c0, %c0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.tma_load = {box = array<i64: 64, 128>}} : memref<512x512xf16> to memref<128x64xf16, "shared">
    }
  }
  return
}

// -----

// CHECK: lower-tile-to-gpu-tma-ring-invalid.mlir:50: error: tile.tma_ring lag = 3 must be at least 1 and less than its 3 stages
func.func @lag_past_ring(%A: memref<512x512xf16>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  tile.kernel grid(%c4) threads [128] {
  ^bb0(%bx: index):
    %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
    tile.pipelined %c0 to %c4 step %c1 stages 3 attributes {tile.tma_ring = {consumers = 1 : i64, lag = 3 : i64, overlap = true, stages = 3 : i64}} {
    ^bb0(%k: index):
      tile.copy %A[%c0, %c0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<128x64xf16, "shared">
    }
  }
  return
}

// -----

// stage-epilogue-source's tile lives in a ring's slots: without a ring loop and its copy it
// has no bytes to be read from.
// CHECK: lower-tile-to-gpu-tma-ring-invalid.mlir:68: error: a tile.ring_source tile needs a tile.epilogue_source copy after a tile.tma_ring loop (stage-epilogue-source makes both)
func.func @source_without_ring(%R: memref<512x512xf16>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  tile.kernel grid(%c4) threads [128] {
  ^bb0(%bx: index):
    %rs = tile.alloc {tile.ring_source} : memref<128x64xf16, "shared">
    tile.copy %R[%c0, %c0] [128, 64] to %rs[%c0, %c0] [128, 64] : memref<512x512xf16> to memref<128x64xf16, "shared">
  }
  return
}

// -----

// Its boxes must fit the ring's stages' slots: four 16 KiB boxes, one a slot, two stages.
// CHECK: lower-tile-to-gpu-tma-ring-invalid.mlir:90: error: the tile.epilogue_source copy's 4 boxes of 16384 bytes do not fit the ring's 2 stages' slots (stage-epilogue-source checks it)
func.func @source_past_the_ring(%A: memref<512x512xf16>, %R: memref<512x512xf16>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  tile.kernel grid(%c4) threads [128] {
  ^bb0(%bx: index):
    %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
    %rs = tile.alloc {tile.ring_source} : memref<128x256xf16, "shared">
    tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.tma_ring = {consumers = 1 : i64, overlap = false, stages = 2 : i64}} {
    ^bb0(%k: index):
      tile.copy %A[%c0, %c0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<128x64xf16, "shared">
    }
    tile.copy %R[%c0, %c0] [128, 256] to %rs[%c0, %c0] [128, 256] {tile.epilogue_source = {box = array<i64: 64, 128>, boxes = 4 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<128x256xf16, "shared">
  }
  return
}

// -----

// One source tile a ring: its producer loads one after each tile's K tiles.
// CHECK: lower-tile-to-gpu-tma-ring-invalid.mlir:113: error: a tile.tma_ring loop's producer loads one tile.epilogue_source tile (stage-epilogue-source makes one)
func.func @two_sources(%A: memref<512x512xf16>, %R: memref<512x512xf16>) attributes {tile.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  tile.kernel grid(%c4) threads [128] {
  ^bb0(%bx: index):
    %as = tile.alloc {tile.shared_layout = {k_major = true, m_atoms = 0 : i64, span = 128 : i64, warpgroups = 0 : i64}} : memref<128x64xf16, "shared">
    %rs = tile.alloc {tile.ring_source} : memref<128x64xf16, "shared">
    %ts = tile.alloc {tile.ring_source} : memref<128x64xf16, "shared">
    tile.pipelined %c0 to %c4 step %c1 stages 2 attributes {tile.tma_ring = {consumers = 1 : i64, overlap = false, stages = 2 : i64}} {
    ^bb0(%k: index):
      tile.copy %A[%c0, %c0] [128, 64] to %as[%c0, %c0] [128, 64] {tile.tma_load = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<128x64xf16, "shared">
    }
    tile.copy %R[%c0, %c0] [128, 64] to %rs[%c0, %c0] [128, 64] {tile.epilogue_source = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<128x64xf16, "shared">
    tile.copy %R[%c0, %c0] [128, 64] to %ts[%c0, %c0] [128, 64] {tile.epilogue_source = {box = array<i64: 64, 128>, boxes = 1 : i64, swizzle = 128 : i64}} : memref<512x512xf16> to memref<128x64xf16, "shared">
  }
  return
}
