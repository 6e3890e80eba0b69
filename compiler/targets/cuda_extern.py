"""CUDA C/C++ device functions of T.import_source, compiled and linked with a kernel that calls
them with T.call_extern (python/tilec/frontend/extern_ops.py builds the calls).

The kernel's PTX declares each callee as `.extern .func tilec_extern_<n>_<name>`: a shim with C
linkage taking and returning 32/64-bit words and generic pointers. This module writes the
translation unit (the user's sources, then one shim per declaration, which converts its words
to the argument types the kernel's buffers and values have and calls the user's function, so
templates and overloads resolve as in TileLang's generated CUDA), compiles it to relocatable PTX
with nvcc, assembles both PTX modules with `ptxas -c` and links them with nvlink into one cubin:
the artifact carries it, so a GPU machine without the toolkit runs it (AOT).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from mlir import ir

from tilec.compiler.passes._extern import EXTERN_ATTR, SOURCES_ATTR
from tilec.compiler.passes._ir_walk import LOCATION, walk
from tilec.errors import CompileError
from tilec.language import DType, dtype

# the C++ type of a buffer element or value of each dtype
_C_TYPES = {
    "float16": "half", "bfloat16": "__nv_bfloat16", "float32": "float", "float64": "double",
    "float8_e4m3": "__nv_fp8_e4m3", "float8_e4m3fn": "__nv_fp8_e4m3",
    "float8_e5m2": "__nv_fp8_e5m2", "tfloat32": "float", "bool": "bool",
    "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
}

_PRELUDE = """\
#include <cstdint>
#include <cstring>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
"""

_SHIM_HELPERS = """
// tilec's shims: the kernel passes values as 32/64-bit words (16-bit floats and fp8 as bits)
template <typename T> __device__ __forceinline__ T tilec_from_bits(uint32_t word) {
  T value;
  memcpy(&value, &word, sizeof(T));
  return value;
}
template <typename T> __device__ __forceinline__ uint32_t tilec_to_bits(T value) {
  uint32_t word = 0;
  memcpy(&word, &value, sizeof(T));
  return word;
}
"""


@dataclass(frozen=True)
class ExternFunction:
    """One declared shim: its symbol, the user's function it calls, the dtype of each argument
    ("int8*": a pointer to int8s) and of the result ("void": the value is not used)."""

    symbol: str
    name: str
    args: tuple[str, ...]
    result: str
    filename: str | None
    line: int | None


@dataclass(frozen=True)
class ExternUnit:
    sources: tuple[str, ...]
    functions: tuple[ExternFunction, ...]

    def error(self, message: str) -> CompileError:
        """A CompileError at the first T.call_extern of the kernel."""
        first = self.functions[0]
        return CompileError(message, first.filename, first.line)


def extern_unit(module: ir.Module) -> ExternUnit | None:
    """The extern sources and callees of `module`, None when it calls none."""
    functions = []
    for op in walk(module.operation):
        if op.name != "llvm.func" or EXTERN_ATTR not in op.attributes:
            continue
        signature = ir.DictAttr(op.attributes[EXTERN_ATTR])
        found = LOCATION.search(str(op.location))
        functions.append(ExternFunction(
            symbol=ir.StringAttr(op.attributes["sym_name"]).value,
            name=ir.StringAttr(signature["name"]).value,
            args=tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(signature["args"])),
            result=ir.StringAttr(signature["result"]).value,
            filename=found.group(1) if found else None,
            line=int(found.group(2)) if found else None,
        ))
    if not functions:
        return None
    attributes = module.operation.attributes
    sources = (tuple(ir.StringAttr(s).value for s in ir.ArrayAttr(attributes[SOURCES_ATTR]))
               if SOURCES_ATTR in attributes else ())
    unit = ExternUnit(sources, tuple(sorted(functions, key=lambda f: f.symbol)))
    if not sources:
        raise unit.error(f"T.call_extern calls {unit.functions[0].name}(), but the kernel "
                         "imports no source: add T.import_source(cuda_source) in the kernel")
    return unit


def _word_type(kind: DType) -> str:
    """The C type of the word a value of `kind` crosses the call as (extern_ops.extern_word)."""
    if kind.is_float and kind.bits >= 32:
        return _C_TYPES[kind.name]
    if kind.bits == 64:
        return "uint64_t" if kind.is_unsigned else "int64_t"
    return "uint32_t" if kind.is_unsigned or kind.is_float else "int32_t"


def _from_word(kind: DType, word: str) -> str:
    if kind.is_float and kind.bits < 32:
        return f"tilec_from_bits<{_C_TYPES[kind.name]}>({word})"
    return f"static_cast<{_C_TYPES[kind.name]}>({word})"


def _to_word(kind: DType, value: str) -> str:
    if kind.is_float and kind.bits < 32:
        return f"tilec_to_bits<{_C_TYPES[kind.name]}>(static_cast<{_C_TYPES[kind.name]}>({value}))"
    return f"static_cast<{_word_type(kind)}>(static_cast<{_C_TYPES[kind.name]}>({value}))"


def shim(function: ExternFunction) -> str:
    """The C-linkage function the kernel calls for `function`."""
    params, args = [], []
    for number, kind in enumerate(function.args):
        if kind.endswith("*"):
            params.append(f"void *a{number}")
            args.append(f"static_cast<{_C_TYPES[dtype(kind[:-1]).name]} *>(a{number})")
        else:
            params.append(f"{_word_type(dtype(kind))} a{number}")
            args.append(_from_word(dtype(kind), f"a{number}"))
    call = f"{function.name}({', '.join(args)})"
    if function.result == "void":
        result, body = "void", f"{call};"
    else:
        result, body = _word_type(dtype(function.result)), \
            f"return {_to_word(dtype(function.result), call)};"
    return (f'extern "C" __device__ {result} {function.symbol}({", ".join(params)}) '
            f"{{\n  {body}\n}}\n")


def translation_unit(unit: ExternUnit) -> str:
    """The CUDA C++ file: the headers the sources expect, the sources, the shims."""
    parts = [_PRELUDE, *unit.sources, _SHIM_HELPERS, *(shim(f) for f in unit.functions)]
    return "\n".join(parts)


def cuda_tool(name: str) -> str | None:
    """A CUDA toolkit program: on PATH, else in $CUDA_HOME/bin or /usr/local/cuda/bin."""
    found = shutil.which(name)
    if found:
        return found
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and os.path.exists(os.path.join(home, "bin", name)):
            return os.path.join(home, "bin", name)
    return None


def _tools(unit: ExternUnit) -> dict[str, str]:
    tools = {name: cuda_tool(name) for name in ("nvcc", "ptxas", "nvlink")}
    missing = [name for name, path in tools.items() if path is None]
    if missing:
        raise unit.error(f"T.call_extern needs the CUDA toolkit's {', '.join(missing)} to "
                         "compile the T.import_source code and link it with the kernel (put "
                         "them on PATH or set CUDA_HOME)")
    return tools  # type: ignore[return-value]


def _run(command: list[str], unit: ExternUnit, what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise unit.error(f"{what} failed ({os.path.basename(command[0])}):\n"
                         f"{result.stderr.strip() or result.stdout.strip()}")


def compile_extern(unit: ExternUnit, chip: str) -> str:
    """The unit's relocatable PTX (nvcc -rdc=true -ptx for `chip`)."""
    tools = _tools(unit)
    with tempfile.TemporaryDirectory(prefix="tilec-extern-") as folder:
        source, output = os.path.join(folder, "extern.cu"), os.path.join(folder, "extern.ptx")
        with open(source, "w") as file:
            file.write(translation_unit(unit))
        _run([tools["nvcc"], f"-arch={chip}", "-rdc=true", "-ptx", "-O3", "-std=c++17",
              source, "-o", output], unit, "compiling the T.import_source code")
        with open(output) as file:
            return file.read()


def link(kernel_ptx: str, extern_ptx: str, unit: ExternUnit, chip: str) -> bytes:
    """One cubin of the kernel and its extern functions: ptxas -c each, then nvlink."""
    tools = _tools(unit)
    with tempfile.TemporaryDirectory(prefix="tilec-link-") as folder:
        objects = []
        for name, text in (("kernel", kernel_ptx), ("extern", extern_ptx)):
            ptx, obj = os.path.join(folder, f"{name}.ptx"), os.path.join(folder, f"{name}.o")
            with open(ptx, "w") as file:
                file.write(text)
            _run([tools["ptxas"], "-c", f"-arch={chip}", "-O3", ptx, "-o", obj], unit,
                 f"assembling the {name} PTX")
            objects.append(obj)
        output = os.path.join(folder, "linked.cubin")
        _run([tools["nvlink"], f"-arch={chip}", *objects, "-o", output], unit,
             "linking the kernel with its T.import_source code")
        with open(output, "rb") as file:
            return file.read()

