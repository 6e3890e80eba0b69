// RUN: tilec-opt --plan-shared-memory %s --split-input-file --verify-diagnostics
// What plan-shared-memory rejects.

// Two buffers alive at once that together exceed a block's shared memory on sm_80 (163 KiB);
// either alone would fit.
module attributes {tile.arch = "sm_80"} {
  func.func @too_big(%A: memref<128x256xf32>, %n: index) attributes {tile.entry} {
    // expected-error @+1 {{the kernel needs 262144 bytes of shared memory (its buffers planned with reuse); a block on sm_80 has at most 166912 (use smaller tiles or fewer stages)}}
    tile.kernel grid(%n) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %a = tile.alloc : memref<128x256xf32, "shared">
      %b = tile.alloc : memref<128x256xf32, "shared">
      tile.copy %A[%c0, %c0] [128, 256] to %a[%c0, %c0] [128, 256] : memref<128x256xf32> to memref<128x256xf32, "shared">
      tile.copy %a[%c0, %c0] [128, 256] to %b[%c0, %c0] [128, 256] : memref<128x256xf32, "shared"> to memref<128x256xf32, "shared">
      tile.copy %b[%c0, %c0] [128, 256] to %A[%c0, %c0] [128, 256] : memref<128x256xf32, "shared"> to memref<128x256xf32>
    }
    return
  }
}

// -----

// The same buffers one after the other fit: the second reuses the first's bytes.
module attributes {tile.arch = "sm_80"} {
  func.func @one_after_the_other(%A: memref<128x256xf32>, %n: index) attributes {tile.entry} {
    tile.kernel grid(%n) threads [128] {
    ^bb0(%bx: index):
      %c0 = arith.constant 0 : index
      %a = tile.alloc : memref<128x256xf32, "shared">
      %b = tile.alloc : memref<128x256xf32, "shared">
      tile.copy %A[%c0, %c0] [128, 256] to %a[%c0, %c0] [128, 256] : memref<128x256xf32> to memref<128x256xf32, "shared">
      tile.copy %a[%c0, %c0] [128, 256] to %A[%c0, %c0] [128, 256] : memref<128x256xf32, "shared"> to memref<128x256xf32>
      tile.copy %A[%c0, %c0] [128, 256] to %b[%c0, %c0] [128, 256] : memref<128x256xf32> to memref<128x256xf32, "shared">
      tile.copy %b[%c0, %c0] [128, 256] to %A[%c0, %c0] [128, 256] : memref<128x256xf32, "shared"> to memref<128x256xf32>
    }
    return
  }
}
