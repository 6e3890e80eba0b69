"""TileLang's `tilelang.cuda.intrinsics.macro`: emitters of hand-written per-warp MMA code."""
