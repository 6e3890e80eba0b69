"""The current GPU's figures as the CUDA runtime reports them (through torch), by device index.

TileLang's `carver.arch.driver` functions, which examples call to size persistent grids
(`driver.get_num_sms()`). Without a CUDA device each raises a TilecError.
"""

from __future__ import annotations

from typing import Any

from tilec.errors import TilecError


def get_cuda_device_properties(device_id: int = 0) -> Any:
    """torch's properties of CUDA device `device_id`."""
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        raise TilecError("tilec.carver.driver: no CUDA device is visible to torch")
    if not 0 <= device_id < torch.cuda.device_count():
        raise TilecError(f"tilec.carver.driver: no CUDA device {device_id} "
                         f"({torch.cuda.device_count()} visible)")
    return torch.cuda.get_device_properties(device_id)


def get_device_name(device_id: int = 0) -> str:
    return get_cuda_device_properties(device_id).name


def get_num_sms(device_id: int = 0) -> int:
    """Streaming multiprocessors of the device (132 on an H100 / H200 SXM, 108 on an A100)."""
    return get_cuda_device_properties(device_id).multi_processor_count


def get_max_dynamic_shared_size_bytes(device_id: int = 0) -> int:
    """The most shared memory one block may opt in to (227 KiB on sm_90, 163 KiB on sm_80)."""
    properties = get_cuda_device_properties(device_id)
    return getattr(properties, "shared_memory_per_block_optin", properties.shared_memory_per_block)


def get_shared_memory_per_block(device_id: int = 0) -> int:
    """Shared memory a block gets without opting in (48 KiB)."""
    return get_cuda_device_properties(device_id).shared_memory_per_block


def get_registers_per_block(device_id: int = 0) -> int:
    """32-bit registers one block may use (65536 on sm_80 and sm_90)."""
    return get_cuda_device_properties(device_id).regs_per_multiprocessor


def get_l2_cache_size_bytes(device_id: int = 0) -> int:
    return get_cuda_device_properties(device_id).L2_cache_size
