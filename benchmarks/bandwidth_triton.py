"""The Triton peers of benchmarks/bandwidth.py: the standard one-row-per-program kernels
(as Triton's tutorials write row softmax and LayerNorm), a tiled transpose and elementwise
kernels over 1-D blocks. Only imported on the GPU machine (Triton is there).

Each `run_*` takes the benchmark's inputs and returns the output(s), allocating them as the
torch op does.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


def _row_warps(block: int) -> int:
    return 4 if block <= 2048 else 8 if block <= 8192 else 16


@triton.jit
def _rms_norm_kernel(x, w, y, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    v = tl.load(x + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    scale = tl.rsqrt(tl.sum(v * v, axis=0) / N + eps)
    g = tl.load(w + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y + row * N + cols, (v * scale * g).to(y.dtype.element_ty), mask=mask)


@triton.jit
def _add_rms_norm_kernel(x, r, w, y, h, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    s = tl.load(x + row * N + cols, mask=mask, other=0.0) + tl.load(
        r + row * N + cols, mask=mask, other=0.0)
    tl.store(h + row * N + cols, s, mask=mask)
    v = s.to(tl.float32)
    scale = tl.rsqrt(tl.sum(v * v, axis=0) / N + eps)
    g = tl.load(w + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y + row * N + cols, (v * scale * g).to(y.dtype.element_ty), mask=mask)


@triton.jit
def _layer_norm_kernel(x, w, b, y, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    v = tl.load(x + row * N + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(v, axis=0) / N
    centred = tl.where(mask, v - mean, 0.0)
    rstd = tl.rsqrt(tl.sum(centred * centred, axis=0) / N + eps)
    g = tl.load(w + cols, mask=mask, other=0.0).to(tl.float32)
    beta = tl.load(b + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y + row * N + cols, (centred * rstd * g + beta).to(y.dtype.element_ty), mask=mask)


@triton.jit
def _softmax_kernel(x, y, N, S, CAUSAL: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    if CAUSAL:
        mask = mask & (cols <= row % S)
    v = tl.load(x + row * N + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(y + row * N + cols, (e / tl.sum(e, axis=0)).to(y.dtype.element_ty),
             mask=cols < N)


@triton.jit
def _transpose_kernel(x, y, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(1) * BM + tl.arange(0, BM)
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    tile = tl.load(x + rows[:, None].to(tl.int64) * N + cols[None, :], mask=mask)
    tl.store(y + cols[:, None].to(tl.int64) * M + rows[None, :], tl.trans(tile),
             mask=tl.trans(mask))


@triton.jit
def _add_kernel(a, b, out, total, BLOCK: tl.constexpr):
    at = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = at < total
    tl.store(out + at, tl.load(a + at, mask=mask) + tl.load(b + at, mask=mask), mask=mask)


@triton.jit
def _scale_shift_kernel(a, scale, shift, out, N, total, BLOCK: tl.constexpr):
    at = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = at < total
    v = tl.load(a + at, mask=mask).to(tl.float32)
    s = tl.load(scale + at // N, mask=mask).to(tl.float32)
    t = tl.load(shift + at % N, mask=mask).to(tl.float32)
    tl.store(out + at, (v * s + t).to(out.dtype.element_ty), mask=mask)


def _rows(x: torch.Tensor) -> tuple[int, int, int]:
    n = x.shape[-1]
    block = triton.next_power_of_2(n)
    return x.numel() // n, n, block


def run_rms_norm(x, weight, eps=1e-6):
    m, n, block = _rows(x)
    y = torch.empty_like(x)
    _rms_norm_kernel[(m,)](x, weight, y, n, eps, BLOCK=block, num_warps=_row_warps(block))
    return y


def run_add_rms_norm(x, residual, weight, eps=1e-6):
    m, n, block = _rows(x)
    y, h = torch.empty_like(x), torch.empty_like(x)
    _add_rms_norm_kernel[(m,)](x, residual, weight, y, h, n, eps, BLOCK=block,
                               num_warps=_row_warps(block))
    return y, h


def run_layer_norm(x, weight, bias, eps=1e-5):
    m, n, block = _rows(x)
    y = torch.empty_like(x)
    _layer_norm_kernel[(m,)](x, weight, bias, y, n, eps, BLOCK=block,
                             num_warps=_row_warps(block))
    return y


def run_softmax(x):
    m, n, block = _rows(x)
    y = torch.empty_like(x)
    _softmax_kernel[(m,)](x, y, n, n, CAUSAL=False, BLOCK=block, num_warps=_row_warps(block))
    return y


def run_causal_softmax(x):
    m, n, block = _rows(x)
    y = torch.empty_like(x)
    _softmax_kernel[(m,)](x, y, n, x.shape[-2], CAUSAL=True, BLOCK=block,
                          num_warps=_row_warps(block))
    return y


def run_transpose(x):
    m, n = x.shape
    y = torch.empty(n, m, dtype=x.dtype, device=x.device)
    _transpose_kernel[(triton.cdiv(n, 64), triton.cdiv(m, 64))](x, y, m, n, BM=64, BN=64,
                                                                 num_warps=4)
    return y


def run_add(a, b):
    out = torch.empty_like(a)
    _add_kernel[(triton.cdiv(a.numel(), 1024),)](a, b, out, a.numel(), BLOCK=1024, num_warps=4)
    return out


def run_scale_shift(a, scale, shift):
    out = torch.empty_like(a)
    _scale_shift_kernel[(triton.cdiv(a.numel(), 1024),)](a, scale, shift, out, a.shape[-1],
                                                         a.numel(), BLOCK=1024, num_warps=4)
    return out
