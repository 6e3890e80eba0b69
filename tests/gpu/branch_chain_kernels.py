"""A warp-specialized ring written as TileLang's MLA kernels write theirs: an `if tx < 128:
... else:` chain of whole warpgroups whose branches hand a shared tile back and forth through
mbarriers, the consumer first in the chain and the producer after it. Each thread runs one
branch, side by side with the other: a block barrier between the branches (which tilec's
insert-shared-barriers put there until the chain's branches were marked `tile.else_branch`)
hangs the block, the consumer's threads waiting for a tile the producer's threads, held at
that barrier, never write.
tests/test_branch_chain.py checks its CUDA code here; tests/gpu/test_branch_chain_gpu.py runs
it on the GPU. No compiler imports: the GPU machine's runtime imports this file as it is.
"""

from __future__ import annotations

import torch

import tilec
import tilec.language as T

TILE_ROWS, WIDTH = 64, 64


@tilec.jit
def consumer_first_ring(rows: int, steps: int):
    """Out[k * rows + r, c] = 2 * A[k * rows + r, c] + 1 (Out the caller's, written whole): the
    producer warpgroup copies each of the block's `steps` tiles into one shared slot, the
    consumer warpgroup reads it out."""

    @T.prim_func
    def main(A: T.Tensor((steps * rows, WIDTH), T.float32),
             Out: T.Tensor((steps * rows, WIDTH), T.float32)):
        with T.Kernel(T.ceildiv(rows, TILE_ROWS), threads=256) as bx:
            slot = T.alloc_shared((TILE_ROWS, WIDTH), T.float32)
            full = T.alloc_barrier(arrive_count=128)
            empty = T.alloc_barrier(arrive_count=128)
            tx = T.get_thread_binding()
            if tx < 128:
                for k in T.serial(steps):
                    T.barrier_wait(full, k & 1)
                    for i, j in T.Parallel(TILE_ROWS, WIDTH):
                        if bx * TILE_ROWS + i < rows:
                            Out[k * rows + bx * TILE_ROWS + i, j] = slot[i, j] * 2.0 + 1.0
                    T.barrier_arrive(empty)
            else:
                for k in T.serial(steps):
                    T.barrier_wait(empty, (k & 1) ^ 1)
                    for i, j in T.Parallel(TILE_ROWS, WIDTH):
                        if bx * TILE_ROWS + i < rows:
                            slot[i, j] = A[k * rows + bx * TILE_ROWS + i, j]
                    T.barrier_arrive(full)

    return main


def reference(a: torch.Tensor) -> torch.Tensor:
    return a * 2.0 + 1.0
