"""T.gemm_sp: a 2:4 structured-sparse A times B, run as the dense product.

TileLang's sparse operand is its compressor's output (examples/gemm_sp/sparse_utils.py):
`A_sparse` (M x K/2) holds the two kept elements of each group of four along K, in order, and
`E` (M x K/e_factor, tilec.cuda.intrinsics.sparse_layout.get_e_factor) the "ordered"
metadata: a 4-bit field per group, the kept elements' positions in its bits 1:0 and 3:2, the
fields of one metadata element filling it from its low bits. float32 keeps one element of each
pair; its field is 0b0100 (the first kept) or 0b1110 (the second), positions in 16-bit halves.

tilec decompresses the block's A tile into a shared tile of its own (every element: the kept
ones where the metadata puts them, zeros elsewhere) and multiplies that tile with T.gemm, so a
sparse product costs what the dense one costs: the sparse MMAs (mma.sp, wgmma .sp) are not
used. The macros below are that decompression, written in the kernel language.
"""

from __future__ import annotations

import tilec.language as T


@T.macro
def decompress_pairs_of_four(A_sparse, E, A_dense, rows, cols, e_factor):  # noqa: N803
    """8- and 16-bit A: two kept elements of each group of four."""
    fields = e_factor // 4
    for i, k in T.Parallel(rows, cols):
        group = k // 4
        field = (E[i, k // e_factor] >> (4 * (group % fields))) & 15
        position = k % 4
        A_dense[i, k] = T.if_then_else(
            position == (field & 3), A_sparse[i, 2 * group],
            T.if_then_else(position == ((field >> 2) & 3), A_sparse[i, 2 * group + 1], 0))


@T.macro
def decompress_one_of_two(A_sparse, E, A_dense, rows, cols, e_factor):  # noqa: N803
    """32-bit A: one kept element of each pair (its field's low bits: 0 the first, 2 the
    second)."""
    fields = e_factor // 2
    for i, k in T.Parallel(rows, cols):
        group = k // 2
        field = (E[i, k // e_factor] >> (4 * (group % fields))) & 15
        A_dense[i, k] = T.if_then_else(k % 2 == ((field & 3) >> 1), A_sparse[i, group], 0)
