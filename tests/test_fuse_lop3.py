"""fuse-lop3's truth tables against the trees they replace: random trees of i32 and / or /
xor (with not, masks and the constants 0 / -1) over four values, each rewritten by the pass
and the lop3 it emits evaluated bit by bit on random words (bit i of the result is bit
(a << 2 | b << 1 | c) of the table, a, b, c the bits of its operands), against the tree
evaluated in Python. Trees over more than three values keep what does not fit as ops, which
are evaluated as they stand."""

from __future__ import annotations

import random
import re

import numpy as np
from mlir import ir

import tilec.dialect as tile
from tilec.compiler.passes import get_pass

OPS = {"andi": np.bitwise_and, "ori": np.bitwise_or, "xori": np.bitwise_xor}
CONSTANTS = (0, -1, 0x000F000F, 0x64006400, -0x10000)


def _random_tree(rng: random.Random, values: int) -> list[str]:
    """The body of a function of %a..%d computing one tree into %r: SSA lines."""
    lines, names = [], [f"%{chr(97 + i)}" for i in range(values)]
    for number, constant in enumerate(CONSTANTS):
        lines.append(f"%k{number} = arith.constant {constant} : i32")
    pool = list(names)
    for step in range(rng.randint(2, 6)):
        op = rng.choice(list(OPS))
        left = rng.choice(pool)
        right = rng.choice(pool + [f"%k{rng.randrange(len(CONSTANTS))}"])
        lines.append(f"%t{step} = arith.{op} {left}, {right} : i32")
        pool.append(f"%t{step}")
    lines.append(f"%r = arith.xori %t{step}, %k0 : i32")
    return lines


def _evaluate(text: str, words: dict[str, np.ndarray]) -> np.ndarray:
    """The function's %r (or the value stored) evaluated on `words`, ops and lop3s alike."""
    values = dict(words)
    for line in text.splitlines():
        line = line.strip()
        found = re.match(r"(%[\w-]+) = arith\.constant (-?\d+) : i32", line)
        if found:
            values[found[1]] = np.full_like(words["%arg0"], int(found[2]) & 0xFFFFFFFF)
            continue
        found = re.match(r"(%[\w-]+) = arith\.(andi|ori|xori) (%[\w-]+), (%[\w-]+) : i32", line)
        if found:
            values[found[1]] = OPS[found[2]](values[found[3]], values[found[4]])
            continue
        found = re.match(r'(%[\w-]+) = llvm\.inline_asm "lop3\.b32 \$0, \$1, \$2, \$3, (0x\w+);", '
                         r'"=r,r,r,r" (%[\w-]+), (%[\w-]+), (%[\w-]+)', line)
        if found:
            table = int(found[2], 16)
            a, b, c = (values[found[i]] for i in (3, 4, 5))
            result = np.zeros_like(a)
            for bit in range(32):
                index = ((a >> bit) & 1) << 2 | ((b >> bit) & 1) << 1 | ((c >> bit) & 1)
                result |= ((np.uint32(table) >> index) & 1) << bit
            values[found[1]] = result
            continue
        found = re.match(r"memref\.store (%[\w-]+),", line)
        if found:
            return values[found[1]]
    raise AssertionError(f"no store in\n{text}")


def test_lop3_tables_compute_the_trees() -> None:
    rng = random.Random(7)
    words = {f"%arg{i}": np.array([rng.getrandbits(32) for _ in range(64)], dtype=np.uint32)
             for i in range(4)}
    fused = 0
    for _ in range(200):
        values = rng.randint(1, 4)
        body = "\n".join(_random_tree(rng, values))
        arguments = ", ".join(f"%{chr(97 + i)}: i32" for i in range(values))
        source = f"""module attributes {{gpu.container_module}} {{
  gpu.module @kernels {{
    gpu.func @tree({arguments}, %out: memref<1xi32>) kernel {{
      %c0 = arith.constant 0 : index
      {body}
      memref.store %r, %out[%c0] : memref<1xi32>
      gpu.return
    }}
  }}
}}"""
        with tile.new_context():
            module = ir.Module.parse(source)
            before = str(module)
            get_pass("fuse-lop3")().run(module)
            module.operation.verify()
            after = str(module)
        fused += after.count("lop3.b32")
        expected, found = _evaluate(before, words), _evaluate(after, words)
        np.testing.assert_array_equal(found, expected, err_msg=f"{before}\n{after}")
    assert fused >= 150  # most trees fuse (one op trees and shared values do not)
