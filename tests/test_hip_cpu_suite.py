"""The CPU suite's kernels as gfx942 code objects: the modules of test_spirv_cpu_suite.SUITE run
on the CPU target as they do alone (numerics against torch), and every kernel they compile is
compiled again for hip:gfx942 and its code object checked as tests/test_hip_target.py checks
the CUDA suite's (kernel descriptor: 64-lane waves, block size, registers, LDS, no scratch;
disassembly: no calls, the planned MFMAs). No AMD GPU here, so no HIP numerics. Collected as
classes Test_gfx942__<module less test_>.

What the hip target rejects is listed in HIP_GAPS by test name with its reason, each a strict
xfail on the CompileError it must raise, as GAPS does for SPIR-V.

Needs the hip target's toolchain (llvm-22, lld-22, rocm-device-libs); without it these tests
skip, unless TILEC_REQUIRE_HIP_TOOLS=1.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import importlib
from collections.abc import Callable

import pytest
from test_hip_target import check_code_object, require_toolchain
from test_spirv_cpu_suite import SUITE, _suite_class

from tilec.errors import CompileError

JIT = importlib.import_module("tilec.jit")  # the module: tilec.jit is also the decorator

CHIP = "gfx942"
# fnmatch pattern over "Test_gfx942__<module>::<test>[params]": why the hip target rejects it
HIP_GAPS: dict[str, str] = {}


def _renamed(cls: type) -> type:
    name = f"Test_{CHIP}__{cls.__name__.split('__', 1)[1]}"
    cls.__name__ = cls.__qualname__ = name
    return cls


globals().update({cls.__name__: cls for cls in (
    _renamed(_suite_class(name, "cpu")) for name in SUITE)})


def _with_code_objects(compile_one: Callable, checked: set[str]) -> Callable:
    """compile_specialization, each CPU specialization also compiled for hip:gfx942 and its
    code objects checked (once per kernel)."""

    def compiled(spec: JIT.Specialization) -> JIT.JITKernel:
        kernel = compile_one(spec)
        if spec.target == "cpu" and spec.key not in checked:
            target = f"hip:{CHIP}"
            with pytest.MonkeyPatch.context() as patch:  # the test's cache sees its own only
                patch.setenv("TILEC_DISABLE_CACHE", "1")
                hip = compile_one(dataclasses.replace(
                    spec, key_parts={**spec.key_parts, "target": target}, target=target))
            for part in hip.artifact.kernels or [hip.artifact]:
                check_code_object(part, CHIP)
            checked.add(spec.key)
        return kernel

    return compiled


_CHECKED: set[str] = set()


@pytest.fixture(autouse=True)
def _code_objects_and_known_gaps(request: pytest.FixtureRequest,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    require_toolchain()
    monkeypatch.setattr(JIT, "compile_specialization", _with_code_objects(
        JIT.compile_specialization, _CHECKED))
    test_id = f"{request.cls.__name__}::{request.node.name}"
    reasons = [why for pattern, why in HIP_GAPS.items() if fnmatch.fnmatchcase(test_id, pattern)]
    if reasons:
        request.applymarker(pytest.mark.xfail(strict=True, raises=CompileError,
                                              reason=reasons[-1]))
