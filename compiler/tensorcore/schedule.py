"""From the user's knobs (block sizes, threads, num_stages) to a tensor-core kernel config.

Hopper: block_M and block_N are kept; each consumer warpgroup takes block_M / consumers rows,
with consumers = threads / 128 (1 or 2; a producer warpgroup is added on top). The K tile of a
pipeline stage is one 128-byte swizzle row (64 16-bit, 128 8-bit or 32 tf32 elements): a
smaller user block_K is merged into it, and the stage count keeps at least the user's K depth
in flight (block_K x num_stages), then grows while shared memory allows (up to 6): on the H200 the
quickstart's literal 128x128x32 / 3 stages leaves TMA latency exposed (0.42x cuBLAS measured)
where 128x128x64 / 4 stages reaches 0.93x.
Ampere: everything literal; the warps (threads / 32) form the most square grid that divides
the block.
"""

from __future__ import annotations

import math

from tilec.compiler.tensorcore.ampere import AmpereGemmConfig
from tilec.compiler.tensorcore.dtypes import OPERAND_BYTES
from tilec.compiler.tensorcore.hopper import HopperGemmConfig

MAX_SHARED = 232448
MAX_FILLED_STAGES = 6


def hopper_config(
    block_m: int,
    block_n: int,
    block_k: int,
    threads: int,
    stages: int,
    dtype: str,
    persistent: bool,
    fill_stages: bool = True,
    out_dtype: str = "",
    trans_a: bool = False,
    trans_b: bool = False,
) -> HopperGemmConfig | None:
    """The wgmma kernel for these knobs, or None when no variant of it fits them."""
    consumers = 2 if threads >= 256 and block_m % 128 == 0 else 1
    if block_m // consumers not in (64, 128) or block_n % 64 or not 64 <= block_n <= 256:
        return None
    if (block_m // consumers // 64) * block_n > 256:
        return None
    k_tile = 128 // OPERAND_BYTES[dtype]
    depth = max(2, math.ceil(block_k * stages / k_tile))
    epilogue_n = 128 if block_n % 128 == 0 else 64
    best = None
    # the most stages up to the cap that fit (fewer than the user's depth when a wide type
    # or a 4-byte output leaves no room for them)
    for count in range(2, max(depth, MAX_FILLED_STAGES if fill_stages else depth) + 1):
        try:
            best = HopperGemmConfig(
                block_m=block_m,
                block_n=block_n,
                block_k=k_tile,
                stages=count,
                consumers=consumers,
                dtype=dtype,
                persistent=persistent,
                epilogue_n=epilogue_n,
                out_dtype=out_dtype,
                trans_a=trans_a,
                trans_b=trans_b,
            )
        except ValueError:
            break
    return best


def ampere_config(
    block_m: int,
    block_n: int,
    block_k: int,
    threads: int,
    stages: int,
    dtype: str,
    out_dtype: str = "",
    trans_a: bool = False,
    trans_b: bool = False,
) -> AmpereGemmConfig | None:
    """The mma.sync kernel for these knobs, or None when they do not fit it."""
    warps = threads // 32
    if warps < 1 or threads % 32:
        return None
    options = [(wm, warps // wm) for wm in range(1, warps + 1) if warps % wm == 0]
    options.sort(key=lambda grid: abs(block_m / grid[0] - block_n / grid[1]))
    for warps_m, warps_n in options:
        try:
            return AmpereGemmConfig(
                block_m=block_m,
                block_n=block_n,
                block_k=block_k,
                stages=max(2, stages),
                warps_m=warps_m,
                warps_n=warps_n,
                dtype=dtype,
                out_dtype=out_dtype,
                trans_a=trans_a,
                trans_b=trans_b,
            )
        except ValueError:
            continue
    return None


def best_hopper_config(
    m: int, n: int, dtype: str, sms: int = 132, **types: str | bool
) -> HopperGemmConfig:
    """A tuned choice per problem shape: 128x256 tiles when they fill the machine, else
    narrower tiles so that more SMs share a small problem (what an autotuner would pick)."""
    for block_n in (256, 128, 64):
        tiles = math.ceil(m / 128) * math.ceil(n / block_n)
        if tiles >= sms * 0.75 or block_n == 64:
            epilogue_n = 128 if block_n >= 128 else 64
            block_k = 128 // OPERAND_BYTES[dtype]
            return HopperGemmConfig(
                block_n=block_n, block_k=block_k, dtype=dtype, epilogue_n=epilogue_n, **types
            )
    raise AssertionError("unreachable")
