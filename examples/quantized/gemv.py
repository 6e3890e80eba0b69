"""Weight-only quantized GEMV / small-batch GEMM, C = A @ W.T with W decoded in registers.

Formats (B packed along K, the low bits first, as a torch uint8 tensor of shape (N, K * bits / 8)):
  gemv_uint       T.uint4 or T.uint2 weights q, fp16 scales and zeros per row and group of 128:
                  w = (q - zero) * scale
  gemv_uint4_words  the same int4 weights read as T.uint32 words, decoded by bit tricks
                  written in the kernel (nibble_scaled)
  gemv_uint_half2  int4 or int2 weights read as T.uint32 words, decoded into pairs of float16
                  (field_pairs) and computed on two weights an instruction (T.float16x2)
  gemv_nf4        T.uint4 codes into the 16 NF4 values (a table copied to shared memory), fp16
                  absmax scales per group of 128: w = nf4[q] * scale
  gemv_mxfp4      T.float4_e2m1fn weights, T.float8_e8m0fnu block scales per 32 (MXFP4):
                  w = fp4 * 2 ** (e - 127)
Activations fp16, accumulation fp32. A warp reduces `rows_per_warp` rows for `block_m` rows of A:
each lane copies the activations of its part of K (16-byte loads) once and one 16-byte load of
weights for each row, decodes them in registers, sums a * q (and a, for zeros) over its part
(one group holds it all), applies the group's scale once, and the warp sums its lanes with
shuffles. Fast math lets multiply-adds contract into FMAs, as nvcc does by default. Run it to
check every format against torch in float32 (it needs a GPU).
"""

import torch

import tilec as tilelang
import tilec.language as T

FAST_MATH = {tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True}
LANES = 32


def nibble_scaled(word, j):
    """Nibble j of a T.uint32 word times 16 ** (j % 5), exactly, as a float32: the nibble
    masked in place (bits 4p..4p+3, p = j % 5; nibbles 5 to 7 from the word shifted down by 20)
    and OR-ed into the bits of 2 ** 23 gives 2 ** 23 + q * 16 ** p (p < 5 keeps it in the
    mantissa), from which 2 ** 23 is subtracted."""
    high = j // 5
    place = j - 5 * high
    bits = T.Cast(T.uint32, ((word >> (20 * high)) & (15 << (4 * place))) | 0x4B000000)
    return T.reinterpret(bits, T.float32) - 8388608.0


