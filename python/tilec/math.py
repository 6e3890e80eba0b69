"""Integer helpers for choosing tile sizes on the host (`tilec.cdiv`, `tilec.math.*`).

`cdiv` is `T.ceildiv`: folded on Python ints, and inside a kernel it also divides sizes that are
only known at run time.
"""

from __future__ import annotations

import operator

from tilec.errors import TilecError
from tilec.language import ceildiv as cdiv


def next_power_of_2(value: int) -> int:
    """The smallest power of two >= `value` (1 for 0 and 1)."""
    value = operator.index(value)
    if value < 0:
        raise TilecError(f"next_power_of_2 takes a non-negative integer, got {value}")
    return 1 << max(value - 1, 0).bit_length()


__all__ = ["cdiv", "next_power_of_2"]
