"""fuse-lop3's rewrite of sub-byte fields (compiler/passes/fuse_lop3.py, _truncations_as_masks)
executed on the CPU: every field `extui(trunci(byte >> s to iN))` of a private byte buffer,
OR-ed into the bits of 2 ** 23 as lower-sub-byte-types' float conversion does, computed from
the byte's 32-bit word shifted in i32 and masked (and from the byte zero-extended where the
mask would read past the word's exact bits) must equal the field as the loop computed it, for
random bytes at every position, shift and width. The lop3 itself is inline PTX (lit
fuse-lop3.mlir); the rewrite before it is plain arith and vector IR, lowered to LLVM and run by
MLIR's ExecutionEngine here on a little-endian host, as the words are read on the GPU."""

from __future__ import annotations

import ctypes

import numpy as np
from mlir import ir
from mlir.execution_engine import ExecutionEngine
from mlir.passmanager import PassManager
from mlir.runtime import get_ranked_memref_descriptor

from tilec.compiler.passes.fuse_lop3 import _truncations_as_masks
from tilec.dialect import new_context

BYTES = 16
CASES = [(shift, width) for shift in range(8) for width in (1, 2, 3, 4, 6, 7)]
BIAS = 0x4B000000


def _module_text() -> str:
    lines = [
        "func.func @fields(%in: memref<16xi8>, %out: memref<?xi32>) "
        "attributes {llvm.emit_c_interface} {",
        "  %c0 = arith.constant 0 : index",
        f"  %bias = arith.constant {BIAS} : i32",
        "  %buf = memref.alloca() {alignment = 16 : i64} : memref<16xi8>",
        "  %v = vector.load %in[%c0] : memref<16xi8>, vector<16xi8>",
        "  vector.store %v, %buf[%c0] : memref<16xi8>, vector<16xi8>",
    ]
    slot = 0
    for byte in range(BYTES):
        lines.append(f"  %i{byte} = arith.constant {byte} : index")
        lines.append(f"  %b{byte} = memref.load %buf[%i{byte}] : memref<16xi8>")
        for shift, width in CASES:
            name = f"{byte}_{shift}_{width}"
            lines += [
                f"  %s{name} = arith.constant {shift} : i8",
                f"  %h{name} = arith.shrui %b{byte}, %s{name} : i8",
                f"  %t{name} = arith.trunci %h{name} : i8 to i{width}",
                f"  %e{name} = arith.extui %t{name} : i{width} to i32",
                f"  %o{name} = arith.ori %e{name}, %bias : i32",
                f"  %k{name} = arith.constant {slot} : index",
                f"  memref.store %o{name}, %out[%k{name}] : memref<?xi32>",
            ]
            slot += 1
    lines += ["  return", "}"]
    return "\n".join(lines)


def _run(rewrite: bool, data: np.ndarray) -> np.ndarray:
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(_module_text())
        if rewrite:
            _truncations_as_masks(module.operation)
        module.operation.verify()
        PassManager.parse(
            "builtin.module(convert-vector-to-llvm,finalize-memref-to-llvm,"
            "convert-arith-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)").run(
            module.operation)
        engine = ExecutionEngine(module, opt_level=0)
        out = np.full(BYTES * len(CASES), -1, dtype=np.int32)
        arguments = [ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(array)))
                     for array in (data, out)]
        engine.invoke("fields", *arguments)
        return out


def test_fields_from_words_equal_the_bytes_fields() -> None:
    rewritten_text = None
    with new_context(), ir.Location.unknown():
        module = ir.Module.parse(_module_text())
        _truncations_as_masks(module.operation)
        rewritten_text = str(module)
    # every field rewritten: from its word (a vector<4xi8> load and its bitcast) where the
    # mask reads only the byte's bits, else from the byte zero-extended
    past = sum(width > 8 - shift for shift, width in CASES)
    assert "arith.trunci" not in rewritten_text
    assert rewritten_text.count(": i8 to i32") == BYTES * past
    assert rewritten_text.count("vector.bitcast") == BYTES * (len(CASES) - past)
    data = np.random.default_rng(7).integers(0, 256, BYTES, dtype=np.uint8)
    expected = np.array([BIAS | ((int(data[byte]) >> shift) & ((1 << width) - 1))
                         for byte in range(BYTES) for shift, width in CASES], dtype=np.int64)
    plain = _run(False, data.view(np.int8)).astype(np.int64) & 0xFFFFFFFF
    rewritten = _run(True, data.view(np.int8)).astype(np.int64) & 0xFFFFFFFF
    assert np.array_equal(plain, expected)
    assert np.array_equal(rewritten, expected)
