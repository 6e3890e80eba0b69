# RUN: not tilec --emit=tile %s 2>&1 | FileCheck %s
# A bad kernel is a tilec error naming its file:line and showing the line; exit code 1.
import tilec.language as T


@T.prim_func
def bad(A: T.Tensor((64, 64), "float16")):
    with T.Kernel(1, threads=128) as _:
        a = T.alloc_shared((32, 16), "float16")
        b = T.alloc_shared((32, 32), "float16")
        c = T.alloc_fragment((32, 32), "float32")
        T.gemm(a, b, c)

# CHECK: tilec: error: {{.*}}errors.py:12: T.gemm: K of A ('a': 16) differs from K of B ('b': 32)
# CHECK-NEXT: T.gemm(a, b, c)
