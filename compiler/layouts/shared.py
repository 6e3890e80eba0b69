"""Shared-memory layouts: the `#tile.swizzle` attribute's Python model.

A swizzled tile keeps rows of `row_bytes` one after another, but within each row the 16-byte
chunk index is XORed with the row's index modulo span / 16 (span = 32, 64 or 128 bytes: TMA's
and wgmma's swizzle modes; 128B is CUTLASS's Swizzle<3, 4, 3>), so the rows one access touches
fall into different banks. Over GF(2) that is a linear map of the byte offset's bits: bits
4.. of the offset XOR bits log2(span).. (the row bits), which `byte_offset` applies. A padded
tile (`#tile.swizzle<none, pad = P>`) instead starts each row P elements after the last one
ends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tilec.compiler.layouts.linear import LayoutError, log2

CHUNK_BYTES = 16
SPANS = (32, 64, 128)


@dataclass(frozen=True)
class Swizzle:
    """`bytes`: the swizzle span (0: none); `pad`: elements added after each row."""

    bytes: int = 0
    pad: int = 0

    def __post_init__(self) -> None:
        if self.bytes not in (0, *SPANS):
            raise LayoutError(f"a swizzle spans 32, 64 or 128 bytes, not {self.bytes}")
        if self.pad < 0 or (self.bytes and self.pad):
            raise LayoutError("a swizzled tile is not padded (and padding is not negative)")

    def __str__(self) -> str:
        """The attribute's text (what MLIR prints)."""
        body = f"{self.bytes}B" if self.bytes else "none"
        return f"#tile.swizzle<{body}{f', pad = {self.pad}' if self.pad else ''}>"

    @classmethod
    def parse(cls, text: str) -> Swizzle:
        match = re.fullmatch(r"#tile\.swizzle<\s*(?:(\d+)B|none)\s*(?:,\s*pad\s*=\s*(\d+))?\s*>",
                             text.strip())
        if match is None:
            raise LayoutError(f"not a #tile.swizzle layout: {text!r}")
        return cls(int(match[1] or 0), int(match[2] or 0))

    def byte_offset(self, row: int, column: int, row_elements: int, element_bytes: int) -> int:
        """Where element (row, column) of a tile with rows of `row_elements` sits, in bytes."""
        if not self.bytes:
            return (row * (row_elements + self.pad) + column) * element_bytes
        linear = (row * row_elements + column) * element_bytes
        if (row_elements * element_bytes) % self.bytes and row_elements * element_bytes > \
                self.bytes:
            raise LayoutError(f"a {self.bytes}B swizzle needs rows of a multiple of "
                              f"{self.bytes} bytes, not {row_elements * element_bytes}")
        chunks = log2(self.bytes // CHUNK_BYTES)
        row_bits = (linear >> log2(self.bytes)) & ((1 << chunks) - 1)
        return linear ^ (row_bits << log2(CHUNK_BYTES))
