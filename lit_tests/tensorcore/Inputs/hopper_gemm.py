"""Print the sm_90a generator's MLIR for a HopperGemmConfig given as key=value arguments
(ints and booleans parsed), for lit tests of configs the pass does not choose
(a RUN line cannot name the package: lit rewrites the tool name inside it)."""

import sys

from tilec.compiler.tensorcore.hopper import HopperGemmConfig, hopper_gemm_mlir


def parse(value: str) -> object:
    if value in ("True", "False"):
        return value == "True"
    return int(value) if value.isdigit() else value


fields = dict(argument.split("=", 1) for argument in sys.argv[1:])
print(hopper_gemm_mlir(HopperGemmConfig(**{key: parse(v) for key, v in fields.items()})))
