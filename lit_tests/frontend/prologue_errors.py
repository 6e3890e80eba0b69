# RUN: not tilec --emit=tile %s --const N=64 2>&1 | FileCheck %s
# An exception in an eager kernel's prologue (its Python before `with T.Kernel`) is a tilec error
# at the kernel's line that raised it, with the exception's type and message.
# ruff: noqa: E501 - CHECK lines match whole output lines
import tilec as tilelang
import tilec.language as T


def tile_of(size: int, parts: int) -> int:
    return size // parts


@tilelang.jit
def split(A, parts=0):
    N = T.const("N")
    A: T.Tensor((N,), T.float32)
    block = tile_of(N, parts)
    B = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
        for i in T.Parallel(block):
            B[bx * block + i] = A[bx * block + i]
    return B

# CHECK: tilec: error: {{.*}}prologue_errors.py:17: ZeroDivisionError: integer division or modulo by zero
# CHECK-NEXT: block = tile_of(N, parts)
