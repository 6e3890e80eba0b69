"""Linear layouts: which thread of a block holds which element of a fragment, in which register.

A fragment of shape (E_0, ..., E_{n-1}) lives in registers spread over a block's threads. Its
layout is a map from a hardware position, the bits of (register, lane, warp), to a tile
coordinate. Following Triton's linear layouts (arXiv 2505.23819) the map is linear over GF(2):
every input bit has a basis vector (one coordinate per tile dimension) and a position maps to
the XOR, dimension by dimension, of the basis vectors of its set bits:

    coordinate(r, l, w) = XOR_i [r_i] register[i]  ^  XOR_j [l_j] lane[j]  ^  XOR_k [w_k] warp[k]

Blocked layouts (runs of elements per thread, threads side by side), the mma.sync and wgmma
fragments, swizzles and the slice a reduction leaves all have this form, so one algebra answers
every question a pass asks: who owns an element (`locate`), what a reduction over a dimension
combines (`slice`, `reduction_bits`), how wide a vector access is (`contiguous_registers`),
and whether two layouts differ only by a register renaming (`register_permutation`).

Thread ids: lane = tid % lanes, warp = tid // lanes, where `lanes` is 2^len(lane) (the warp
size, or fewer when the whole block is smaller than a warp). A zero basis vector means the
bit does not move the coordinate: those positions hold copies (broadcast), as a reduced
fragment is replicated over the threads that held the reduced dimension.

Extents that are not powers of two are padded: coordinates run over the next power of two
along every dimension and positions whose coordinate falls outside the tile are *masked*
(they hold no element; ops skip them, statically when the mask depends on the register only,
else with a guard). The thread mapping of the elements inside the tile is exactly that of the
unpadded blocked layout, so kernels with ragged tiles keep their mapping.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from itertools import product

Basis = tuple[int, ...]
INPUTS = ("register", "lane", "warp")


class LayoutError(ValueError):
    """A layout that is malformed, or an operation the layout does not allow."""


def is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def log2(value: int) -> int:
    """log2 of a power of two (LayoutError otherwise)."""
    if not is_power_of_two(value):
        raise LayoutError(f"{value} is not a power of two")
    return value.bit_length() - 1


def padded(extent: int) -> int:
    """The power of two a dimension of this extent is padded to."""
    return 1 << max(0, extent - 1).bit_length()


def _unit(rank: int, dim: int, value: int) -> Basis:
    return tuple(value if d == dim else 0 for d in range(rank))


def _xor(a: Basis, b: Basis) -> Basis:
    return tuple(x ^ y for x, y in zip(a, b, strict=True))


class _Echelon:
    """Gaussian elimination over GF(2) on packed vectors, remembering each pivot's
    combination of input vectors (a bit mask over their positions)."""

    def __init__(self) -> None:
        self.pivots: dict[int, tuple[int, int]] = {}

    def add(self, vector: int, position: int) -> bool:
        """Add input vector number `position`; False when it depends on earlier ones."""
        mask = 1 << position
        while vector:
            top = vector.bit_length() - 1
            if top not in self.pivots:
                self.pivots[top] = (vector, mask)
                return True
            pivot, pivot_mask = self.pivots[top]
            vector, mask = vector ^ pivot, mask ^ pivot_mask
        return False

    def solve(self, target: int) -> int | None:
        """The input mask whose XOR is `target` (dependent inputs unused), None if none."""
        mask = 0
        while target:
            top = target.bit_length() - 1
            if top not in self.pivots:
                return None
            pivot, pivot_mask = self.pivots[top]
            target, mask = target ^ pivot, mask ^ pivot_mask
        return mask


@dataclass(frozen=True)
class LinearLayout:
    """A fragment layout: tile shape plus one basis vector per register, lane and warp bit.

    `register[i]` is the coordinate register 2^i holds in thread 0; `lane[j]` / `warp[k]` the
    coordinate shift of lane 2^j / warp 2^k. Build one with the constructors below
    (`blocked`, `tilec.compiler.layouts.nvidia`), or parse the attribute's text.
    """

    shape: tuple[int, ...]
    register: tuple[Basis, ...]
    lane: tuple[Basis, ...]
    warp: tuple[Basis, ...]

    def __post_init__(self) -> None:
        for name in INPUTS:
            for vector in getattr(self, name):
                if len(vector) != self.rank:
                    raise LayoutError(f"{name} basis {list(vector)} has {len(vector)} "
                                      f"coordinates for a rank-{self.rank} tile")
                for extent, coordinate in zip(self.padded_shape, vector, strict=True):
                    if not 0 <= coordinate < extent:
                        raise LayoutError(f"{name} basis {list(vector)} leaves the tile "
                                          f"{list(self.shape)} (padded to "
                                          f"{list(self.padded_shape)})")
        if any(extent < 1 for extent in self.shape):
            raise LayoutError(f"tile shape {list(self.shape)} has an empty dimension")

    # ----- sizes ------------------------------------------------------------------------
    @property
    def rank(self) -> int:
        return len(self.shape)

    @cached_property
    def padded_shape(self) -> tuple[int, ...]:
        return tuple(padded(extent) for extent in self.shape)

    @property
    def num_registers(self) -> int:
        """Registers per thread (masked ones included)."""
        return 1 << len(self.register)

    @property
    def lanes(self) -> int:
        return 1 << len(self.lane)

    @property
    def warps(self) -> int:
        return 1 << len(self.warp)

    @property
    def threads(self) -> int:
        return self.lanes * self.warps

    @property
    def thread_bases(self) -> tuple[Basis, ...]:
        """Basis vectors of the thread id's bits (lanes first, then warps)."""
        return self.lane + self.warp

    # ----- the map ----------------------------------------------------------------------
    def _combine(self, bases: tuple[Basis, ...], value: int) -> Basis:
        result = (0,) * self.rank
        for bit, vector in enumerate(bases):
            if value >> bit & 1:
                result = _xor(result, vector)
        return result

    def register_coordinate(self, register: int) -> Basis:
        """The coordinate register `register` holds in thread 0."""
        return self._combine(self.register, register)

    def thread_coordinate(self, thread: int) -> Basis:
        """The coordinate shift of thread id `thread` (lane bits low, warp bits high)."""
        return self._combine(self.thread_bases, thread)

    def apply(self, register: int = 0, lane: int = 0, warp: int = 0) -> Basis:
        """The tile coordinate of (register, lane, warp) (may lie in the padding)."""
        thread = lane | warp << len(self.lane)
        return _xor(self.register_coordinate(register), self.thread_coordinate(thread))

    def in_tile(self, coordinate: Basis) -> bool:
        return all(c < extent for c, extent in zip(coordinate, self.shape, strict=True))

    @cached_property
    def _shifts(self) -> tuple[int, ...]:
        """Where each dimension's bits start in a packed coordinate."""
        shifts, total = [], 0
        for extent in self.padded_shape:
            shifts.append(total)
            total += log2(extent)
        return tuple(shifts)

    def _pack(self, coordinate: Basis) -> int:
        packed = 0
        for shift, value in zip(self._shifts, coordinate, strict=True):
            packed |= value << shift
        return packed

    def _inputs(self) -> list[int]:
        return [self._pack(v) for v in self.register + self.lane + self.warp]

    @cached_property
    def _echelon(self) -> _Echelon:
        echelon = _Echelon()
        for position, vector in enumerate(self._inputs()):
            echelon.add(vector, position)
        return echelon

    def _split(self, mask: int) -> tuple[int, int, int]:
        registers, lanes = len(self.register), len(self.lane)
        return (mask & (self.num_registers - 1), mask >> registers & (self.lanes - 1),
                mask >> (registers + lanes))

    def locate(self, coordinate: Basis) -> tuple[int, int, int] | None:
        """(register, lane, warp) of the canonical holder of `coordinate` (the lowest bits
        among its copies), or None when no position holds it."""
        if len(coordinate) != self.rank:
            raise LayoutError(f"coordinate {list(coordinate)} for a rank-{self.rank} tile")
        if any(not 0 <= c < e for c, e in zip(coordinate, self.padded_shape, strict=True)):
            return None
        mask = self._echelon.solve(self._pack(coordinate))
        return None if mask is None else self._split(mask)

    def is_injective(self) -> bool:
        """No two positions hold the same coordinate (no broadcast, no masked duplicates)."""
        echelon = _Echelon()
        return all(echelon.add(v, i) for i, v in enumerate(self._inputs()))

    def is_surjective(self) -> bool:
        """Every coordinate of the tile has a holder."""
        return len(self._echelon.pivots) == sum(log2(e) for e in self.padded_shape)

    def inverse(self) -> dict[Basis, tuple[int, int, int]]:
        """coordinate -> (register, lane, warp) for a bijective layout."""
        if not (self.is_injective() and self.is_surjective()):
            raise LayoutError(f"{self} is not invertible (it broadcasts or leaves elements "
                              "without a holder)")
        table = {}
        for register, thread in product(range(self.num_registers), range(self.threads)):
            table[self.apply(register, thread % self.lanes, thread // self.lanes)] = (
                register, thread % self.lanes, thread // self.lanes)
        return table

    def covers_tile(self) -> bool:
        """Every element inside the tile has a holder (padding may stay unheld)."""
        echelon = self._echelon
        return all(echelon.solve(self._pack(point)) is not None
                   for point in product(*(range(e) for e in self.shape)))

    # ----- ownership ---------------------------------------------------------------------
    @cached_property
    def _thread_coordinates(self) -> frozenset[Basis]:
        return frozenset(self.thread_coordinate(t) for t in range(self.threads))

    def register_mask(self, register: int) -> bool | None:
        """True: the register holds an element of the tile in every thread; False: in none
        (it lies in the padding); None: it depends on the thread (accesses need a guard)."""
        if self.padded_shape == self.shape:
            return True
        base = self.register_coordinate(register)
        inside = {self.in_tile(_xor(base, shift)) for shift in self._thread_coordinates}
        return inside.pop() if len(inside) == 1 else None

    def thread_span(self) -> tuple[int, ...]:
        """Per dimension, the bits any thread's shift may set (OR of the thread bases)."""
        span = [0] * self.rank
        for vector in self.thread_bases:
            for dim, component in enumerate(vector):
                span[dim] |= component
        return tuple(span)

    def live_registers(self) -> list[int]:
        """Registers that hold an element in at least one thread, in register order."""
        return [r for r in range(self.num_registers) if self.register_mask(r) is not False]

    def replicated_thread_bits(self) -> list[int]:
        """Thread-id bits whose basis adds nothing new (its threads repeat others' elements).
        The canonical copy of each element is held by the thread with these bits clear."""
        echelon = _Echelon()
        for position, vector in enumerate(self.register):
            echelon.add(self._pack(vector), position)
        return [bit for bit, vector in enumerate(self.thread_bases)
                if not echelon.add(self._pack(vector), len(self.register) + bit)]

    @property
    def replicated(self) -> bool:
        """Several threads hold each element (side effects then need one owner)."""
        return bool(self.replicated_thread_bits())

    def holds_whole_tile(self) -> bool:
        """Every thread holds every element, register r the element at row-major position r
        of the padded tile (the layout `whole_tile` builds): any element, at an index known
        only at run time, is in the thread's own registers."""
        return self == whole_tile(self.shape, self.threads, self.lanes)

    # ----- derived layouts ----------------------------------------------------------------
    def slice(self, dim: int) -> LinearLayout:
        """The layout of what a reduction over `dim` leaves: `dim` removed, threads that moved
        along it now hold copies (zero bases), registers that moved only along it (or repeat
        an earlier register) dropped."""
        if not 0 <= dim < self.rank:
            raise LayoutError(f"dimension {dim} of a rank-{self.rank} tile")
        drop = lambda vector: vector[:dim] + vector[dim + 1:]  # noqa: E731
        shape = drop(self.shape)
        kept: list[Basis] = []
        echelon = _Echelon()
        probe = LinearLayout(shape, (), (), ())
        for vector in self.register:
            if echelon.add(probe._pack(drop(vector)), len(kept)):
                kept.append(drop(vector))
        return LinearLayout(shape, tuple(kept), tuple(drop(v) for v in self.lane),
                            tuple(drop(v) for v in self.warp))

    def slice_registers(self, dim: int) -> list[tuple[int, int]]:
        """(register of this layout, register of slice(dim) holding its reduced element) for
        every register: the registers a thread combines before talking to other threads."""
        target = self.slice(dim)
        table = {target.register_coordinate(r): r for r in range(target.num_registers)}
        result = []
        for register in range(self.num_registers):
            vector = self.register_coordinate(register)
            result.append((register, table[vector[:dim] + vector[dim + 1:]]))
        return result

    def reduction_bits(self, dim: int) -> tuple[list[int], list[int]]:
        """(lane bits, warp bits) whose threads hold other coordinates along `dim`: a
        reduction butterfly-shuffles over those lanes (xor 2^bit) and combines those warps
        through shared memory. Raises when a thread basis moves along `dim` and another
        dimension at once (the partial sums would mix rows)."""
        lanes, warps = [], []
        for kind, bases, out in (("lane", self.lane, lanes), ("warp", self.warp, warps)):
            for bit, vector in enumerate(bases):
                if vector[dim] == 0:
                    continue
                if any(c for d, c in enumerate(vector) if d != dim):
                    raise LayoutError(f"{kind} bit {bit} of {self} moves along dimension {dim} "
                                      "and another one; convert the layout before reducing")
                out.append(bit)
        return lanes, warps

    def extend(self, dims: list[int], shape: tuple[int, ...]) -> LinearLayout:
        """A layout over `shape` whose dimensions `dims` follow this one (dimension i of this
        layout is dimension dims[i] there); every thread walks the other dimensions whole,
        in registers above this layout's."""
        if len(dims) != self.rank or len(set(dims)) != len(dims):
            raise LayoutError(f"extend: {dims} does not name each of {self.rank} dimensions")
        if any(shape[d] != e for d, e in zip(dims, self.shape, strict=True)):
            raise LayoutError(f"extend: {list(self.shape)} does not fit dimensions {dims} of "
                              f"{list(shape)}")
        rank = len(shape)

        def place(vector: Basis) -> Basis:
            out = [0] * rank
            for source, d in enumerate(dims):
                out[d] = vector[source]
            return tuple(out)

        registers = [place(v) for v in self.register]
        for d in reversed(range(rank)):
            if d not in dims:
                registers += [_unit(rank, d, 1 << i) for i in range(log2(padded(shape[d])))]
        return LinearLayout(tuple(shape), tuple(registers), tuple(place(v) for v in self.lane),
                            tuple(place(v) for v in self.warp))

    def select(self, dims: list[int]) -> LinearLayout:
        """The layout of a fragment indexed by dimensions `dims` of this one (the others are
        walked by the registers and threads that move along them: dropped, as in `slice`)."""
        result = self
        for d in sorted(set(range(self.rank)) - set(dims), reverse=True):
            result = result.slice(d)
        order = sorted(dims)
        if order != list(dims):
            result = result.transpose([order.index(d) for d in dims])
        return result

    def transpose(self, order: list[int]) -> LinearLayout:
        """Dimension i of the result is dimension order[i] of this layout."""
        pick = lambda vector: tuple(vector[d] for d in order)  # noqa: E731
        return LinearLayout(pick(self.shape), tuple(map(pick, self.register)),
                            tuple(map(pick, self.lane)), tuple(map(pick, self.warp)))

    def contiguous_registers(self, dim: int | None = None) -> int:
        """How many consecutive registers hold consecutive elements along `dim` (the last
        dimension by default), starting at register 0: the widest vector access a thread can
        make; 1 when register 1 is not the next element."""
        dim = self.rank - 1 if dim is None else dim
        width = 1
        for vector in self.register:
            if vector != _unit(self.rank, dim, width):
                break
            width *= 2
        return width

    def register_permutation(self, target: LinearLayout) -> list[int] | None:
        """For each register of `target`, the register of this layout that holds the same
        element in the same thread; None when some element would have to change threads
        (then a conversion goes through shuffles or shared memory)."""
        if self.shape != target.shape or len(self.lane) != len(target.lane) or len(
                self.warp) != len(target.warp):
            return None
        if self.thread_bases != target.thread_bases:
            return None
        table = {self.register_coordinate(r): r for r in range(self.num_registers)}
        result = []
        for register in range(target.num_registers):
            found = table.get(target.register_coordinate(register))
            if found is None:
                return None
            result.append(found)
        return result

    def conversion(self, target: LinearLayout) -> str:
        """How data in this layout reaches `target`: "none" (equal), "registers" (a renaming
        inside each thread) or "shared" (elements change threads)."""
        if self == target:
            return "none"
        return "registers" if self.register_permutation(target) is not None else "shared"

    @classmethod
    def from_holders(cls, shape: tuple[int, ...], holders: dict[tuple[int, int], Basis],
                     threads: int, warp_size: int = 32) -> LinearLayout:
        """The linear layout of an explicit table (register, thread) -> coordinate (what a
        TileLang T.Fragment's functions give), over `threads` threads; LayoutError when the
        table is not linear: the bases are read at the powers of two and every entry, and
        every position they predict inside the tile, must agree."""
        rank = len(shape)
        registers = max((r for r, _ in holders), default=0) + 1
        used_threads = max((t for _, t in holders), default=0) + 1
        if used_threads > threads:
            raise LayoutError(f"the layout uses {used_threads} threads, the block has {threads}")
        zero = (0,) * rank

        def basis(register: int, thread: int, what: str) -> Basis:
            found = holders.get((register, thread), zero if (register, thread) != (0, 0)
                                else None)
            if found is None:
                raise LayoutError(f"{what} holds no element")
            return found

        origin = basis(0, 0, "register 0 of thread 0")
        if origin != zero:
            raise LayoutError(f"register 0 of thread 0 holds {list(origin)}, not the origin: "
                              "the layout is not linear")
        register = tuple(basis(1 << i, 0, f"register {1 << i} of thread 0")
                         for i in range(log2(padded(registers))))
        thread = tuple(holders.get((0, 1 << j), zero) for j in range(log2(threads)))
        lanes = min(log2(threads), log2(warp_size))
        try:
            layout = cls(tuple(shape), register, thread[:lanes], thread[lanes:])
        except LayoutError as error:
            raise LayoutError(f"the layout is not linear ({error})") from None
        for (r, t), point in holders.items():
            if layout.apply(r, t % layout.lanes, t // layout.lanes) != tuple(point):
                raise LayoutError(f"register {r} of thread {t} holds {list(point)}, but the "
                                  "layout read off its powers of two puts "
                                  f"{list(layout.apply(r, t % layout.lanes, t // layout.lanes))}"
                                  " there: it is not linear over GF(2)")
        for r, t in product(range(layout.num_registers), range(threads)):
            point = layout.apply(r, t % layout.lanes, t // layout.lanes)
            if (r, t) not in holders and layout.in_tile(point) and t < used_threads:
                raise LayoutError(f"register {r} of thread {t} would hold {list(point)}, which "
                                  "the layout puts elsewhere: it is not linear over GF(2)")
        return layout

    # ----- text -------------------------------------------------------------------------
    def __str__(self) -> str:
        """The dialect attribute's text: #tile.linear<[shape], register = ..., ...>."""
        def bases(vectors: tuple[Basis, ...]) -> str:
            return "[" + ", ".join("[" + ", ".join(map(str, v)) + "]" for v in vectors) + "]"

        return (f"#tile.linear<[{', '.join(map(str, self.shape))}], register = "
                f"{bases(self.register)}, lane = {bases(self.lane)}, warp = "
                f"{bases(self.warp)}>")

    @classmethod
    def parse(cls, text: str) -> LinearLayout:
        """Read the text `str` writes (also what the MLIR attribute prints)."""
        match = _TEXT.fullmatch(text.strip())
        if match is None:
            raise LayoutError(f"not a #tile.linear layout: {text!r}")

        def numbers(body: str) -> tuple[int, ...]:
            return tuple(int(x) for x in body.replace(" ", "").split(",") if x)

        def bases(body: str) -> tuple[Basis, ...]:
            return tuple(numbers(inner) for inner in re.findall(r"\[([^\[\]]*)\]",
                                                                body.strip()[1:-1]))

        return cls(numbers(match["shape"]), bases(match["register"]), bases(match["lane"]),
                   bases(match["warp"]))


_LIST = r"\[(?:\s*\[[^\[\]]*\]\s*,?)*\s*\]"
_TEXT = re.compile(
    r"#tile\.linear<\s*\[(?P<shape>[^\]]*)\]\s*,\s*register\s*=\s*(?P<register>" + _LIST
    + r")\s*,\s*lane\s*=\s*(?P<lane>" + _LIST + r")\s*,\s*warp\s*=\s*(?P<warp>" + _LIST
    + r")\s*>")


def blocked(shape: tuple[int, ...], size_per_thread: tuple[int, ...],
            threads_per_dim: tuple[int, ...], thread_stride: tuple[int, ...], threads: int,
            warp_size: int = 32) -> LinearLayout:
    """Triton's blocked encoding as a linear layout: along dimension d a thread holds runs of
    size_per_thread[d] consecutive elements, threads_per_dim[d] threads (thread id stride
    thread_stride[d]) sit side by side, and the pattern repeats over the (padded) extent.
    Registers are numbered row-major over the dimensions (the last dimension's run lowest).
    Every size, count and stride must be a power of two."""
    rank = len(shape)
    for name, values in (("size_per_thread", size_per_thread),
                         ("threads_per_dim", threads_per_dim), ("thread_stride", thread_stride)):
        if len(values) != rank or not all(is_power_of_two(v) for v in values):
            raise LayoutError(f"blocked layout: {name} {list(values)} must give a power of two "
                              f"per dimension of {list(shape)}")
    thread_bits = log2(threads)
    registers: list[Basis] = []
    for d in reversed(range(rank)):
        run, width = size_per_thread[d], size_per_thread[d] * threads_per_dim[d]
        if padded(shape[d]) % width:
            raise LayoutError(f"blocked layout: {run} x {threads_per_dim[d]} threads exceed "
                              f"dimension {d} of {list(shape)}")
        registers += [_unit(rank, d, 1 << i) for i in range(log2(run))]
        registers += [_unit(rank, d, width << i) for i in range(log2(padded(shape[d]) // width))]
    thread: list[Basis] = []
    for bit in range(thread_bits):
        vector = (0,) * rank
        for d in range(rank):
            low = log2(thread_stride[d])
            if low <= bit < low + log2(threads_per_dim[d]):
                vector = _unit(rank, d, size_per_thread[d] << (bit - low))
        thread.append(vector)
    lanes = min(thread_bits, log2(warp_size))
    return LinearLayout(tuple(shape), tuple(registers), tuple(thread[:lanes]),
                        tuple(thread[lanes:]))


def whole_tile(shape: tuple[int, ...], threads: int, warp_size: int = 32) -> LinearLayout:
    """Every thread holds the whole (padded) tile, register r at its row-major position r:
    the layout of a fragment read or written outside T.Parallel, where the whole block runs
    one statement and each thread needs its own copy of every element (TileLang's fully
    replicated fragment)."""
    rank = len(shape)
    registers = [_unit(rank, d, 1 << i) for d in reversed(range(rank))
                 for i in range(log2(padded(shape[d])))]
    thread_bits = log2(threads)
    lanes = min(thread_bits, log2(warp_size))
    zero = (0,) * rank
    return LinearLayout(tuple(shape), tuple(registers), (zero,) * lanes,
                        (zero,) * (thread_bits - lanes))
