"""TMA tensor maps (CUtensorMap) for the tensor-core GEMM kernels, built with the CUDA driver.

No MLIR here: a GPU machine without the compiler imports this. The kernels take each map as a
pointer to its 128 bytes in global memory; `GemmTensorMaps` encodes the three maps (A, B, C) of
one call into one small device buffer and keeps it alive.

Launch metadata emitted by the lower-gemm-to-tensorcore pass (module attribute
`tile.tensorcore`, JSON): {"arch", "abi", "threads", "shared_bytes", "block", "persistent",
"tma": {"A": {"box": [bk, bm], "swizzle": 128}, "B": ..., "C": ...}, "grid"?, "config"}.
An abi slot ["tma", p, role] is filled with `tensor_map_pointer(args[p], launch["tma"][role])`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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


def encode_2d(
    address: int,
    dtype: str,
    rows: int,
    cols: int,
    row_stride_elems: int,
    box: list[int],
    swizzle: int,
) -> bytes:
    """The 128-byte map of a row-major [rows, cols] tensor; box is (inner, outer) elements.

    Out-of-bounds loads are zero-filled and out-of-bounds stores clipped, which is how the
    kernels handle ragged M, N and K. The row stride must be a multiple of 16 bytes.
    """
    driver = _driver()
    elem = _DTYPE_BYTES[dtype]
    if (row_stride_elems * elem) % 16 or address % 16:
        raise ValueError("TMA needs 16-byte aligned rows and base address")
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
            2,
            address,
            [driver.cuuint64_t(cols), driver.cuuint64_t(rows)],
            [driver.cuuint64_t(row_stride_elems * elem)],
            [driver.cuuint32_t(box[0]), driver.cuuint32_t(box[1])],
            [driver.cuuint32_t(1), driver.cuuint32_t(1)],
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
    """Device address of the CUtensorMap of a 2-d row-major torch tensor for one kernel operand.

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
        if tensor.dim() != 2 or tensor.stride(1) != 1:
            raise ValueError("TMA operands must be 2-d with contiguous rows")
        dtype = str(tensor.dtype).removeprefix("torch.")
        rows, cols = tensor.shape
        blob = encode_2d(
            tensor.data_ptr(), dtype, rows, cols, tensor.stride(0), spec["box"], spec["swizzle"]
        )
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
        rows, cols = tensor.shape
        dtype = str(tensor.dtype).removeprefix("torch.")
        spec = tma[role]
        blobs.append(
            encode_2d(
                tensor.data_ptr(), dtype, rows, cols, tensor.stride(0), spec["box"], spec["swizzle"]
            )
        )
    host = torch.frombuffer(bytearray(b"".join(blobs)), dtype=torch.uint8)
    buffer = host.to(a.device, non_blocking=False)
    base = buffer.data_ptr()
    return GemmTensorMaps(buffer, (base, base + 128, base + 256))
