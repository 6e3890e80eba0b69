"""TMA tensor maps (CUtensorMap) for the tensor-core kernels, built with the CUDA driver.

No MLIR here: a GPU machine without the compiler imports this. The kernels take each map as a
pointer to its 128 bytes in global memory; `GemmTensorMaps` encodes the three maps (A, B, C) of
one call into one small device buffer and keeps it alive. Kernels whose T.Pipelined loop
plan-tma-pipelines fed by TMA take one map per copy of the loop (launch["tma"]["mapN"]: the
box of one 128-byte column of the tile, over the tensor's own rank).

Launch metadata emitted by the lower-gemm-to-tensorcore pass (module attribute
`tile.tensorcore`, JSON): {"arch", "abi", "threads", "shared_bytes", "block", "persistent",
"tma": {"A": {"box": [bk, bm], "swizzle": 128}, "B": ..., "C": ...}, "grid"?, "config"}.
An abi slot ["tma", p, role] is filled with `tensor_map_pointer(args[p], launch["tma"][role])`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tilec.errors import LaunchError

_DTYPE_BYTES = {
    "float16": 2,
    "bfloat16": 2,
    "float32": 4,
    "int32": 4,
    "int8": 1,
    "uint8": 1,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}


def _driver() -> Any:
    try:
        from cuda.bindings import driver
    except ImportError:  # older cuda-python layout
        from cuda import cuda as driver
    return driver


def check(result: Any) -> Any:
    """Unwrap a cuda-bindings (err, value...) tuple, raising on an error code."""
    driver = _driver()
    result = result if isinstance(result, tuple) else (result,)
    if result[0] != driver.CUresult.CUDA_SUCCESS:
        message = driver.cuGetErrorString(result[0])[1]
        raise RuntimeError(f"CUDA driver call failed: {result[0]!r}: {message}")
    if len(result) == 1:
        return None
    return result[1] if len(result) == 2 else result[1:]


def encode(
    address: int,
    dtype: str,
    shape: list[int],
    strides: list[int],
    box: list[int],
    swizzle: int,
) -> bytes:
    """The 128-byte map of a tensor of `shape` (outermost first) whose dimensions lie
    `strides` elements apart (the last one 1); box is in elements, innermost first.

    Out-of-bounds loads are zero-filled and out-of-bounds stores clipped, which is how the
    kernels handle ragged M, N and K. Every stride but the last must be a multiple of 16 bytes.
    """
    driver = _driver()
    elem = _DTYPE_BYTES[dtype]
    rank = len(shape)
    if strides[-1] != 1 or any((stride * elem) % 16 for stride in strides[:-1]) or address % 16:
        raise LaunchError(f"TMA needs a 16-byte aligned base address and rows of a multiple of "
                          f"16 bytes; this {dtype} tensor of shape {list(shape)} with strides "
                          f"{list(strides)} has neither (pad its last dimension)")
    kinds = driver.CUtensorMapDataType
    if elem == 1:  # TMA only moves bytes: fp8 and int8 travel as uint8 (zero fill = +0.0 / 0)
        data_type = kinds.CU_TENSOR_MAP_DATA_TYPE_UINT8
    else:
        data_type = {
            "float16": kinds.CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            "bfloat16": kinds.CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            "float32": kinds.CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            "int32": kinds.CU_TENSOR_MAP_DATA_TYPE_INT32,
        }[dtype]
    swizzle_mode = {
        0: driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
        32: driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_32B,
        64: driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B,
        128: driver.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
    }[swizzle]
    tensor_map = check(
        driver.cuTensorMapEncodeTiled(
            data_type,
            rank,
            address,
            [driver.cuuint64_t(extent) for extent in reversed(shape)],
            [driver.cuuint64_t(stride * elem) for stride in reversed(strides[:-1])],
            [driver.cuuint32_t(extent) for extent in box],
            [driver.cuuint32_t(1)] * rank,
            driver.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle_mode,
            driver.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
            driver.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    )
    import ctypes

    return ctypes.string_at(tensor_map.getPtr(), 128)


_MAPS: dict[tuple, Any] = {}  # (address, shape, strides, dtype, box, swizzle) -> device buffer
_MAX_MAPS = 1024


def tensor_map_pointer(tensor: Any, spec: dict) -> int:
    """Device address of the CUtensorMap of a torch tensor (rows contiguous) for one kernel
    operand; spec["box"] has one extent per dimension, innermost first.

    Maps depend only on the address, shape, strides, dtype and box, so they are cached: a launch
    with the same tensors costs a dictionary lookup. The map lives in a 128-byte device buffer
    written on the current stream (ordered before the kernel that reads it).
    """
    import torch

    key = (
        tensor.data_ptr(),
        tuple(tensor.shape),
        tuple(tensor.stride()),
        tensor.dtype,
        tensor.device.index,
        tuple(spec["box"]),
        spec["swizzle"],
    )
    buffer = _MAPS.get(key)
    if buffer is None:
        if len(spec["box"]) != tensor.dim():
            raise LaunchError(f"a TMA map of a {len(spec['box'])}-d box for a "
                              f"{tensor.dim()}-d tensor")
        dtype = str(tensor.dtype).removeprefix("torch.")
        blob = encode(tensor.data_ptr(), dtype, list(tensor.shape), list(tensor.stride()),
                      spec["box"], spec["swizzle"])
        buffer = torch.frombuffer(bytearray(blob), dtype=torch.uint8).to(tensor.device)
        if len(_MAPS) >= _MAX_MAPS:
            _MAPS.pop(next(iter(_MAPS)))
        _MAPS[key] = buffer
    return buffer.data_ptr()


@dataclass
class GemmTensorMaps:
    """The A, B, C maps of one GEMM call, copied to a device buffer (64-byte aligned)."""

    buffer: Any  # torch uint8 tensor on the device, kept alive while the kernel may run
    pointers: tuple[int, int, int]


def gemm_tensor_maps(a: Any, b: Any, c: Any, tma: dict) -> GemmTensorMaps:
    """Maps for C = op(A) @ op(B) (2-d row-major torch tensors, each as stored: A is M x K or
    K x M, B K x N or N x K, as the kernel was compiled) with the kernel's boxes."""
    import torch

    blobs = []
    for tensor, role in ((a, "A"), (b, "B"), (c, "C")):
        dtype = str(tensor.dtype).removeprefix("torch.")
        spec = tma[role]
        blobs.append(encode(tensor.data_ptr(), dtype, list(tensor.shape), list(tensor.stride()),
                            spec["box"], spec["swizzle"]))
    host = torch.frombuffer(bytearray(b"".join(blobs)), dtype=torch.uint8)
    buffer = host.to(a.device, non_blocking=False)
    base = buffer.data_ptr()
    return GemmTensorMaps(buffer, (base, base + 128, base + 256))
