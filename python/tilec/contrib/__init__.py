"""TileLang's `tilelang.contrib` helpers that have a meaning in tilec (`nvcc`)."""
