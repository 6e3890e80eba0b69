"""AMD matrix-core (MFMA) fragments as linear layouts (AMD Instinct CDNA2 / CDNA3 ISA guides,
"Matrix fused multiply-add", and AMD's matrix instruction calculator).

One MFMA block instruction of a 64-lane wave computes D (m x n) = A (m x k) x B (k x n) + C,
m = n = 32 or 16. Every operand has the same shape of map:

- A: lane l holds row l % m and the `per_lane` consecutive K elements starting at
  per_lane * (l / m), packed into one 32- or 64-bit operand (1 f32, 4 f16 / bf16 / i8-on-CDNA2,
  or 8 i8 / fp8 on CDNA3); B the same with its columns in place of A's rows.
- D (and C): lane l holds column l % n; its registers r hold rows 8 (r / 4) + 4 (l / 32) +
  r % 4 (32 x 32: 16 registers) or 4 (l / 16) + r (16 x 16: 4 registers).

As GF(2) bases: A's register bits are K's low bits, lane bits 0..log2(m)-1 its rows and the
lanes above them K's higher bits; D's lane bits 0..log2(n)-1 its columns, the rest rows 4, 8
(16 x 16) or row 4 (32 x 32, whose registers 2 and 3 are rows 8 and 16).

Tiles larger than a block repeat it over a wave grid: waves own contiguous wave tiles, wave
= wm * waves_n + wn (N bits low). Registers walk the instruction's own bits, then the repeats:
the accumulator's blocks row-major over the wave tile (block (i, j)'s register r is fragment
register r + regs * (j + blocks_n * i)); A's K steps then its M blocks (register v of step s,
block i is v + per_lane * (s + steps * i)), B's K steps then its N blocks. An operand is
broadcast over the waves of the other dimension (zero bases). `accumulator_register` and
`operand_register` are those numberings, shared by the lowering and the tests.
"""

from __future__ import annotations

from dataclasses import dataclass

from tilec.compiler.layouts.linear import Basis, LayoutError, LinearLayout, log2

WAVE_LANES = 64


@dataclass(frozen=True)
class MfmaInstruction:
    """One MFMA block instruction: D (m x n) += A (m x k) x B (k x n) on a 64-lane wave.

    `name` is the ISA's mnemonic, `op` the rocdl dialect op (MLIR's Python name),
    `operand_type` the element type of A and B (f32, f16, bf16, s8, e4m3fnuz, e5m2fnuz: f32 is
    full fp32 on CDNA, not tf32), `packed` the bits of one lane's operand (32: one f32 or
    i32; 64: an i64 or a vector<4 x 16-bit>)."""

    name: str
    op: str
    m: int
    n: int
    k: int
    operand_type: str
    packed: int

    @property
    def per_lane(self) -> int:
        """Operand elements one lane holds (consecutive along K)."""
        return self.m * self.k // WAVE_LANES

    @property
    def registers(self) -> int:
        """Accumulator registers one lane holds."""
        return self.m * self.n // WAVE_LANES

    @property
    def accumulator_type(self) -> str:
        return "s32" if self.operand_type == "s8" else "f32"


def _mfma(name: str, op: str, m: int, k: int, operand_type: str, packed: int = 64
          ) -> MfmaInstruction:
    return MfmaInstruction(name, op, m, m, k, operand_type, packed)


# CDNA3's fp8 MFMAs read the FNUZ formats (exponent bias 8 / 16, one NaN, no negative zero),
# not OCP's e4m3fn / e5m2 (those are CDNA4's)
_FP8 = {"e4m3fnuz": "fp8", "e5m2fnuz": "bf8"}


