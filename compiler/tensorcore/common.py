"""What the sm_80 (ampere) and sm_90a (hopper) generators share, so both read one definition:
the configs' type/layout/byte-size properties, the kernels' default interface, the store of an
output pair to shared memory and the gpu.module text around the kernel body."""

from __future__ import annotations

from tilec.compiler.tensorcore.dtypes import OPERAND_BYTES, OUTPUT_BYTES, default_output
from tilec.compiler.tensorcore.emitter import Emitter, KernelInterface


class GemmConfigBase:
    """Properties derived from the fields both frozen config dataclasses declare."""

    block_m: int
    block_n: int
    block_k: int
    dtype: str
    out_dtype: str
    trans_a: bool
    trans_b: bool

    @property
    def out(self) -> str:
        return self.out_dtype or default_output(self.dtype)

    @property
    def layout(self) -> str:
        """T.gemm's flags as two letters: n = as stored by default, t = transposed."""
        return ("t" if self.trans_a else "n") + ("t" if self.trans_b else "n")

    @property
    def types_and_layout(self) -> str:
        """The kernel name's type and layout part: `f16`, `e4m3_bf16_nt`, ..."""
        types = self.dtype if self.out == self.dtype else f"{self.dtype}_{self.out}"
        layout = "" if self.layout == "nn" else f"_{self.layout}"
        return types + layout

    @property
    def elem_bytes(self) -> int:
        return OPERAND_BYTES[self.dtype]

    @property
    def out_bytes(self) -> int:
        return OUTPUT_BYTES[self.out]

    @property
    def k_bytes(self) -> int:
        return self.block_k * self.elem_bytes

    @property
    def a_stage_bytes(self) -> int:
        return self.block_m * self.k_bytes

    @property
    def b_stage_bytes(self) -> int:
        return self.block_n * self.k_bytes

    def block_launch(self, threads: int, shared_bytes: int) -> dict:
        """The launch metadata keys both kernels have, in the order the runtime records them."""
        return {
            "threads": [threads, 1, 1],
            "shared_bytes": shared_bytes,
            "block": [self.block_m, self.block_n, self.block_k],
        }


def gemm_interface(name: str, pointers: tuple[str, str, str]) -> KernelInterface:
    """Three `!llvm.ptr` parameters (A, B, C in the generator's names), then M, N, K as i32."""
    params = [(pointer, "!llvm.ptr") for pointer in pointers]
    return KernelInterface(name, params + [("%M", "i32"), ("%N", "i32"), ("%K", "i32")])


def store_output_pair(
    e: Emitter, out: str, acc_elem: str, address: str, imm: int, lo: str, hi: str
) -> None:
    """Two adjacent outputs to shared memory: packed 16-bit pair, or two 32-bit words."""
    if out in ("f16", "bf16"):
        e.asm(
            f"{{ .reg .b32 h; cvt.rn.{out}x2.f32 h, $2, $1; st.shared.b32 [$0+{imm}], h; }}",
            "r,f,f",
            [(address, "i32"), (lo, "f32"), (hi, "f32")],
        )
        return
    kind, constraint = ("b32", "r") if acc_elem == "i32" else ("f32", "f")
    e.asm(
        f"st.shared.v2.{kind} [$0+{imm}], {{$1, $2}};",
        f"r,{constraint},{constraint}",
        [(address, "i32"), (lo, acc_elem), (hi, acc_elem)],
    )


def gpu_module(interface: KernelInterface, attributes: list[str], e: Emitter) -> str:
    """The module text: one gpu.module holding the kernel `e` wrote, with these attributes."""
    return (
        "module attributes {gpu.container_module} {\n"
        "  gpu.module @kernels {\n"
        f"    gpu.func @{interface.name}({interface.signature()}) kernel "
        f"attributes {{{', '.join(attributes)}}} {{\n"
        f"{e.body(interface.prologue)}\n"
        "      gpu.return\n"
        "    }\n"
        "  }\n"
        "}\n"
    )
