"""Fragment layouts: which thread of a block owns which element of a fragment, in which register.

A layout is "blocked" per dimension, as Triton's blocked encoding: along dimension d a thread
owns runs of `spt[d]` consecutive elements, `tpb[d]` threads side by side cover
`spt[d] * tpb[d]` elements, and the pattern repeats until the extent is covered. The thread's
coordinate along d is `(tid // tstride[d]) % tpb[d]`. Thread-id bits that no dimension uses make
copies: those threads own the same elements (a reduced fragment is replicated this way over the
threads that held the reduced dimension).

Element x_d of a thread with coordinate t_d sits in register r_d where
    x_d = (r_d // spt[d]) * spt[d] * tpb[d] + t_d * spt[d] + r_d % spt[d],
and the registers of all dimensions are numbered row-major. Copies, T.Parallel, reduce and
gemm all read this one mapping, which passes store as the `tile.layout` attribute.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import product

from mlir import ir

LAYOUT_ATTR = "tile.layout"


@dataclass(frozen=True)
class FragmentLayout:
    shape: tuple[int, ...]
    spt: tuple[int, ...]
    tpb: tuple[int, ...]
    tstride: tuple[int, ...]
    threads: int

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def regs_per_dim(self) -> tuple[int, ...]:
        return tuple(extent // tpb for extent, tpb in zip(self.shape, self.tpb, strict=True))

    @property
    def num_regs(self) -> int:
        return math.prod(self.regs_per_dim)

    @property
    def replicated(self) -> bool:
        """True when several threads own each element (so side effects need one owner)."""
        return math.prod(self.tpb) < self.threads

    def register_offsets(self) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        """(register multi-index, x_d minus t_d * spt[d]) for every register, row-major."""
        result = []
        for regs in product(*(range(n) for n in self.regs_per_dim)):
            base = tuple(
                (r // s) * s * t + r % s for r, s, t in zip(regs, self.spt, self.tpb, strict=True)
            )
            result.append((regs, base))
        return result

    def flat_register(self, regs: tuple[int, ...]) -> int:
        flat = 0
        for r, n in zip(regs, self.regs_per_dim, strict=True):
            flat = flat * n + r
        return flat

    def keep_dims(self, dims: list[int]) -> FragmentLayout:
        """The layout of a fragment indexed by dimensions `dims` of this one (a slice)."""
        pick = lambda values: tuple(values[d] for d in dims)  # noqa: E731
        return FragmentLayout(pick(self.shape), pick(self.spt), pick(self.tpb),
                              pick(self.tstride), self.threads)

    def to_attr(self) -> ir.Attribute:
        return ir.DictAttr.get({
            "spt": ir.DenseI64ArrayAttr.get(list(self.spt)),
            "tpb": ir.DenseI64ArrayAttr.get(list(self.tpb)),
            "tstride": ir.DenseI64ArrayAttr.get(list(self.tstride)),
            "threads": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), self.threads),
        })

    @classmethod
    def from_attr(cls, attr: ir.Attribute, shape: tuple[int, ...]) -> FragmentLayout:
        entries = ir.DictAttr(attr)
        get = lambda key: tuple(ir.DenseI64ArrayAttr(entries[key]))  # noqa: E731
        return cls(tuple(shape), get("spt"), get("tpb"), get("tstride"),
                   ir.IntegerAttr(entries["threads"]).value)


def default_layout(shape: tuple[int, ...], threads: int, elem_bytes: int) -> FragmentLayout:
    """Threads side by side along the last dimension, each owning up to 16 bytes there."""
    rank = len(shape)
    spt = [1] * rank
    if rank:
        vec = max(1, min(16 // max(elem_bytes, 1), shape[-1]))
        while shape[-1] % vec:
            vec //= 2
        spt[-1] = vec
    tpb = [1] * rank
    tstride = [1] * rank
    remaining, stride = threads, 1
    for d in reversed(range(rank)):
        used = math.gcd(remaining, shape[d] // spt[d])
        tpb[d], tstride[d] = used, stride
        stride *= used
        remaining //= used
    return FragmentLayout(tuple(shape), tuple(spt), tuple(tpb), tuple(tstride), threads)


def gemm_layout(m: int, n: int, threads: int) -> FragmentLayout:
    """An accumulator layout for the SIMT gemm: each thread owns a near-square block of C."""
    best = None
    for tpb_n in range(1, threads + 1):
        if threads % tpb_n or n % tpb_n or m % (threads // tpb_n):
            continue
        tpb_m = threads // tpb_n
        skew = abs(math.log((m / tpb_m) / (n / tpb_n)))
        key = (round(skew, 6), -tpb_n)
        if best is None or key < best[0]:
            best = (key, tpb_m, tpb_n)
    if best is None:
        return default_layout((m, n), threads, 4)
    _, tpb_m, tpb_n = best
    spt_m = next(s for s in (4, 2, 1) if (m // tpb_m) % s == 0)
    spt_n = next(s for s in (4, 2, 1) if (n // tpb_n) % s == 0)
    return FragmentLayout((m, n), (spt_m, spt_n), (tpb_m, tpb_n), (tpb_n, 1), threads)


def extend_layout(partial: FragmentLayout, dims: list[int], shape: tuple[int, ...]
                  ) -> FragmentLayout:
    """A layout over `shape` whose dimensions `dims` follow `partial`; every thread walks the
    other dimensions whole (so those threads replicate the work)."""
    spt, tpb, tstride = [1] * len(shape), [1] * len(shape), [1] * len(shape)
    for source, d in enumerate(dims):
        spt[d], tpb[d], tstride[d] = partial.spt[source], partial.tpb[source], \
            partial.tstride[source]
    return FragmentLayout(tuple(shape), tuple(spt), tuple(tpb), tuple(tstride), partial.threads)


def layout_of(value: ir.Value) -> FragmentLayout | None:
    """The layout recorded on a fragment's tile.alloc, if any."""
    owner = value.owner
    if not isinstance(owner, ir.Operation) and hasattr(owner, "operation"):
        owner = owner.operation
    if not isinstance(owner, ir.Operation) or LAYOUT_ATTR not in owner.attributes:
        return None
    shape = tuple(ir.MemRefType(value.type).shape)
    return FragmentLayout.from_attr(owner.attributes[LAYOUT_ATTR], shape)
