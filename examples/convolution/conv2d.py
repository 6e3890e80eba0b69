"""2-D convolution, NHWC activations and a (KH, KW, C, F) filter, as an implicit GEMM on the
tensor cores: out[p, f] = sum over (kh, kw, c) of patch[p, (kh, kw, c)] * filter[(kh, kw, c), f],
p running over the N x OH x OW output pixels.

The K loop walks the filter taps (kh, kw) and, inside one tap, blocks of `block_K` channels
(block_K divides C). A tap's block is then, for each output pixel of the tile, `block_K`
consecutive channels of one input pixel: each row of the A tile is a contiguous run of the
input (16-byte vectors), zero where the tap falls into the padding, and the B tile is
`block_K` consecutive rows of the filter seen as a (KH * KW * C) x F matrix, a plain tile copy.
The row's pixel, its bounds test and its address depend on the row alone, not on the column,
so the gather is written as a T.Parallel over the tile whose condition the compiler hoists
per row. Run it to check against torch.nn.functional.conv2d (CPU target without a GPU).
"""

import torch

import tilec as tilelang
import tilec.language as T


def out_size(size: int, kernel: int, stride: int, pad: int, dilation: int) -> int:
    return (size + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1


@tilelang.jit
def conv2d_nhwc(data, weight, stride=1, pad=1, dilation=1, block_M=128, block_N=128,
                block_K=64, num_stages=3, threads=256):
    N, H, W, C, KH, KW, F = T.const("N, H, W, C, KH, KW, F")
    OH = out_size(H, KH, stride, pad, dilation)
    OW = out_size(W, KW, stride, pad, dilation)
    data: T.Tensor((N, H, W, C), T.float16)
    weight: T.Tensor((KH, KW, C, F), T.float16)
    out = T.empty((N, OH, OW, F), T.float16)
    if C % block_K:
        raise ValueError(f"conv2d_nhwc walks the channels in blocks of block_K = {block_K}, "
                         f"which must divide C = {C}")
    pixels = N * OH * OW
    c_blocks = C // block_K
    with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(pixels, block_M), threads=threads) as (
            bx, by):
        patch_shared = T.alloc_shared((block_M, block_K), T.float16)
        weight_shared = T.alloc_shared((block_K, block_N), T.float16)
        acc = T.alloc_fragment((block_M, block_N), T.float32)
        weight_flat = T.reshape(weight, (KH * KW * C, F))
        out_flat = T.reshape(out, (pixels, F))
        T.clear(acc)
        for k in T.Pipelined(KH * KW * c_blocks, num_stages=num_stages):
            tap = k // c_blocks
            kh = tap // KW
            kw = tap % KW
            c0 = (k % c_blocks) * block_K
            for i, j in T.Parallel(block_M, block_K):
                p = by * block_M + i
                n = p // (OH * OW)
                h = (p // OW) % OH * stride + kh * dilation - pad
                w = p % OW * stride + kw * dilation - pad
                inside = (p < pixels) & (h >= 0) & (h < H) & (w >= 0) & (w < W)
                # read inside the image wherever the tap is not (the value is dropped), so
                # every row reads one whole vector
                pixel = data[T.min(n, N - 1), T.min(T.max(h, 0), H - 1),
                             T.min(T.max(w, 0), W - 1), c0 + j]
                patch_shared[i, j] = T.if_then_else(inside, pixel, 0)
            T.copy(weight_flat[k * block_K, bx * block_N], weight_shared)
            T.gemm(patch_shared, weight_shared, acc)
        T.copy(acc, out_flat[by * block_M, bx * block_N])
    return out


def reference(data: torch.Tensor, weight: torch.Tensor, stride: int, pad: int,
              dilation: int) -> torch.Tensor:
    """torch's conv2d in float32 on the NHWC tensors, as NHWC."""
    result = torch.nn.functional.conv2d(data.float().permute(0, 3, 1, 2),
                                        weight.float().permute(3, 2, 0, 1), stride=stride,
                                        padding=pad, dilation=dilation)
    return result.permute(0, 2, 3, 1)


def main() -> None:
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    target = {} if device == "cuda" else {"target": "cpu"}
    n, h, w, c, f, kernel, stride, pad = 2, 14, 14, 64, 128, 3, 1, 1
    data = torch.randn(n, h, w, c, device=device).half()
    weight = (torch.randn(kernel, kernel, c, f, device=device) * 0.05).half()
    compiled = conv2d_nhwc.compile(data, weight, stride=stride, pad=pad, **target)
    result = compiled.get_profiler().run_poisoned(data, weight)
    expected = reference(data, weight, stride, pad, 1)
    error = ((result.float() - expected).norm() / expected.norm()).item()
    print(f"conv2d {n}x{h}x{w}x{c} -> {f}, {kernel}x{kernel}: relative error {error:.2e}")
    assert error < 1e-2, "result differs from torch"


if __name__ == "__main__":
    main()
