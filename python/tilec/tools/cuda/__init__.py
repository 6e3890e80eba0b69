"""TileLang's CUDA-only tools (`tilelang.tools.cuda`): IKET instrumentation (`iket`)."""
