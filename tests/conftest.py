"""Shared pytest setup: a private kernel cache per test session, and numerics helpers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

import tilec


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests compile into a fresh cache directory, never the user's ~/.cache/tilec."""
    patcher = pytest.MonkeyPatch()
    patcher.setenv("TILEC_CACHE_DIR", str(tmp_path_factory.mktemp("tilec-cache")))
    patcher.delenv("TILEC_DISABLE_CACHE", raising=False)
    yield
    patcher.undo()


SUITE_TARGET_VARIABLE = "TILEC_SUITE_TARGET"


def suite_target() -> str:
    """The target the CPU suite's modules compile for when imported: "cpu", or what
    TILEC_SUITE_TARGET names (tests/test_spirv_cpu_suite.py imports them again for vulkan and
    webgpu; `TILEC_SUITE_TARGET=vulkan pytest tests/test_numerics_cpu.py` runs one)."""
    return os.environ.get(SUITE_TARGET_VARIABLE) or "cpu"


@pytest.fixture
def rng() -> torch.Generator:
    """Fresh random inputs for every test, reproducible from the seed in a failure message."""
    generator = torch.Generator().manual_seed(torch.seed() % (2**31))
    return generator


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A disk cache of the test's own (TILEC_CACHE_DIR), the in-memory cache emptied before and
    after and its once-per-process warnings reset, for tests that damage or inspect entries."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))
    tilec.cache.clear_memory()
    monkeypatch.setattr(tilec.cache, "_reported", set())
    yield tmp_path / "cache"
    tilec.cache.clear_memory()


def randn(shape: tuple[int, ...], dtype: torch.dtype, generator: torch.Generator) -> torch.Tensor:
    """Random normal values (never zeros) in `dtype`, on the CPU."""
    return torch.randn(shape, generator=generator, dtype=torch.float32).to(dtype)


def poisoned(shape: tuple[int, ...], dtype: torch.dtype) -> torch.Tensor:
    """An output buffer full of NaN (or the max int): a result not written is caught."""
    if dtype.is_floating_point:
        return torch.full(shape, float("nan"), dtype=dtype)
    return torch.full(shape, torch.iinfo(dtype).max, dtype=dtype)


TOLERANCES = {
    torch.float16: {"rtol": 1e-2, "atol": 2e-2},
    torch.bfloat16: {"rtol": 2e-2, "atol": 1e-1},
    torch.float32: {"rtol": 1e-4, "atol": 1e-4},
    torch.float64: {"rtol": 1e-10, "atol": 1e-10},
}


def assert_close(actual: torch.Tensor, expected: torch.Tensor, dtype: torch.dtype) -> None:
    """Compare in float64 with tolerances that fit the output dtype."""
    torch.testing.assert_close(actual.double(), expected.double(), **TOLERANCES[dtype])
