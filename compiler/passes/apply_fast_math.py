"""apply-fast-math: let the backends use approximate floating-point math (the user's fast math).

Every arith and math op that carries fast-math flags (addf, mulf, divf, exp, log, sqrt...) gets
`fastmath<arcp,contract,afn>`: contractions into FMAs, approximate functions
(on CUDA the lowering to NVVM then picks libdevice's fast variants: exp becomes one
`ex2.approx`) and division by a reciprocal. These are what nvcc's --use_fast_math allows. The
flags that assume no NaN, no infinity or no signed zero (`nnan`, `ninf`, `nsz`) and
reassociation are left off: kernels start reductions at -inf and mask with it, and a flag
making those values poison would make such a kernel silently wrong. Flags an op already has are
kept. The targets run it before their own passes when the kernel is compiled with
`PassConfigKey.TL_ENABLE_FAST_MATH` (tilec.transform).
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import arith, math  # noqa: F401 - their op classes tell which ops take flags

from tilec.compiler.passes import TilePass, register
from tilec.compiler.passes._ir_walk import walk

FAST_MATH_FLAGS = ("contract", "afn", "arcp")
_DIALECTS = ("arith.", "math.")


def _with_fast_math(flags: ir.Attribute | None) -> ir.Attribute:
    """The fastmath attribute holding `flags` (an #arith.fastmath or None) and ours."""
    present: list[str] = []
    if flags is not None:
        text = str(flags).removeprefix("#arith.fastmath<").removesuffix(">")
        present = [name for name in text.split(",") if name and name != "none"]
    merged = present + [name for name in FAST_MATH_FLAGS if name not in present]
    return ir.Attribute.parse(f"#arith.fastmath<{','.join(merged)}>")


def _takes_fast_math(op: ir.Operation) -> bool:
    """An arith/math op whose definition has a `fastmath` attribute (floating-point ops)."""
    return op.name.startswith(_DIALECTS) and hasattr(type(op.opview), "fastmath")


@register
@dataclass
class ApplyFastMath(TilePass):
    """Mark floating-point arith/math ops with the fast-math flags of --use_fast_math."""

    name = "apply-fast-math"
    summary = "arith/math float ops -> fastmath<arcp,contract,afn>"

    def run(self, module: ir.Module) -> None:
        for op in walk(module.operation):
            if _takes_fast_math(op):
                current = op.attributes["fastmath"] if "fastmath" in op.attributes else None
                op.attributes["fastmath"] = _with_fast_math(current)
