# RUN: tilec --emit=tile --mlir-print-debuginfo %s | FileCheck %s
# Every op carries the Python file:line:col it came from.
import tilec.language as T


@T.prim_func
def located(A: T.Tensor((32,), "float32")):
    with T.Kernel(1, threads=32) as _:
        buffer = T.alloc_fragment((32,), "float32")
        T.copy(A, buffer)
        for i in T.Parallel(32):
            buffer[i] = buffer[i] + 1.0
        T.copy(buffer, A)

# CHECK: tile.alloc : memref<32xf32, "fragment"> loc(#[[ALLOC:loc[0-9]*]])
# CHECK: tile.copy {{.*}} loc(#[[COPY:loc[0-9]*]])
# CHECK: arith.addf {{.*}} loc(#[[ADD:loc[0-9]*]])
# CHECK-NOT: loc(unknown)
# CHECK-DAG: #[[ALLOC]] = loc("{{.*}}locations.py":9:18)
# CHECK-DAG: #[[COPY]] = loc("{{.*}}locations.py":10:9)
# CHECK-DAG: #[[ADD]] = loc("{{.*}}locations.py":12:25)