def _common(cdna3: bool) -> tuple[MfmaInstruction, ...]:
    """The f32, f16 and bf16 MFMAs of both chips; CDNA3's assembler spells them with an
    underscore before the type (and bf16_1k as bf16), CDNA2's without."""
    def spelled(m: int, k: int, old: str, new: str) -> str:
        return f"v_mfma_f32_{m}x{m}x{k}" + (f"_{new}" if cdna3 else old)

    return (
        _mfma(spelled(32, 8, "f16", "f16"), "mfma_f32_32x32x8f16", 32, 8, "f16"),
        _mfma(spelled(16, 16, "f16", "f16"), "mfma_f32_16x16x16f16", 16, 16, "f16"),
        _mfma(spelled(32, 8, "bf16_1k", "bf16"), "mfma_f32_32x32x8bf16_1k", 32, 8, "bf16"),
        _mfma(spelled(16, 16, "bf16_1k", "bf16"), "mfma_f32_16x16x16bf16_1k", 16, 16, "bf16"),
        _mfma(spelled(32, 2, "f32", "f32"), "mfma_f32_32x32x2f32", 32, 2, "f32", packed=32),
        _mfma(spelled(16, 4, "f32", "f32"), "mfma_f32_16x16x4f32", 16, 4, "f32", packed=32),
    )


# per chip, the instructions tilec emits, the 32 x 32 one of each type first (it moves half the
# operand bytes per multiply-add of the 16 x 16 one)
MFMA_INSTRUCTIONS: dict[str, tuple[MfmaInstruction, ...]] = {
    "gfx90a": _common(False) + (
        _mfma("v_mfma_i32_32x32x8i8", "mfma_i32_32x32x8i8", 32, 8, "s8", packed=32),
        _mfma("v_mfma_i32_16x16x16i8", "mfma_i32_16x16x16i8", 16, 16, "s8", packed=32),
    ),
    "gfx942": _common(True) + (
        _mfma("v_mfma_i32_32x32x16_i8", "mfma_i32_32x32x16_i8", 32, 16, "s8"),
        _mfma("v_mfma_i32_16x16x32_i8", "mfma_i32_16x16x32_i8", 16, 32, "s8"),
    ) + tuple(
        _mfma(f"v_mfma_f32_{m}x{m}x{k}_{_FP8[t]}_{_FP8[t]}",
              f"mfma_f32_{m}x{m}x{k}_{_FP8[t]}_{_FP8[t]}", m, k, t)
        for m, k in ((32, 16), (16, 32)) for t in _FP8
    ),
}


def instructions_for(chip: str, operand_type: str) -> tuple[MfmaInstruction, ...]:
    """The chip's MFMAs for this operand type, 32 x 32 first (empty: none)."""
    return tuple(instr for instr in MFMA_INSTRUCTIONS.get(chip, ())
                 if instr.operand_type == operand_type)


def _along(dim: int, value: int) -> Basis:
    return (value, 0) if dim == 0 else (0, value)


