"""Layouts of tiles.

- `linear`: the model every fragment layout is written in, a GF(2)-linear map from
  (register, lane, warp) bits to tile coordinates (`LinearLayout`: apply, locate, inverse,
  slice, reduction_bits, contiguous_registers, register_permutation / conversion, text form
  of the `#tile.linear` attribute, from_holders for TileLang's T.Fragment tables), and
  `blocked` (runs per thread, threads side by side).
- `nvidia`: the mma.sync (m16n8, A/B operands over a warp grid) and wgmma (m64nN accumulator
  over warpgroups, register A) fragments.
- `amd`: the MFMA fragments of 64-lane waves (accumulator, A and B operands over a wave
  grid) and the instructions of each CDNA chip.
- `shared`: the `#tile.swizzle` shared-memory layouts (XOR swizzles of 16-byte chunks, padding).
- `emit`: a layout's per-thread coordinates as arith IR.
"""
