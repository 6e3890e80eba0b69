"""The CUDA suite's kernels as tile IR (the frontend's contract-1 form, written out), with their
parameters, grids and torch references.

Both the CPU-side PTX test (tests/test_cuda_ptx.py) and the GPU suite (tests/gpu/) use these;
this module imports neither MLIR nor the compiler, so the GPU machine can read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tilec.runtime.artifact import Param

MLIR_TYPES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32"}


@dataclass
class KernelSpec:
    name: str
    tile_ir: str
    params: list[Param]
    grid: list[int | str]
    threads: list[int]
    reference: Callable[..., Any]  # torch inputs -> expected outputs (float64)
    shapes: list[dict[str, int]] = field(default_factory=list)  # symbol values to test
    zero_outputs: bool = False  # atomics accumulate into the output

    @property
    def launch(self) -> dict:
        return {"grid": self.grid, "threads": self.threads}


def _tensor(name: str, dtype: str, shape: list[int | str], output: bool = False) -> Param:
    return Param(name, "tensor", dtype, list(shape), is_output=output)


def widen_into(fragment: str, narrow: str, t: str, shape: str = "16x64") -> str:
    """A copy into a fragment of the tile's own type (`narrow`), then T.Parallel widening it
    into the float32 `fragment` (copies do not convert)."""
    rows, columns = shape.split("x")
    return f"""tile.parallel [{rows}, {columns}] {{
        ^bb0(%i: index, %j: index):
          %n = memref.load {narrow}[%i, %j] : memref<{shape}x{t}, "fragment">
          %w = arith.extf %n : {t} to f32
          memref.store %w, {fragment}[%i, %j] : memref<{shape}xf32, "fragment">
        }}"""


def cp_async_loop(stages: int) -> str:
    """The attributes pipeline-async-copies puts on a T.Pipelined loop it pipelines with
    cp.async (written out, so these kernels test the lowering whatever that pass decides)."""
    return (f'attributes {{tile.pipeline = {{stages = {stages} : i64, k_tile = 64 : i64, '
            f'mechanism = "cp.async"}}}}')


CP_ASYNC_COPY = '{tile.async = "cp.async"}'


def gemm(dtype: str = "float16", bm: int = 128, bn: int = 128, bk: int = 32,
         threads: int = 128, transpose_b: bool = False, bias_relu: bool = False,
         cp_async_stages: int = 0) -> KernelSpec:
    """The quickstart (T.Pipelined copy/copy/gemm into a float32 fragment); optionally B given
    as N x K, a bias + ReLU epilogue in T.Parallel, and the loop marked for a cp.async
    pipeline of `cp_async_stages` stages (dynamic K keeps it on the SIMT path)."""
    t = MLIR_TYPES[dtype]
    name = f"gemm_{dtype}_{bm}x{bn}x{bk}" + ("_tb" if transpose_b else "") + (
        "_bias_relu" if bias_relu else "") + (f"_cp_async{cp_async_stages}"
                                              if cp_async_stages else "")
    marks = CP_ASYNC_COPY if cp_async_stages else ""
    loop_marks = cp_async_loop(cp_async_stages) if cp_async_stages else ""
    g = f"memref<?x?x{t}>"
    a_s = f'memref<{bm}x{bk}x{t}, "shared">'
    b_s = f'memref<{bn}x{bk}x{t}, "shared">' if transpose_b else f'memref<{bk}x{bn}x{t}, "shared">'
    c_f = f'memref<{bm}x{bn}xf32, "fragment">'
    bias_arg = f", %bias: memref<?x{t}>" if bias_relu else ""
    b_copy = (f"tile.copy %B[%col, %kk] [{bn}, {bk}] to %Bs[%c0, %c0] [{bn}, {bk}] {marks} : "
              f"{g} to {b_s}" if transpose_b else
              f"tile.copy %B[%kk, %col] [{bk}, {bn}] to %Bs[%c0, %c0] [{bk}, {bn}] {marks} : "
              f"{g} to {b_s}")
    bias_f32 = "%bv" if t == "f32" else "%bvf"
    epilogue = ""
    if bias_relu:
        widen = "" if t == "f32" else f"%bvf = arith.extf %bv : {t} to f32\n      "
        epilogue = f"""
    tile.parallel [{bm}, {bn}] {{
    ^bb0(%i: index, %j: index):
      %v = memref.load %Cl[%i, %j] : {c_f}
      %cj = arith.addi %col, %j : index
      %bv = memref.load %bias[%cj] : memref<?x{t}>
      {widen}%s = arith.addf %v, {bias_f32} : f32
      %r = arith.maximumf %s, %zero : f32
      memref.store %r, %Cl[%i, %j] : {c_f}
    }}"""
    store_c = f"tile.copy %Cl[%c0, %c0] [{bm}, {bn}] to %C[%row, %col] [{bm}, {bn}] : {c_f} to {g}"
    if t != "f32":
        staged = f'memref<{bm}x{bn}x{t}, "fragment">'
        store_c = f"""%Cs = tile.alloc : {staged}
      tile.parallel [{bm}, {bn}] {{
      ^bb0(%i: index, %j: index):
        %v = memref.load %Cl[%i, %j] : {c_f}
        %h = arith.truncf %v : f32 to {t}
        memref.store %h, %Cs[%i, %j] : {staged}
      }}
      tile.copy %Cs[%c0, %c0] [{bm}, {bn}] to %C[%row, %col] [{bm}, {bn}] : {staged} to {g}"""
    ir = f"""module {{
  func.func @{name}(%A: {g}, %B: {g}{bias_arg}, %C: {g}) attributes {{tile.entry}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %M = memref.dim %A, %c0 : {g}
    %K = memref.dim %A, %c1 : {g}
    %N = memref.dim %B, {"%c0" if transpose_b else "%c1"} : {g}
    %cbm = arith.constant {bm} : index
    %cbn = arith.constant {bn} : index
    %cbk = arith.constant {bk} : index
    %gx = arith.ceildivui %N, %cbn : index
    %gy = arith.ceildivui %M, %cbm : index
    %kt = arith.ceildivui %K, %cbk : index
    tile.kernel grid(%gx, %gy) threads [{threads}] {{
    ^bb0(%bx: index, %by: index):
      %As = tile.alloc : {a_s}
      %Bs = tile.alloc : {b_s}
      %Cl = tile.alloc : {c_f}
      %zero = arith.constant 0.0 : f32
      tile.fill %Cl, %zero : {c_f}, f32
      %row = arith.muli %by, %cbm : index
      %col = arith.muli %bx, %cbn : index
      tile.pipelined %c0 to %kt step %c1 stages 3 {loop_marks} {{
      ^bb0(%k: index):
        %kk = arith.muli %k, %cbk : index
        tile.copy %A[%row, %kk] [{bm}, {bk}] to %As[%c0, %c0] [{bm}, {bk}] {marks} : {g} to {a_s}
        {b_copy}
        tile.gemm %As, %Bs, %Cl {{transpose_b = {str(transpose_b).lower()}}} : {a_s}, {b_s}, {c_f}
      }}{epilogue}
      {store_c}
    }}
    return
  }}
}}
"""
    params = [_tensor("A", dtype, ["M", "K"]),
              _tensor("B", dtype, ["N", "K"] if transpose_b else ["K", "N"])]
    if bias_relu:
        params.append(_tensor("bias", dtype, ["N"]))
    params.append(_tensor("C", dtype, ["M", "N"], output=True))

    def reference(a: Any, b: Any, *rest: Any) -> Any:
        b = b.double().T if transpose_b else b.double()
        c = a.double() @ b
        if bias_relu:
            c = (c + rest[0].double()).clamp_min(0)
        return c

    shapes = [{"M": 256, "N": 256, "K": 256}, {"M": 1024, "N": 512, "K": 384},
              {"M": 200, "N": 136, "K": 100}, {"M": 77, "N": 45, "K": 33}]
    return KernelSpec(name, ir, params, [f"(N + {bn - 1}) // {bn}", f"(M + {bm - 1}) // {bm}"],
                      [threads], reference, shapes)


def broadcast(dtype: str = "float32") -> KernelSpec:
    """C[i, j] = A[i, j] * s[i] + b[j]: T.Parallel straight on global tensors, no fragments."""
    t = MLIR_TYPES[dtype]
    g = f"memref<?x?x{t}>"
    v = f"memref<?x{t}>"
    ir = f"""module {{
  func.func @broadcast_{dtype}(%A: {g}, %s: {v}, %b: {v}, %C: {g}) attributes {{tile.entry}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %M = memref.dim %A, %c0 : {g}
    %N = memref.dim %A, %c1 : {g}
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %gx = arith.ceildivui %N, %c64 : index
    %gy = arith.ceildivui %M, %c32 : index
    tile.kernel grid(%gx, %gy) threads [128] {{
    ^bb0(%bx: index, %by: index):
      %r0 = arith.muli %by, %c32 : index
      %q0 = arith.muli %bx, %c64 : index
      tile.parallel [32, 64] {{
      ^bb0(%i: index, %j: index):
        %r = arith.addi %r0, %i : index
        %q = arith.addi %q0, %j : index
        %a = memref.load %A[%r, %q] : {g}
        %sv = memref.load %s[%r] : {v}
        %bv = memref.load %b[%q] : {v}
        %p = arith.mulf %a, %sv : {t}
        %y = arith.addf %p, %bv : {t}
        memref.store %y, %C[%r, %q] : {g}
      }}
    }}
    return
  }}
}}
"""
    params = [_tensor("A", dtype, ["M", "N"]), _tensor("s", dtype, ["M"]),
              _tensor("b", dtype, ["N"]), _tensor("C", dtype, ["M", "N"], output=True)]
    return KernelSpec(
        f"broadcast_{dtype}", ir, params, ["(N + 63) // 64", "(M + 31) // 32"], [128],
        lambda a, s, b: a.double() * s.double()[:, None] + b.double()[None, :],
        [{"M": 512, "N": 1024}, {"M": 100, "N": 77}])


def softmax(dtype: str = "float32", n: int = 512, rows: int = 4) -> KernelSpec:
    """Row softmax with reduce_max / reduce_sum over a [rows, n] fragment (the reduction
    crosses warps: shared-memory path)."""
    t = MLIR_TYPES[dtype]
    g = f"memref<?x{n}x{t}>"
    f = f'memref<{rows}x{n}xf32, "fragment">'
    r = f'memref<{rows}xf32, "fragment">'
    h = f'memref<{rows}x{n}x{t}, "fragment">'
    load_x = f"tile.copy %X[%row, %c0] [{rows}, {n}] to %S[%c0, %c0] [{rows}, {n}] : {g} to {f}"
    store_y = f"tile.copy %S[%c0, %c0] [{rows}, {n}] to %Y[%row, %c0] [{rows}, {n}] : {f} to {g}"
    if t != "f32":
        load_x = f"""%H = tile.alloc : {h}
      tile.copy %X[%row, %c0] [{rows}, {n}] to %H[%c0, %c0] [{rows}, {n}] : {g} to {h}
      tile.parallel [{rows}, {n}] {{
      ^bb0(%i: index, %j: index):
        %x = memref.load %H[%i, %j] : {h}
        %w = arith.extf %x : {t} to f32
        memref.store %w, %S[%i, %j] : {f}
      }}"""
        store_y = f"""tile.parallel [{rows}, {n}] {{
      ^bb0(%i: index, %j: index):
        %x = memref.load %S[%i, %j] : {f}
        %w = arith.truncf %x : f32 to {t}
        memref.store %w, %H[%i, %j] : {h}
      }}
      tile.copy %H[%c0, %c0] [{rows}, {n}] to %Y[%row, %c0] [{rows}, {n}] : {h} to {g}"""
    ir = f"""module {{
  func.func @softmax_{dtype}_{n}(%X: {g}, %Y: {g}) attributes {{tile.entry}} {{
    %c0 = arith.constant 0 : index
    %M = memref.dim %X, %c0 : {g}
    %crows = arith.constant {rows} : index
    %gx = arith.ceildivui %M, %crows : index
    tile.kernel grid(%gx) threads [128] {{
    ^bb0(%bx: index):
      %S = tile.alloc : {f}
      %mx = tile.alloc : {r}
      %sm = tile.alloc : {r}
      %row = arith.muli %bx, %crows : index
      {load_x}
      tile.reduce "max" %S to %mx dim 1 : {f} to {r}
      tile.parallel [{rows}, {n}] {{
      ^bb0(%i: index, %j: index):
        %x = memref.load %S[%i, %j] : {f}
        %m = memref.load %mx[%i] : {r}
        %d = arith.subf %x, %m : f32
        %e = math.exp %d : f32
        memref.store %e, %S[%i, %j] : {f}
      }}
      tile.reduce "sum" %S to %sm dim 1 : {f} to {r}
      tile.parallel [{rows}, {n}] {{
      ^bb0(%i: index, %j: index):
        %x = memref.load %S[%i, %j] : {f}
        %s = memref.load %sm[%i] : {r}
        %y = arith.divf %x, %s : f32
        memref.store %y, %S[%i, %j] : {f}
      }}
      {store_y}
    }}
    return
  }}
}}
"""
    params = [_tensor("X", dtype, ["M", n]), _tensor("Y", dtype, ["M", n], output=True)]
    return KernelSpec(f"softmax_{dtype}_{n}", ir, params, [f"(M + {rows - 1}) // {rows}"],
                      [128], lambda x: x.double().softmax(dim=1),
                      [{"M": 1024}, {"M": 37}])


def column_sum(dtype: str = "float32") -> KernelSpec:
    """out[j] += sum_i A[i, j]: a [32, 64] tile reduced over rows (across warps), then one
    atomic add per column from the one thread that owns it."""
    t = MLIR_TYPES[dtype]
    g = f"memref<?x?x{t}>"
    f = 'memref<32x64xf32, "fragment">'
    r = 'memref<64xf32, "fragment">'
    ir = f"""module {{
  func.func @column_sum_{dtype}(%A: {g}, %out: memref<?xf32>) attributes {{tile.entry}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %M = memref.dim %A, %c0 : {g}
    %N = memref.dim %A, %c1 : {g}
    %c32 = arith.constant 32 : index
    %c64 = arith.constant 64 : index
    %gx = arith.ceildivui %N, %c64 : index
    %gy = arith.ceildivui %M, %c32 : index
    tile.kernel grid(%gx, %gy) threads [128] {{
    ^bb0(%bx: index, %by: index):
      %F = tile.alloc : {f}
      %s = tile.alloc : {r}
      %r0 = arith.muli %by, %c32 : index
      %q0 = arith.muli %bx, %c64 : index
      tile.copy %A[%r0, %q0] [32, 64] to %F[%c0, %c0] [32, 64] : {g} to {f}
      tile.reduce "sum" %F to %s dim 0 : {f} to {r}
      tile.parallel [64] {{
      ^bb0(%j: index):
        %q = arith.addi %q0, %j : index
        %v = memref.load %s[%j] : {r}
        tile.atomic_add %out[%q], %v : memref<?xf32>, f32
      }}
    }}
    return
  }}
}}
"""
    params = [_tensor("A", dtype, ["M", "N"]), _tensor("out", "float32", ["N"], output=True)]
    return KernelSpec(f"column_sum_{dtype}", ir, params, ["(N + 63) // 64", "(M + 31) // 32"],
                      [128], lambda a: a.double().sum(dim=0),
                      [{"M": 1000, "N": 300}, {"M": 4096, "N": 256}], zero_outputs=True)


def row_reduce(kind: str, dtype: str = "float32") -> KernelSpec:
    """out[i] = reduce_kind(X[i, :]) over 64 columns (16 threads of one warp: shuffles)."""
    t = MLIR_TYPES[dtype]
    g = f"memref<?x64x{t}>"
    f = 'memref<16x64xf32, "fragment">'
    r = 'memref<16xf32, "fragment">'
    ir = f"""module {{
  func.func @reduce_{kind}_{dtype}(%X: {g}, %out: memref<?xf32>) attributes {{tile.entry}} {{
    %c0 = arith.constant 0 : index
    %M = memref.dim %X, %c0 : {g}
    %c16 = arith.constant 16 : index
    %gx = arith.ceildivui %M, %c16 : index
    tile.kernel grid(%gx) threads [128] {{
    ^bb0(%bx: index):
      %F = tile.alloc : {f}
      %s = tile.alloc : {r}
      %row = arith.muli %bx, %c16 : index
      tile.copy %X[%row, %c0] [16, 64] to %F[%c0, %c0] [16, 64] : {g} to {f}
      tile.reduce "{kind}" %F to %s dim 1 : {f} to {r}
      tile.copy %s[%c0] [16] to %out[%row] [16] : {r} to memref<?xf32>
    }}
    return
  }}
}}
"""
    params = [_tensor("X", dtype, ["M", 64]), _tensor("out", "float32", ["M"], output=True)]
    references = {
        "sum": lambda x: x.double().sum(dim=1),
        "max": lambda x: x.double().amax(dim=1),
        "min": lambda x: x.double().amin(dim=1),
        "abssum": lambda x: x.double().abs().sum(dim=1),
        "absmax": lambda x: x.double().abs().amax(dim=1),
    }
    return KernelSpec(f"reduce_{kind}_{dtype}", ir, params, ["(M + 15) // 16"], [128],
                      references[kind], [{"M": 4096}, {"M": 50}])


def vector_add(dtype: str = "float32") -> KernelSpec:
    """C = A + B on 1-d tensors (three tensor arguments: the launch-overhead kernel)."""
    t = MLIR_TYPES[dtype]
    v = f"memref<?x{t}>"
    f = f'memref<1024x{t}, "fragment">'
    ir = f"""module {{
  func.func @vector_add_{dtype}(%A: {v}, %B: {v}, %C: {v}) attributes {{tile.entry}} {{
    %c0 = arith.constant 0 : index
    %N = memref.dim %A, %c0 : {v}
    %c1024 = arith.constant 1024 : index
    %gx = arith.ceildivui %N, %c1024 : index
    tile.kernel grid(%gx) threads [256] {{
    ^bb0(%bx: index):
      %a = tile.alloc : {f}
      %b = tile.alloc : {f}
      %start = arith.muli %bx, %c1024 : index
      tile.copy %A[%start] [1024] to %a[%c0] [1024] : {v} to {f}
      tile.copy %B[%start] [1024] to %b[%c0] [1024] : {v} to {f}
      tile.parallel [1024] {{
      ^bb0(%i: index):
        %x = memref.load %a[%i] : {f}
        %y = memref.load %b[%i] : {f}
        %z = arith.addf %x, %y : {t}
        memref.store %z, %a[%i] : {f}
      }}
      tile.copy %a[%c0] [1024] to %C[%start] [1024] : {f} to {v}
    }}
    return
  }}
}}
"""
    params = [_tensor("A", dtype, ["N"]), _tensor("B", dtype, ["N"]),
              _tensor("C", dtype, ["N"], output=True)]
    return KernelSpec(f"vector_add_{dtype}", ir, params, ["(N + 1023) // 1024"], [256],
                      lambda a, b: a.double() + b.double(),
                      [{"N": 1 << 20}, {"N": 1000}, {"N": 1}])


def to_fragment(tile: str, t: str) -> str:
    """The 16x64 shared `tile` into the float32 fragment %F (through %H when narrower)."""
    copy = (f'tile.copy {tile}[%c0, %c0] [16, 64] to {{}}[%c0, %c0] [16, 64] : '
            f'memref<16x64x{t}, "shared"> to memref<16x64x{{}}, "fragment">')
    if t == "f32":
        return copy.format("%F", "f32")
    return copy.format("%H", t) + "\n        " + widen_into("%F", "%H", t)


def row_sum_pipelined(stages: int, dtype: str = "float32") -> KernelSpec:
    """out[i] = sum_k X[i, k], K walked in 64-column tiles by a T.Pipelined loop whose copy
    is a cp.async pipeline of `stages` stages: the zero-filled columns and rows past the
    tensor add nothing, so any garbage there shows."""
    t = MLIR_TYPES[dtype]
    g = f"memref<?x?x{t}>"
    tile = f'memref<16x64x{t}, "shared">'
    f = 'memref<16x64xf32, "fragment">'
    h = f'memref<16x64x{t}, "fragment">'
    r = 'memref<16xf32, "fragment">'
    name = f"row_sum_{dtype}_cp_async{stages}"
    ir = f"""module {{
  func.func @{name}(%X: {g}, %out: memref<?xf32>) attributes {{tile.entry}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %M = memref.dim %X, %c0 : {g}
    %K = memref.dim %X, %c1 : {g}
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %gx = arith.ceildivui %M, %c16 : index
    %kt = arith.ceildivui %K, %c64 : index
    tile.kernel grid(%gx) threads [128] {{
    ^bb0(%bx: index):
      %Xs = tile.alloc : {tile}
      %F = tile.alloc : {f}
      %H = tile.alloc : {h}
      %s = tile.alloc : {r}
      %zero = arith.constant 0.0 : f32
      tile.fill %s, %zero : {r}, f32
      %row = arith.muli %bx, %c16 : index
      tile.pipelined %c0 to %kt step %c1 stages {stages} {cp_async_loop(stages)} {{
      ^bb0(%k: index):
        %kk = arith.muli %k, %c64 : index
        tile.copy %X[%row, %kk] [16, 64] to %Xs[%c0, %c0] [16, 64] {CP_ASYNC_COPY} : {g} to {tile}
        {to_fragment("%Xs", t)}
        tile.reduce "sum" %F to %s dim 1 {{clear = false}} : {f} to {r}
      }}
      tile.copy %s[%c0] [16] to %out[%row] [16] : {r} to memref<?xf32>
    }}
    return
  }}
}}
"""
    params = [_tensor("X", dtype, ["M", "K"]), _tensor("out", "float32", ["M"], output=True)]
    # K = 1000: a partial last tile; 4099: rows no multiple of 16 bytes (element-wise chunks);
    # 64: one tile, fewer than the prologue's S-1 (its copies predicated off); ragged M
    shapes = [{"M": 1000, "K": 1000}, {"M": 37, "K": 4099}, {"M": 256, "K": 64},
              {"M": 50, "K": 130}]
    return KernelSpec(name, ir, params, ["(M + 15) // 16"], [128],
                      lambda x: x.double().sum(dim=1), shapes)


def softmax_pipelined(stages: int, dtype: str = "float32") -> KernelSpec:
    """Row softmax over rows of any length: three T.Pipelined loops over 64-column tiles (row
    max, sum of exponentials, output), each copy a cp.async pipeline of `stages` stages; the
    columns past K are masked in T.Parallel, as a user writes it. Each loop has its own tile:
    a shared buffer used by several loops stays synchronous."""
    t = MLIR_TYPES[dtype]
    g = f"memref<?x?x{t}>"
    tile = f'memref<16x64x{t}, "shared">'
    f = 'memref<16x64xf32, "fragment">'
    h = f'memref<16x64x{t}, "fragment">'
    r = 'memref<16xf32, "fragment">'
    name = f"softmax_long_{dtype}_cp_async{stages}"
    out = "%F" if t == "f32" else "%H"
    out_type = f if t == "f32" else h
    narrow = "%y" if t == "f32" else "%yn"
    to_out = "" if t == "f32" else (f"%yn = arith.truncf %y : f32 to {t}\n"
                                           "          ")

    def load(buffer: str) -> str:
        return f"""%kk = arith.muli %k, %c64 : index
        tile.copy %X[%row, %kk] [16, 64] to {buffer}[%c0, %c0] [16, 64] {CP_ASYNC_COPY} : \
{g} to {tile}
        {to_fragment(buffer, t)}"""

    ir = f"""module {{
  func.func @{name}(%X: {g}, %Y: {g}) attributes {{tile.entry}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %M = memref.dim %X, %c0 : {g}
    %K = memref.dim %X, %c1 : {g}
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %gx = arith.ceildivui %M, %c16 : index
    %kt = arith.ceildivui %K, %c64 : index
    tile.kernel grid(%gx) threads [128] {{
    ^bb0(%bx: index):
      %X1 = tile.alloc : {tile}
      %X2 = tile.alloc : {tile}
      %X3 = tile.alloc : {tile}
      %F = tile.alloc : {f}
      %H = tile.alloc : {h}
      %m = tile.alloc : {r}
      %s = tile.alloc : {r}
      %zero = arith.constant 0.0 : f32
      %ninf = arith.constant 0xFF800000 : f32
      tile.fill %m, %ninf : {r}, f32
      tile.fill %s, %zero : {r}, f32
      %row = arith.muli %bx, %c16 : index
      tile.pipelined %c0 to %kt step %c1 stages {stages} {cp_async_loop(stages)} {{
      ^bb0(%k: index):
        {load("%X1")}
        tile.parallel [16, 64] {{
        ^bb0(%i: index, %j: index):
          %col = arith.addi %kk, %j : index
          %inside = arith.cmpi ult, %col, %K : index
          %x = memref.load %F[%i, %j] : {f}
          %v = arith.select %inside, %x, %ninf : f32
          memref.store %v, %F[%i, %j] : {f}
        }}
        tile.reduce "max" %F to %m dim 1 {{clear = false}} : {f} to {r}
      }}
      tile.pipelined %c0 to %kt step %c1 stages {stages} {cp_async_loop(stages)} {{
      ^bb0(%k: index):
        {load("%X2")}
        tile.parallel [16, 64] {{
        ^bb0(%i: index, %j: index):
          %col = arith.addi %kk, %j : index
          %inside = arith.cmpi ult, %col, %K : index
          %x = memref.load %F[%i, %j] : {f}
          %mi = memref.load %m[%i] : {r}
          %d = arith.subf %x, %mi : f32
          %e = math.exp %d : f32
          %v = arith.select %inside, %e, %zero : f32
          memref.store %v, %F[%i, %j] : {f}
        }}
        tile.reduce "sum" %F to %s dim 1 {{clear = false}} : {f} to {r}
      }}
      tile.pipelined %c0 to %kt step %c1 stages {stages} {cp_async_loop(stages)} {{
      ^bb0(%k: index):
        {load("%X3")}
        tile.parallel [16, 64] {{
        ^bb0(%i: index, %j: index):
          %x = memref.load %F[%i, %j] : {f}
          %mi = memref.load %m[%i] : {r}
          %si = memref.load %s[%i] : {r}
          %d = arith.subf %x, %mi : f32
          %e = math.exp %d : f32
          %y = arith.divf %e, %si : f32
          {to_out}memref.store {narrow}, {out}[%i, %j] : {out_type}
        }}
        tile.copy {out}[%c0, %c0] [16, 64] to %Y[%row, %kk] [16, 64] : {out_type} to {g}
      }}
    }}
    return
  }}
}}
"""
    params = [_tensor("X", dtype, ["M", "K"]), _tensor("Y", dtype, ["M", "K"], output=True)]
    shapes = [{"M": 300, "K": 1000}, {"M": 37, "K": 4099}, {"M": 64, "K": 64}]
    return KernelSpec(name, ir, params, ["(M + 15) // 16"], [128],
                      lambda x: x.double().softmax(dim=1), shapes)


def cp_async_kernels() -> list[KernelSpec]:
    """The kernels whose T.Pipelined copies become cp.async pipelines (SIMT path)."""
    specs = [row_sum_pipelined(stages) for stages in (2, 3, 4)]
    specs.append(row_sum_pipelined(3, "float16"))
    specs += [softmax_pipelined(2), softmax_pipelined(3, "float16")]
    # 4 x 16 KB of slots: past the 48 KB default, so the launch raises the limit; K = 33 rows
    # (132 bytes) take the element-by-element chunks
    specs.append(gemm("float32", 64, 64, 32, cp_async_stages=4))
    specs.append(gemm("float16", 64, 128, 32, threads=256, cp_async_stages=3))
    return specs


def all_kernels() -> list[KernelSpec]:
    """Every kernel the CUDA suite compiles and runs."""
    specs = [vector_add("float32"), vector_add("float16")]
    specs += [gemm(dtype) for dtype in ("float16", "bfloat16", "float32")]
    specs.append(gemm("float16", 64, 64, 32, transpose_b=True, bias_relu=True))
    specs.append(gemm("float16", 64, 128, 32, threads=256))
    specs.append(gemm("float32", 128, 128, 64))  # 64 KB of shared memory: past the 48 KB default
    specs += [broadcast("float32"), broadcast("float16")]
    specs += [softmax("float32"), softmax("float16")]
    specs += [column_sum("float32")]
    specs += [row_reduce(kind) for kind in ("sum", "max", "min", "abssum", "absmax")]
    return specs + cp_async_kernels()
