"""T.rng_init / T.rng_rand / T.rng_rand_float: the random numbers TileLang's kernels draw (a mixin
of the KernelBuilder).

TileLang's CUDA code calls cuRAND: `curand_init(seed, subsequence, offset, &state)` with a
Philox4x32-10 state, then `curand(&state)` for a uint32 and `curand_uniform(_double)` for a
float in (0, 1]. tilec builds the same generator from integer IR, so a kernel draws the same
numbers on every target, bit for bit: each thread keeps its state in a local buffer (the
Philox key, the 128-bit counter, the four outputs of the current counter and which of them is
next); a draw returns the next output and, after the fourth, advances the counter and runs the
ten Philox rounds again.
"""

from __future__ import annotations

import ast
import math
from typing import Any

from mlir import ir
from mlir.dialects import arith, scf
from mlir.dialects import math as mmath

import tilec.language as T
from tilec.compiler.passes.check_parallel_updates import THREAD_STREAM_ATTR
from tilec.frontend.values import Buffer, Scalar

PHILOX = "curandStatePhilox4_32_10_t"
_GENERATORS = (PHILOX, "curandStateMRG32k3a_t", "curandStateXORWOW_t")
_ROUND_KEYS = (0x9E3779B9, 0xBB67AE85)  # added to the key between rounds
_MULTIPLIERS = (0xD2511F53, 0xCD9E8D57)
_ROUNDS = 10
# the state's words: key (2), counter (4, least significant first), outputs (4), next output
_KEY, _COUNTER, _OUTPUT, _NEXT = 0, 2, 6, 10
_STATE_WORDS = 11
_INV_2POW32 = 2.3283064e-10  # cuRAND's float scale (float32 rounds it) and its double's
_INV_2POW32_DOUBLE = 2.3283064365386963e-10