@dataclass(frozen=True)
class WaveGrid:
    """waves_m x waves_n waves over a block_m x block_n tile, each a wave tile of whole
    instruction blocks, and the tile's K in instruction steps."""

    instruction: MfmaInstruction
    waves_m: int
    waves_n: int
    block_m: int
    block_n: int
    block_k: int

    def __post_init__(self) -> None:
        instr = self.instruction
        if (self.block_m % (self.waves_m * instr.m) or self.block_n % (self.waves_n * instr.n)
                or self.block_k % instr.k):
            raise LayoutError(f"a {self.block_m}x{self.block_n}x{self.block_k} tile is not a "
                              f"whole number of {instr.name} blocks over {self.waves_m}x"
                              f"{self.waves_n} waves")
        for extent in (self.block_m, self.block_n, self.block_k, self.waves_m, self.waves_n):
            log2(extent)  # linear layouts: powers of two

    @property
    def wave_m(self) -> int:
        return self.block_m // self.waves_m

    @property
    def wave_n(self) -> int:
        return self.block_n // self.waves_n

    @property
    def blocks_m(self) -> int:
        return self.wave_m // self.instruction.m

    @property
    def blocks_n(self) -> int:
        return self.wave_n // self.instruction.n

    @property
    def steps(self) -> int:
        return self.block_k // self.instruction.k

    def _warps(self, broadcast: int | None) -> list[Basis]:
        """Wave bits, N first; the waves along `broadcast` (0: M, 1: N) hold copies."""
        bases = []
        for dim, waves, extent in ((1, self.waves_n, self.wave_n), (0, self.waves_m,
                                                                     self.wave_m)):
            bases += [(0, 0) if dim == broadcast else _along(dim, extent << i)
                      for i in range(log2(waves))]
        return bases

    def accumulator(self) -> LinearLayout:
        """C / D over the block_m x block_n tile (module docstring)."""
        instr = self.instruction
        column_lanes = log2(instr.n)
        lane = [(0, 1 << i) for i in range(column_lanes)]
        lane += [(4 << i, 0) for i in range(log2(WAVE_LANES) - column_lanes)]
        rows_by_lanes = 4 << (log2(WAVE_LANES) - column_lanes)  # rows lanes and r % 4 cover
        register = [(1, 0), (2, 0)] + [(rows_by_lanes << i, 0)
                                       for i in range(log2(instr.registers) - 2)]
        register += [(0, instr.n << i) for i in range(log2(self.blocks_n))]
        register += [(instr.m << i, 0) for i in range(log2(self.blocks_m))]
        return LinearLayout((self.block_m, self.block_n), tuple(register), tuple(lane),
                            tuple(self._warps(None)))

    def _operand(self, dim: int) -> LinearLayout:
        """A (dim 0: M x K) or B (dim 1: K x N): `dim` is the non-K dimension."""
        instr = self.instruction
        k_dim = 1 - dim
        rows = instr.m if dim == 0 else instr.n
        register = [_along(k_dim, 1 << i) for i in range(log2(instr.per_lane))]
        register += [_along(k_dim, instr.k << i) for i in range(log2(self.steps))]
        blocks = self.blocks_m if dim == 0 else self.blocks_n
        register += [_along(dim, rows << i) for i in range(log2(blocks))]
        lane = [_along(dim, 1 << i) for i in range(log2(rows))]
        lane += [_along(k_dim, instr.per_lane << i)
                 for i in range(log2(WAVE_LANES) - log2(rows))]
        shape = (self.block_m, self.block_k) if dim == 0 else (self.block_k, self.block_n)
        return LinearLayout(shape, tuple(register), tuple(lane),
                            tuple(self._warps(1 if dim == 0 else 0)))

    def operand_a(self) -> LinearLayout:
        """Which A (block_m x block_k) elements each lane feeds its MFMAs, in which register."""
        return self._operand(0)

    def operand_b(self) -> LinearLayout:
        """Which B (block_k x block_n) elements each lane feeds its MFMAs."""
        return self._operand(1)

    def accumulator_register(self, block_i: int, block_j: int, register: int) -> int:
        """The fragment register of register `register` of the wave's block (i, j)."""
        instr = self.instruction
        return register + instr.registers * (block_j + self.blocks_n * block_i)

    def operand_register(self, block: int, step: int, element: int) -> int:
        """The operand layout's register of element `element` of K step `step` of the wave's
        M (A) or N (B) block `block`."""
        return element + self.instruction.per_lane * (step + self.steps * block)


def wave_grid(instruction: MfmaInstruction, block_m: int, block_n: int, block_k: int,
              waves: int, policy: str = "square") -> WaveGrid | None:
    """The split of a tile over `waves` waves for this instruction, None when none fits:
    "full_row" puts every wave along M, "full_col" along N, "square" picks the wave tile
    closest to square (fewest operand elements per multiply-add)."""
    candidates = []
    for bit in range(log2(waves) + 1):
        waves_m = 1 << bit
        try:
            candidates.append(WaveGrid(instruction, waves_m, waves // waves_m, block_m,
                                       block_n, block_k))
        except LayoutError:
            continue
    if policy == "full_row":
        candidates = [grid for grid in candidates if grid.waves_n == 1]
    elif policy == "full_col":
        candidates = [grid for grid in candidates if grid.waves_m == 1]
    return min(candidates, key=lambda grid: (grid.wave_m + grid.wave_n, grid.waves_n),
               default=None)
