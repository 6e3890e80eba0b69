"""cuRAND's Philox4x32-10 stream in plain Python, written from the generator's definition: the
reference tilec's T.rng_* draws are checked against (CPU tests and the GPU suite)."""

from __future__ import annotations

MASK = 0xFFFFFFFF


def philox(counter: list[int], key: list[int]) -> list[int]:
    c, k = list(counter), list(key)
    for round_number in range(10):
        if round_number:
            k = [(k[0] + 0x9E3779B9) & MASK, (k[1] + 0xBB67AE85) & MASK]
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k[0], p1 & MASK, (p0 >> 32) ^ c[3] ^ k[1], p0 & MASK]
    return c


def curand_stream(seed: int, subsequence: int, offset: int, count: int) -> list[int]:
    """The first `count` curand() results of a state curand_init made."""
    key = [seed & MASK, (seed >> 32) & MASK]
    value = (subsequence << 64) + offset // 4
    skip = offset % 4
    drawn: list[int] = []
    while len(drawn) < count + skip:
        drawn += philox([(value >> (32 * n)) & MASK for n in range(4)], key)
        value += 1
    return drawn[skip:skip + count]