class RandomOps:
    """t_rng_* handlers; mixed into KernelBuilder (self.rng_state: this block's state)."""

    def t_rng_init(self, nodes: dict, node: ast.Call) -> None:
        self.require_kernel(node, "T.rng_init")
        generator = self.const_arg(nodes, "generator", node, PHILOX)
        if generator not in _GENERATORS:
            self.error(node, f"T.rng_init's generator is one of {', '.join(_GENERATORS)}, got "
                             f"{generator!r}")
        if generator != PHILOX:
            self.error(node, f"tilec draws from cuRAND's {PHILOX} only, not {generator}")
        seed = self.u64(self.arg(nodes, "seed"), node)
        sequence = self.arg(nodes, "seq")
        if sequence is None:  # TileLang's default: the thread's number in the grid
            block = self.binop("*", self.block_index(0, node), self.block_size()[0], node)
            sequence = self.binop("+", self.thread_index(0, node), block, node)
        sequence, offset = self.u64(sequence, node), self.u64(self.arg(nodes, "off", 0), node)
        state = self.allocate("local", [_STATE_WORDS], T.uint32, node)
        # each thread's own stream: its draws across T.Parallel points are meant to advance it
        state.value.owner.attributes[THREAD_STREAM_ATTR] = ir.UnitAttr.get()
        self.rng_state = state
        words = [self.u32(seed), self.u32(self.shr(seed, 32))]
        # the counter starts at (offset / 4) + (subsequence << 64), the output index at
        # offset % 4
        low = offset_words = self.divide(offset, 4)
        high = sequence
        counter = [self.u32(low), self.u32(self.shr(offset_words, 32)), self.u32(high),
                   self.u32(self.shr(high, 32))]
        next_output = self.u32(arith.andi(offset, self.word(3, 64)))
        outputs = philox(counter, words)
        for position, word in enumerate([*words, *counter, *outputs, next_output]):
            self.put(state, position, word)

    def t_rng_rand(self, nodes: dict, node: ast.Call) -> Scalar:
        return Scalar(self.draw(node), T.uint32)

    def t_rng_rand_float(self, nodes: dict, node: ast.Call) -> Scalar:
        bits = self.const_arg(nodes, "bit", node, 32)
        dist = self.const_arg(nodes, "dist", node, "uniform")
        if bits not in (32, 64) or dist not in ("uniform", "normal"):
            self.error(node, f"T.rng_rand_float takes bit 32 or 64 and dist 'uniform' or "
                             f"'normal', got {bits!r}, {dist!r}")
        if dist == "normal":
            self.error(node, "T.rng_rand_float(dist='normal') is not supported by tilec "
                             "(cuRAND's Box-Muller uses the GPU's logf / sincosf, which other "
                             "targets cannot match bit for bit)")
        # cuRAND's x * 2^-32 + 2^-33 (float) and x * 2^-32 + 2^-32 (double), as one fma
        dtype = T.float32 if bits == 32 else T.float64
        scale = _INV_2POW32 if bits == 32 else _INV_2POW32_DOUBLE
        bias = scale / 2 if bits == 32 else scale
        element = ir.F32Type.get() if bits == 32 else ir.F64Type.get()
        value = arith.uitofp(element, self.draw(node))
        result = mmath.fma(value, arith.constant(element, scale), arith.constant(element, bias))
        return Scalar(result, dtype)

    # ----- the state ----------------------------------------------------------------------
    def draw(self, node: ast.AST) -> ir.Value:
        """curand(): the next output; after the fourth the counter advances and the next four
        are computed."""
        state = self.rng_state
        if state is None:
            self.error(node, "T.rng_rand needs a T.rng_init earlier in the kernel")
        if inside_parallel() and math.prod(self.block_size()) > 1:
            self.error(node, "random draws inside a T.Parallel of a block of several threads "
                             "depend on which thread runs which point (the layout's choice, "
                             "and the CPU target runs the block as one thread); draw with "
                             "threads=1, or outside T.Parallel where every thread draws its own")
        position = self.get(state, _NEXT)
        # the output at `position` chosen by selects, not read at a run-time index: every
        # index of the state stays a constant, so the state lives in registers (an indexed
        # read put it in local memory, and LLVM 22's instcombine crashed on it for AMDGPU)
        result = self.get(state, _OUTPUT + 3)
        for n in (2, 1, 0):
            chosen = arith.cmpi(arith.CmpIPredicate.eq, position, self.word(n))
            result = arith.select(chosen, self.get(state, _OUTPUT + n), result)
        following = arith.addi(position, self.word(1))
        exhausted = arith.cmpi(arith.CmpIPredicate.eq, following, self.word(4))
        branch = scf.IfOp(exhausted, [], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            counter = [self.get(state, _COUNTER + n) for n in range(4)]
            counter = increment(counter)
            for n, word in enumerate(counter):
                self.put(state, _COUNTER + n, word)
            key = [self.get(state, _KEY + n) for n in range(2)]
            for n, word in enumerate(philox(counter, key)):
                self.put(state, _OUTPUT + n, word)
            self.put(state, _NEXT, self.word(0))
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            self.put(state, _NEXT, following)
            scf.YieldOp([])
        return result

    def u64(self, value: Any, node: ast.AST) -> ir.Value:
        """`value` as an unsigned 64-bit word (cuRAND takes unsigned long long)."""
        return self.materialize(self.cast(value, T.uint64, node), T.uint64, node).value

    @staticmethod
    def u32(value: ir.Value) -> ir.Value:
        return arith.trunci(ir.IntegerType.get_signless(32), value)

    @staticmethod
    def shr(value: ir.Value, bits: int) -> ir.Value:
        return arith.shrui(value, constant_word(value.type, bits))

    @staticmethod
    def divide(value: ir.Value, divisor: int) -> ir.Value:
        return arith.divui(value, constant_word(value.type, divisor))

    @staticmethod
    def word(value: int, bits: int = 32) -> ir.Value:
        return constant_word(ir.IntegerType.get_signless(bits), value)

    @staticmethod
    def index_constant(value: int) -> ir.Value:
        return arith.constant(ir.IndexType.get(), value)

    def get(self, state: Buffer, position: int) -> ir.Value:
        return self.load(state, [Scalar(self.index_constant(position), T.index)], None).value

    def put(self, state: Buffer, position: int, word: ir.Value) -> None:
        self.store(state, [position], Scalar(word, T.uint32), None)


def inside_parallel() -> bool:
    """Whether ops are being built inside a tile.parallel."""
    operation = ir.InsertionPoint.current.block.owner
    while operation is not None:
        if operation.name == "tile.parallel":
            return True
        operation = operation.parent
    return False


def increment(counter: list[ir.Value]) -> list[ir.Value]:
    """The 128-bit counter plus one (cuRAND's Philox_State_Incr), in 32-bit words."""
    one = constant_word(counter[0].type, 1)
    zero = constant_word(counter[0].type, 0)
    result, carry = [], one
    for word in counter:
        total = arith.addi(word, carry)
        result.append(total)
        wrapped = arith.cmpi(arith.CmpIPredicate.eq, total, zero)
        carry = arith.select(wrapped, carry, zero)  # carries on while the word wrapped to 0
    return result


def philox(counter: list[ir.Value], key: list[ir.Value]) -> list[ir.Value]:
    """Philox4x32-10 of the counter under the key: four 32-bit outputs."""
    c, k = list(counter), list(key)
    for round_number in range(_ROUNDS):
        if round_number:
            k = [arith.addi(k[n], constant_word(k[n].type, _ROUND_KEYS[n])) for n in range(2)]
        low0, high0 = multiply_wide(_MULTIPLIERS[0], c[0])
        low1, high1 = multiply_wide(_MULTIPLIERS[1], c[2])
        c = [arith.xori(arith.xori(high1, c[1]), k[0]), low1,
             arith.xori(arith.xori(high0, c[3]), k[1]), low0]
    return c


def multiply_wide(multiplier: int, value: ir.Value) -> tuple[ir.Value, ir.Value]:
    """The low and high words of the 64-bit product of two unsigned 32-bit words."""
    product = arith.MulUIExtendedOp(constant_word(value.type, multiplier), value)
    return product.low, product.high


def constant_word(element: ir.Type, value: int) -> ir.Value:
    """An integer constant given by its unsigned value (MLIR's attributes are signed)."""
    bits = ir.IntegerType(element).width
    value %= 1 << bits
    return arith.constant(element, value - (1 << bits) if value >> (bits - 1) else value)
