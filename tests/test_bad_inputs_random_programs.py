"""Random small tile programs against numpy on the CPU target: elementwise expression trees
over ragged 2-d tensors (float32, float16, int32) and row reductions of them, with random
shapes, block sizes and thread counts. A seeded generator makes each program (case N is the
same program on every run; its inputs are fresh random values).

The programs are written out as Python source, as a user would write them, into a temporary
module: tilec reads a kernel's source from its file.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import torch

import tilec

PROGRAMS = 40


@dataclass
class Expression:
    kernel: str  # the tile program's spelling, over the names x and y
    numpy: str  # numpy's spelling, over arrays x and y


FLOAT_LEAVES = [Expression("x", "x"), Expression("y", "y")]
INT_LEAVES = FLOAT_LEAVES


def float_expression(chooser: random.Random, depth: int) -> Expression:
    if depth == 0 or chooser.random() < 0.25:
        if chooser.random() < 0.3:
            value = round(chooser.uniform(-2, 2), 3)
            return Expression(repr(value), repr(value))
        return chooser.choice(FLOAT_LEAVES)
    a, b = float_expression(chooser, depth - 1), float_expression(chooser, depth - 1)
    forms = [
        ("({a} + {b})", "({a} + {b})"),
        ("({a} - {b})", "({a} - {b})"),
        ("({a} * {b})", "({a} * {b})"),
        ("T.max({a}, {b})", "np.maximum({a}, {b})"),
        ("T.min({a}, {b})", "np.minimum({a}, {b})"),
        ("T.abs({a})", "np.abs({a})"),
        ("({a} / (T.abs({b}) + 1.0))", "({a} / (np.abs({b}) + 1.0))"),
        ("T.exp(T.min({a}, 2.0))", "np.exp(np.minimum({a}, 2.0))"),
    ]
    kernel, reference = chooser.choice(forms)
    return Expression(kernel.format(a=a.kernel, b=b.kernel),
                      reference.format(a=a.numpy, b=b.numpy))


def int_expression(chooser: random.Random, depth: int) -> Expression:
    if depth == 0 or chooser.random() < 0.25:
        if chooser.random() < 0.3:
            value = chooser.randint(-9, 9)
            return Expression(str(value), f"np.int32({value})")
        return chooser.choice(INT_LEAVES)
    a, b = int_expression(chooser, depth - 1), int_expression(chooser, depth - 1)
    forms = [
        ("({a} + {b})", "({a} + {b})"),
        ("({a} - {b})", "({a} - {b})"),
        ("({a} * {b})", "({a} * {b})"),
        ("({a} // {b})", "np.floor_divide({a}, {b})"),
        ("({a} % {b})", "np.remainder({a}, {b})"),
        ("({a} & {b})", "({a} & {b})"),
        ("({a} ^ {b})", "({a} ^ {b})"),
        ("T.max({a}, {b})", "np.maximum({a}, {b})"),
    ]
    kernel, reference = chooser.choice(forms)
    return Expression(kernel.format(a=a.kernel, b=b.kernel),
                      reference.format(a=a.numpy, b=b.numpy))


ELEMENTWISE = '''
import tilec.language as T


def make():
    @T.prim_func
    def main(X: T.Tensor(({m}, {n}), "{dtype}"), Y: T.Tensor(({m}, {n}), "{dtype}"),
             Z: T.Tensor(({m}, {n}), "{dtype}")):
        with T.Kernel(T.ceildiv({n}, {bn}), T.ceildiv({m}, {bm}), threads={threads}) as (bx, by):
            for i, j in T.Parallel({bm}, {bn}):
                row = by * {bm} + i
                column = bx * {bn} + j
                if row < {m} and column < {n}:
                    x = X[row, column]
                    y = Y[row, column]
                    Z[row, column] = {expression}

    return main
'''

ROW_REDUCTION = '''
import tilec.language as T


def make():
    @T.prim_func
    def main(X: T.Tensor(({m}, {n}), "float32"), Y: T.Tensor(({m}, {n}), "float32"),
             R: T.Tensor(({m},), "float32")):
        with T.Kernel(T.ceildiv({m}, {bm}), threads={threads}) as bx:
            xs = T.alloc_fragment(({bm}, {n}), "float32")
            ys = T.alloc_fragment(({bm}, {n}), "float32")
            row = T.alloc_fragment(({bm},), "float32")
            T.copy(X[bx * {bm}, 0], xs)
            T.copy(Y[bx * {bm}, 0], ys)
            for i, j in T.Parallel({bm}, {n}):
                x = xs[i, j]
                y = ys[i, j]
                xs[i, j] = {expression}
            T.reduce_{kind}(xs, row, dim=1)
            T.copy(row, R[bx * {bm}])

    return main
'''


@dataclass
class Program:
    source: str
    reference: str  # numpy over x and y
    kind: str  # "elementwise" | "sum" | "max"
    dtype: str
    shape: tuple[int, int]


def random_program(case: int) -> Program:
    chooser = random.Random(case)
    m, n = chooser.randint(1, 70), chooser.randint(1, 70)
    threads = chooser.choice([32, 64, 128])
    kind = chooser.choice(["elementwise", "elementwise", "sum", "max"])
    if kind == "elementwise":
        dtype = chooser.choice(["float32", "float16", "int32", "int32"])
        generate = int_expression if dtype == "int32" else float_expression
        expression = generate(chooser, chooser.randint(1, 3))
        source = ELEMENTWISE.format(m=m, n=n, bm=chooser.choice([8, 16, 32]),
                                    bn=chooser.choice([8, 16, 32]), threads=threads,
                                    dtype=dtype, expression=expression.kernel)
    else:
        dtype = "float32"
        expression = float_expression(chooser, chooser.randint(1, 3))
        n = chooser.choice([8, 16, 32, 64])
        source = ROW_REDUCTION.format(m=m, n=n, bm=chooser.choice([4, 8, 16]), threads=threads,
                                      kind=kind, expression=expression.kernel)
    return Program(source, expression.numpy, kind, dtype, (m, n))


def load_program(program: Program, folder: Path, case: int):
    path = folder / f"random_program_{case}.py"
    path.write_text(program.source)
    spec = importlib.util.spec_from_file_location(f"random_program_{case}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.make()


def random_inputs(program: Program, rng: torch.Generator) -> list[torch.Tensor]:
    if program.dtype == "int32":
        return [torch.randint(-50, 50, program.shape, generator=rng, dtype=torch.int32)
                for _ in range(2)]
    values = [torch.randn(program.shape, generator=rng) for _ in range(2)]
    return [v.to(getattr(torch, program.dtype)) for v in values]


def reference(program: Program, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        result = eval(program.reference, {"np": np, "x": x, "y": y})  # noqa: S307
    result = np.broadcast_to(result, x.shape)
    if program.kind == "sum":
        return result.sum(axis=1)
    if program.kind == "max":
        return result.max(axis=1)
    return result


@pytest.mark.parametrize("case", range(PROGRAMS))
def test_random_program_matches_numpy(case: int, tmp_path: Path, rng: torch.Generator) -> None:
    program = random_program(case)
    kernel = tilec.compile(load_program(program, tmp_path, case), target="cpu")
    x, y = random_inputs(program, rng)
    if program.kind == "elementwise":
        out = torch.full(program.shape, 7, dtype=x.dtype) if program.dtype == "int32" else (
            torch.full(program.shape, float("nan"), dtype=x.dtype))
    else:
        out = torch.full((program.shape[0],), float("nan"))
    kernel(x, y, out)
    if program.dtype == "int32":
        want = reference(program, x.numpy(), y.numpy()).astype(np.int32)
        np.testing.assert_array_equal(out.numpy(), want, err_msg=program.source)
        return
    # float16 programs compute in float16 (as the kernel does); the reference in float64
    want = reference(program, x.double().numpy(), y.double().numpy())
    tolerance = {"float32": 1e-4, "float16": 3e-2}[program.dtype]
    scale = 1.0 + np.abs(want)
    if program.kind == "sum":
        scale = scale * program.shape[1]
    error = np.abs(out.double().numpy() - want) / scale
    assert np.all(error <= tolerance), f"max error {error.max()}\n{program.source}"