def field_pairs(word, j, bits=4, zero=None):
    """Fields j and j + 16 / bits (j < 16 / bits) of a T.uint32 word of 32 / bits unsigned
    `bits`-bit fields, as a T.float16x2 pair of exact integers: one bitwise op (a LOP3) puts
    the fields of both 16-bit halves into the mantissas of 1024 (0x6400) where they lie in
    their byte, as 1024 + q * 2 ** (bits * p) (p = j % (8 / bits); the bytes from the word
    shifted down), and one HADD2 or HFMA2 takes the 1024 and the power of two away. With an
    integer `zero` (a T.float16x2 pair), the same HFMA2 takes it away too: its addend
    -1024 * 2 ** -(bits * p) - zero (at least 16 in magnitude, its ulp at most 1/64) is exact
    for an integer zero below 2 ** bits, so q - zero comes out exact, as decoding and then
    subtracting gives it (a fractional zero would be rounded in the addend: use the HSUB2)."""
    per_byte = 8 // bits
    place = bits * (j % per_byte)
    mask = ((1 << bits) - 1) * 0x00010001
    masked = (word >> (8 * (j // per_byte))) & (mask << place)
    pair = T.reinterpret(T.Cast(T.uint32, masked) | 0x64006400, T.float16x2)
    factor = T.float16x2(T.Cast(T.float16, 0.5 ** place))
    if zero is None:
        return pair * factor - factor * 1024.0
    return pair * factor + (factor * -1024.0 - zero)


def pair_sum(bits):
    """The float32 sum of the two halves of a T.float16x2 pair held as its T.uint32 bits."""
    low = T.reinterpret(T.Cast(T.uint16, bits), T.float16)
    high = T.reinterpret(T.Cast(T.uint16, bits >> 16), T.float16)
    return T.Cast(T.float32, low) + T.Cast(T.float32, high)


@T.macro
def warp_sum_store(acc, C, lane, first_m, row):
    """Each lane's partial sums of acc (block_m x rows_per_warp) added up across the warp by
    butterfly shuffles; lane 0 stores them as C's rows first_m.. and columns row.."""
    block_m, rows_per_warp = acc.shape
    for m in T.unroll(block_m):
        for r in T.unroll(rows_per_warp):
            for step in T.unroll(5):
                acc[m, r] += T.shfl_xor(acc[m, r], 16 >> step)
            if lane == 0:
                C[first_m + m, row + r] = acc[m, r]


@tilelang.jit(pass_configs=FAST_MATH)
def gemv_uint(A, B, scales, zeros, bits=4, warps=4, rows_per_warp=2, block_m=1, group=128):
    M, N, K = T.const("M, N, K")
    dtype = T.uint4 if bits == 4 else T.uint2
    per_lane = 128 // bits  # weights of one 16-byte load
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K), dtype)
    scales: T.Tensor((N, K // group), T.float16)
    zeros: T.Tensor((N, K // group), T.float16)
    C = T.empty((M, N), T.float16)
    chunk = LANES * per_lane  # weights of a row a warp reads in one step
    with T.Kernel(T.ceildiv(N, warps * rows_per_warp), T.ceildiv(M, block_m),
                  threads=(LANES, warps)) as (bx, by):
        a_local = T.alloc_local((block_m, per_lane), T.float16)
        b_local = T.alloc_local((rows_per_warp, per_lane), dtype)
        a_sum = T.alloc_local((block_m,), T.float32)
        dot = T.alloc_local((block_m, rows_per_warp), T.float32)
        acc = T.alloc_local((block_m, rows_per_warp), T.float32)
        lane = T.get_thread_binding(0)
        row = (bx * warps + T.get_thread_binding(1)) * rows_per_warp
        T.clear(acc)
        for ko in T.serial(T.ceildiv(K, chunk)):
            k0 = ko * chunk + lane * per_lane
            for m in T.unroll(block_m):
                T.copy(A[by * block_m + m, k0:k0 + per_lane], a_local[m, :])
            for r in T.unroll(rows_per_warp):
                T.copy(B[row + r, k0:k0 + per_lane], b_local[r, :])
            # over a group, sum a * (q - zero) * scale = scale * (sum a * q - zero * sum a)
            T.clear(a_sum)
            T.clear(dot)
            for v in T.unroll(per_lane):
                for m in T.unroll(block_m):
                    a = T.Cast(T.float32, a_local[m, v])
                    a_sum[m] += a
                    for r in T.unroll(rows_per_warp):
                        dot[m, r] += a * T.Cast(T.float32, b_local[r, v])
            for r in T.unroll(rows_per_warp):
                scale = T.Cast(T.float32, scales[row + r, k0 // group])
                zero = T.Cast(T.float32, zeros[row + r, k0 // group])
                for m in T.unroll(block_m):
                    acc[m, r] += scale * (dot[m, r] - zero * a_sum[m])
        warp_sum_store(acc, C, lane, by * block_m, row)
    return C


@tilelang.jit(pass_configs=FAST_MATH)
def gemv_uint4_words(A, B, scales, zeros, warps=4, rows_per_warp=4, block_m=1, group=128,
                     prefetch=False):
    """gemv_uint's int4 GEMV decoding 32-bit words with bit tricks written in the kernel: B is
    the same packed tensor seen as T.uint32 words (8 weights each, torch's .view(torch.uint32)),
    decoded by nibble_scaled: one bitwise op (a LOP3) and one subtraction per weight, no byte
    extraction or shift; a * q * 16 ** (j % 5) sums into the accumulator of that power, scaled
    by 16 ** -p once per step. With `prefetch`, a lane loads the next step's weights into a
    second set of registers before it decodes this step's, so its loads are in flight while it
    computes (past K the bounds-checked copy reads nothing and gives zeros)."""
    M, N, K = T.const("M, N, K")
    per_lane = 32  # 4 words: one 16-byte load
    words = per_lane // 8
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // 8), T.uint32)
    scales: T.Tensor((N, K // group), T.float16)
    zeros: T.Tensor((N, K // group), T.float16)
    C = T.empty((M, N), T.float16)
    chunk = LANES * per_lane
    with T.Kernel(T.ceildiv(N, warps * rows_per_warp), T.ceildiv(M, block_m),
                  threads=(LANES, warps)) as (bx, by):
        a_local = T.alloc_local((block_m, per_lane), T.float16)
        b_local = T.alloc_local((rows_per_warp, words), T.uint32)
        b_next = T.alloc_local((rows_per_warp, words), T.uint32)
        a_sum = T.alloc_local((block_m,), T.float32)
        dot = T.alloc_local((block_m, rows_per_warp, 5), T.float32)
        acc = T.alloc_local((block_m, rows_per_warp), T.float32)
        lane = T.get_thread_binding(0)
        row = (bx * warps + T.get_thread_binding(1)) * rows_per_warp
        T.clear(acc)
        if prefetch:
            for r in T.unroll(rows_per_warp):
                T.copy(B[row + r, lane * words:lane * words + words], b_next[r, :])
        for ko in T.serial(T.ceildiv(K, chunk)):
            k0 = ko * chunk + lane * per_lane
            if prefetch:
                for r in T.unroll(rows_per_warp):
                    T.copy(b_next[r, :], b_local[r, :])
                    T.copy(B[row + r, k0 // 8 + chunk // 8:k0 // 8 + chunk // 8 + words],
                           b_next[r, :])
            else:
                for r in T.unroll(rows_per_warp):
                    T.copy(B[row + r, k0 // 8:k0 // 8 + words], b_local[r, :])
            for m in T.unroll(block_m):
                T.copy(A[by * block_m + m, k0:k0 + per_lane], a_local[m, :])
            T.clear(a_sum)
            T.clear(dot)
            for i in T.unroll(words):
                for j in T.unroll(8):
                    for m in T.unroll(block_m):
                        a = T.Cast(T.float32, a_local[m, i * 8 + j])
                        a_sum[m] += a
                        for r in T.unroll(rows_per_warp):
                            dot[m, r, j % 5] += a * nibble_scaled(b_local[r, i], j)
            for r in T.unroll(rows_per_warp):
                scale = T.Cast(T.float32, scales[row + r, k0 // group])
                zero = T.Cast(T.float32, zeros[row + r, k0 // group])
                for m in T.unroll(block_m):
                    for place in T.unroll(4):  # sum of dot[place] / 16 ** place, Horner's way
                        dot[m, r, 3 - place] += dot[m, r, 4 - place] * 0.0625
                    acc[m, r] += scale * (dot[m, r, 0] - zero * a_sum[m])
        warp_sum_store(acc, C, lane, by * block_m, row)
    return C


@tilelang.jit(pass_configs=FAST_MATH)
def gemv_uint_half2(A, B, scales, zeros, bits=4, warps=4, rows_per_warp=4, block_m=1,
                    group=128, k_unroll=1, zero_from_sums=False, words=4, integer_zeros=False):
    """gemv_uint4_words' GEMV, for int4 or int2 words, computing on pairs of float16
    (T.float16x2: HFMA2, two weights an instruction). field_pairs decodes word i of a lane's
    step into the pairs of weights (j, j + 16 / bits), the activations are paired the same way
    (once per step, for all rows), the
    group's zero is subtracted from both weights at once (q - zero rounded to float16, as a
    dequantized fp16 weight is), and each (row, pair) accumulates its step of 16 products per
    half in float16; the step's sum is added in float32 and scaled there. The float16
    products and short sums cost relative error (6e-4 at 1x256x8192 in a torch simulation of
    this order, against 2e-4 of float32 sums). A lane issues the loads of `k_unroll` steps
    (k_unroll x rows_per_warp 16-byte weight loads) before it decodes the first of them, so
    that many bytes are in flight per warp; past K the bounds-checked copies read zeros. With
    `zero_from_sums`, the weights are not shifted by the zero: a step sums a * q per row and
    the activations once (one HADD2 per pair for all rows), and the zero is applied to that
    sum in float32, scale * (sum a * q - zero * sum a): a LOP3, an HFMA2 decode and an HFMA2
    product per two weights of a row, where the shift costs an HSUB2 more. `words` is the
    weight words a lane loads per row and step: 4 (16 bytes), or 1 or 2 for more, smaller
    steps (a warp then reads 128 or 256 bytes of a row at a time). With `integer_zeros` (the
    zeros are integers stored as float16, as GPTQ's zero points are) the zero is folded into
    the decode's HFMA2 (field_pairs), exactly: a LOP3, an HFMA2 decode and an HFMA2 product per
    two weights of a row, with the default's numerics; a fractional zero is then wrong."""
    if integer_zeros and zero_from_sums:
        raise ValueError("gemv_uint_half2 applies the zero either to the step's sums "
                         "(zero_from_sums) or in the decode (integer_zeros), not both")
    M, N, K = T.const("M, N, K")
    fields = 32 // bits  # weights of a word
    pairs = fields // 2
    per_lane = words * fields
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K // fields), T.uint32)
    scales: T.Tensor((N, K // group), T.float16)
    zeros: T.Tensor((N, K // group), T.float16)
    C = T.empty((M, N), T.float16)
    chunk = LANES * per_lane
    with T.Kernel(T.ceildiv(N, warps * rows_per_warp), T.ceildiv(M, block_m),
                  threads=(LANES, warps)) as (bx, by):
        a_local = T.alloc_local((k_unroll, block_m, per_lane), T.float16)
        b_local = T.alloc_local((k_unroll, rows_per_warp, words), T.uint32)
        a_pairs = T.alloc_local((block_m, words * pairs), T.uint32)
        dot = T.alloc_local((block_m, rows_per_warp), T.uint32)  # float16x2 bits
        a_sum = T.alloc_local((block_m,), T.uint32)  # float16x2 bits
        acc = T.alloc_local((block_m, rows_per_warp), T.float32)
        lane = T.get_thread_binding(0)
        row = (bx * warps + T.get_thread_binding(1)) * rows_per_warp
        T.clear(acc)
        for ko in T.serial(T.ceildiv(K, chunk * k_unroll)):
            for u in T.unroll(k_unroll):
                k0 = (ko * k_unroll + u) * chunk + lane * per_lane
                for r in T.unroll(rows_per_warp):
                    if words == 1:  # one word: an element, not a box
                        b_local[u, r, 0] = B[row + r, k0 // fields]
                    else:
                        T.copy(B[row + r, k0 // fields:k0 // fields + words], b_local[u, r, :])
                for m in T.unroll(block_m):
                    T.copy(A[by * block_m + m, k0:k0 + per_lane], a_local[u, m, :])
            for u in T.unroll(k_unroll):
                k0 = (ko * k_unroll + u) * chunk + lane * per_lane
                for m in T.unroll(block_m):
                    for i in T.unroll(words):
                        for j in T.unroll(pairs):
                            a_pairs[m, i * pairs + j] = T.reinterpret(T.float16x2(
                                a_local[u, m, i * fields + j],
                                a_local[u, m, i * fields + j + pairs]), T.uint32)
                    if zero_from_sums:
                        a_sum[m] = a_pairs[m, 0]
                        for p in T.unroll(1, words * pairs):
                            a_sum[m] = T.reinterpret(
                                T.reinterpret(a_sum[m], T.float16x2)
                                + T.reinterpret(a_pairs[m, p], T.float16x2), T.uint32)
                T.clear(dot)
                for r in T.unroll(rows_per_warp):
                    zero = T.float16x2(zeros[row + r, k0 // group])
                    for i in T.unroll(words):
                        for j in T.unroll(pairs):
                            if integer_zeros:
                                weight = field_pairs(b_local[u, r, i], j, bits, zero)
                            else:
                                weight = field_pairs(b_local[u, r, i], j, bits)
                            if not (zero_from_sums or integer_zeros):
                                weight = weight - zero
                            for m in T.unroll(block_m):
                                pair = T.reinterpret(a_pairs[m, i * pairs + j], T.float16x2)
                                dot[m, r] = T.reinterpret(
                                    T.reinterpret(dot[m, r], T.float16x2) + pair * weight,
                                    T.uint32)
                    scale = T.Cast(T.float32, scales[row + r, k0 // group])
                    for m in T.unroll(block_m):
                        if zero_from_sums:
                            acc[m, r] += scale * (pair_sum(dot[m, r]) - T.Cast(
                                T.float32, zeros[row + r, k0 // group]) * pair_sum(a_sum[m]))
                        else:
                            acc[m, r] += scale * pair_sum(dot[m, r])
        warp_sum_store(acc, C, lane, by * block_m, row)
    return C


@tilelang.jit(pass_configs=FAST_MATH)
def gemv_nf4(A, B, scales, table, warps=4, rows_per_warp=2, block_m=1, group=128):
    M, N, K = T.const("M, N, K")
    per_lane = 32
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K), T.uint4)
    scales: T.Tensor((N, K // group), T.float16)
    table: T.Tensor((16,), T.float32)
    C = T.empty((M, N), T.float16)
    chunk = LANES * per_lane
    with T.Kernel(T.ceildiv(N, warps * rows_per_warp), T.ceildiv(M, block_m),
                  threads=(LANES, warps)) as (bx, by):
        values = T.alloc_shared((16,), T.float32)
        a_local = T.alloc_local((block_m, per_lane), T.float16)
        b_local = T.alloc_local((rows_per_warp, per_lane), T.uint4)
        dot = T.alloc_local((block_m, rows_per_warp), T.float32)
        acc = T.alloc_local((block_m, rows_per_warp), T.float32)
        lane = T.get_thread_binding(0)
        row = (bx * warps + T.get_thread_binding(1)) * rows_per_warp
        T.copy(table, values)
        T.clear(acc)
        for ko in T.serial(T.ceildiv(K, chunk)):
            k0 = ko * chunk + lane * per_lane
            for m in T.unroll(block_m):
                T.copy(A[by * block_m + m, k0:k0 + per_lane], a_local[m, :])
            for r in T.unroll(rows_per_warp):
                T.copy(B[row + r, k0:k0 + per_lane], b_local[r, :])
            T.clear(dot)
            for v in T.unroll(per_lane):
                for r in T.unroll(rows_per_warp):
                    w = values[b_local[r, v]]
                    for m in T.unroll(block_m):
                        dot[m, r] += T.Cast(T.float32, a_local[m, v]) * w
            for r in T.unroll(rows_per_warp):
                scale = T.Cast(T.float32, scales[row + r, k0 // group])
                for m in T.unroll(block_m):
                    acc[m, r] += scale * dot[m, r]
        warp_sum_store(acc, C, lane, by * block_m, row)
    return C


@tilelang.jit(pass_configs=FAST_MATH)
def gemv_mxfp4(A, B, scales, warps=4, rows_per_warp=2, block_m=1, block=32):
    M, N, K = T.const("M, N, K")
    per_lane = 32  # one 16-byte load, one scale block
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K), T.float4_e2m1fn)
    scales: T.Tensor((N, K // block), T.float8_e8m0fnu)
    C = T.empty((M, N), T.float16)
    chunk = LANES * per_lane
    with T.Kernel(T.ceildiv(N, warps * rows_per_warp), T.ceildiv(M, block_m),
                  threads=(LANES, warps)) as (bx, by):
        a_local = T.alloc_local((block_m, per_lane), T.float16)
        b_local = T.alloc_local((rows_per_warp, per_lane), T.float4_e2m1fn)
        dot = T.alloc_local((block_m, rows_per_warp), T.float32)
        acc = T.alloc_local((block_m, rows_per_warp), T.float32)
        lane = T.get_thread_binding(0)
        row = (bx * warps + T.get_thread_binding(1)) * rows_per_warp
        T.clear(acc)
        for ko in T.serial(T.ceildiv(K, chunk)):
            k0 = ko * chunk + lane * per_lane
            for m in T.unroll(block_m):
                T.copy(A[by * block_m + m, k0:k0 + per_lane], a_local[m, :])
            for r in T.unroll(rows_per_warp):
                T.copy(B[row + r, k0:k0 + per_lane], b_local[r, :])
            T.clear(dot)
            for v in T.unroll(per_lane):
                for r in T.unroll(rows_per_warp):
                    w = T.Cast(T.float32, b_local[r, v])
                    for m in T.unroll(block_m):
                        dot[m, r] += T.Cast(T.float32, a_local[m, v]) * w
            for r in T.unroll(rows_per_warp):
                scale = T.Cast(T.float32, scales[row + r, k0 // block])
                for m in T.unroll(block_m):
                    acc[m, r] += scale * dot[m, r]
        warp_sum_store(acc, C, lane, by * block_m, row)
    return C


# the 16 NF4 values (QLoRA's normal-float quantiles), code order
NF4_VALUES = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
              -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
              0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
              0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
              0.7229568362236023, 1.0]
# the float4 e2m1 values, code order (the sign is the high bit)
FP4_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0,
              -6.0]
KERNELS = {"uint4": gemv_uint, "uint2": gemv_uint, "nf4": gemv_nf4, "mxfp4": gemv_mxfp4}
BITS = {"uint4": 4, "uint2": 2, "nf4": 4, "mxfp4": 4}


def pack(values: torch.Tensor, bits: int) -> torch.Tensor:
    """(..., K) codes below 2 ** bits -> (..., K * bits / 8) uint8, element j in bits
    (j % n) * bits of byte j // n, n = 8 / bits."""
    per_byte = 8 // bits
    fields = values.to(torch.int32).reshape(*values.shape[:-1], -1, per_byte)
    shifts = torch.arange(per_byte, dtype=torch.int32, device=values.device) * bits
    return (fields << shifts).sum(-1).to(torch.uint8)


def _groups(values: torch.Tensor, size: int) -> torch.Tensor:
    return values.float().repeat_interleave(size, 1)


def weights(fmt: str, n: int, k: int, device: str = "cpu", integer_zeros: bool = False
            ) -> tuple[list, torch.Tensor]:
    """Random quantized weights of a format: the kernel's weight arguments (after A) and the
    float32 (N, K) weight they stand for (uint formats: integer zeros where asked)."""
    bits = BITS[fmt]
    codes = torch.randint(0, 1 << bits, (n, k), device=device, dtype=torch.uint8)
    if fmt in ("uint4", "uint2"):
        scales = (torch.rand(n, k // 128, device=device) * 0.1 + 0.01).half()
        zeros = torch.rand(n, k // 128, device=device) * ((1 << bits) - 1)
        zeros = (zeros.round() if integer_zeros else zeros).half()
        weight = (codes.float() - _groups(zeros, 128)) * _groups(scales, 128)
        return [pack(codes, bits), scales, zeros], weight
    if fmt == "nf4":
        scales = (torch.rand(n, k // 128, device=device) + 0.5).half()
        table = torch.tensor(NF4_VALUES, device=device)
        return [pack(codes, 4), scales, table], table[codes.long()] * _groups(scales, 128)
    exponents = torch.randint(120, 131, (n, k // 32), device=device, dtype=torch.uint8)
    scales = torch.tensor(FP4_VALUES, device=device)[codes.long()]
    weight = scales * torch.pow(2.0, _groups(exponents, 32) - 127)
    return [pack(codes, 4), exponents.view(torch.float8_e8m0fnu)], weight


def meta_weights(fmt: str, n: int, k: int) -> list:
    """The weight arguments' shapes and dtypes alone (compiling allocates nothing)."""
    packed = torch.empty(n, k * BITS[fmt] // 8, dtype=torch.uint8, device="meta")
    if fmt in ("uint4", "uint2"):
        scales = torch.empty(n, k // 128, dtype=torch.float16, device="meta")
        return [packed, scales, scales]
    if fmt == "nf4":
        return [packed, torch.empty(n, k // 128, dtype=torch.float16, device="meta"),
                torch.empty(16, device="meta")]
    return [packed, torch.empty(n, k // 32, dtype=torch.float8_e8m0fnu, device="meta")]


def compile_options(fmt: str) -> dict:
    return {"bits": BITS[fmt]} if fmt in ("uint4", "uint2") else {}


def main() -> None:
    if not torch.cuda.is_available():
        print("the GEMV kernels use thread bindings and warp shuffles: they run on CUDA only")
        return
    torch.manual_seed(0)
    m, n, k = 1, 4096, 4096
    a = torch.randn(m, k, device="cuda").half()
    for fmt, kernel in KERNELS.items():
        args, weight = weights(fmt, n, k, "cuda")
        c = kernel(a, *args, **compile_options(fmt))
        reference = a.float() @ weight.t()
        error = ((c.float() - reference).norm() / reference.norm()).item()
        print(f"{fmt} GEMV {m}x{n}x{k}: relative error {error:.2e}")
        assert error < 1e-2, "result differs from torch"


if __name__ == "__main__":
    main()
