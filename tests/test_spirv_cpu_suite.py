"""The CPU suite's kernels through SPIR-V on lavapipe: the modules of SUITE, whose kernels
compile for `TARGET = suite_target()`, imported again with TILEC_SUITE_TARGET set to vulkan and
to webgpu. Each of their tests then compiles its kernels for that target and runs them through
wgpu on Mesa's lavapipe, checked exactly as on the CPU (torch references, random inputs,
outputs poisoned). Collected here as classes Test_<target>__<module less test_>, each
with its module's fixtures.

What a target cannot run is listed in GAPS by test name with its reason, each a strict xfail
on the error it must raise (a clear CompileError or LaunchError naming the kernel, never a wrong
result): one that starts passing fails here until it is taken off the list.

Needs what tests/test_spirv_targets.py needs (spirv-val, a Vulkan driver, wgpu; node and
naga-wasm for webgpu); without them these tests skip, unless TILEC_REQUIRE_SPIRV_TOOLS=1.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import importlib
import importlib.util
import inspect
import shutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _pytest.fixtures import FixtureFunctionDefinition
from conftest import SUITE_TARGET_VARIABLE
from test_spirv_targets import require, require_device, require_naga

from tilec.compiler.targets import metal, spirv
from tilec.errors import CompileError

JIT = importlib.import_module("tilec.jit")  # the module: tilec.jit is also the decorator
TESTS = Path(__file__).resolve().parent
SUITE = ("test_numerics_cpu", "test_eager", "test_errors", "test_float16x2",
         "test_runtime_grid", "test_runtime_slices", "test_sub_byte_types",
         "test_unroll_fragments", "test_per_thread_buffers", "test_partial_warps",
         "test_staged_copies")
TARGETS = ("vulkan", "webgpu")
# where the metal target's SPIR-V may not be vulkan's: float64 or 64-bit integer values (which
# check-metal-types refuses where MSL cannot hold them) and vulkan's float atomic add
METAL_OWN_SPIRV = ("OpCapability Float64", "OpCapability Int64", "OpAtomicFAddEXT")
# fnmatch pattern over "Test_<target>__<module>::<test>[params]": (why, the error it raises)
GAPS = {
    # 16 rows of 128 float32 stored and their staged box take webgpu's 16 KiB by themselves
    "Test_webgpu__staged_copies::test_accumulator_stored_in_parts[[]32-128-2-*[]]": (
        "webgpu allows 16 KiB of workgroup memory: the 16 x 128 float32 part and the staged "
        "box of the accumulator take 16", CompileError),
}


def _import_for(name: str, target: str) -> ModuleType:
    """The suite module `name` imported afresh, its kernels compiled for `target`."""
    spec = importlib.util.spec_from_file_location(f"{name}_on_{target}", TESTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(SUITE_TARGET_VARIABLE, target)
        spec.loader.exec_module(module)
    return module


def _as_method(definition: Any) -> Any:
    """A module-level fixture as the same fixture of a class (pytest binds it to the test's
    instance: it takes `self`)."""
    marker = definition._fixture_function_marker
    function = definition._get_wrapped_function()
    if inspect.isgeneratorfunction(function):
        def method(self, *args, **kwargs):
            yield from function(*args, **kwargs)
    else:
        def method(self, *args, **kwargs):
            return function(*args, **kwargs)
    signature = inspect.signature(function)
    method.__signature__ = signature.replace(parameters=[
        inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        *signature.parameters.values()])
    method.__name__ = function.__name__
    if marker.scope != "function":  # a wider fixture's value outlives the test's instance
        method = classmethod(method)
    return pytest.fixture(scope=marker.scope, params=marker.params, autouse=marker.autouse,
                          ids=marker.ids, name=marker.name)(method)


def _suite_class(name: str, target: str) -> type:
    """Test_<target>__<module less test_>: the module's tests and fixtures (its autouse ones
    apply to its own tests only), compiling for `target`."""
    members = {}
    for member_name, member in vars(_import_for(name, target)).items():
        if isinstance(member, FixtureFunctionDefinition):
            members[member_name] = _as_method(member)
        elif member_name.startswith("test_") and inspect.isfunction(member):
            members[member_name] = staticmethod(member)
    return type(f"Test_{target}__{name[len('test_'):]}", (), members)


globals().update({cls.__name__: cls for cls in (
    _suite_class(name, target) for target in TARGETS for name in SUITE)})


def gap_of(test_id: str) -> tuple[str, type[Exception]] | None:
    """The known gap of a collected test ("Test_<target>__<module>::<test>[params]"), or None;
    the last pattern that matches wins, so a narrower reason follows a wider one."""
    found = None
    for pattern, gap in GAPS.items():
        if fnmatch.fnmatchcase(test_id, pattern):
            found = gap
    return found


def _metal_kernel(spec: JIT.Specialization, compile_one: Callable) -> JIT.JITKernel:
    """The vulkan specialization `spec` compiled for the metal target instead."""
    with pytest.MonkeyPatch.context() as patch:  # the test's cache sees its own only
        patch.setenv("TILEC_DISABLE_CACHE", "1")
        return compile_one(dataclasses.replace(
            spec, key_parts={**spec.key_parts, "target": "metal"}, target="metal"))


def _check_msl(spec: JIT.Specialization, kernel: JIT.JITKernel, compile_one: Callable) -> None:
    """The metal target's MSL of a kernel the vulkan class compiled parses (metal.smoke_check):
    spirv-cross's MSL of the same SPIR-V, which is the metal target's, but where the SPIR-V
    has float64 or 64-bit integer values or a float atomic add: there the metal target compiles
    it itself, or refuses it with a CompileError at the kernel's line (float64 values, 64-bit
    integer tensors)."""
    parts = kernel.artifact.kernels or [kernel.artifact]
    texts = [spirv.disassemble(part.binary) for part in parts]
    if not any(mark in text for text in texts for mark in METAL_OWN_SPIRV):
        for part in parts:
            metal.smoke_check(metal.msl_of(part.binary))
        return
    try:
        own = _metal_kernel(spec, compile_one).artifact
    except CompileError as refused:
        assert refused.message.startswith("the metal target has no"), refused
        assert refused.filename is not None and refused.lineno is not None, refused
        return
    for part in own.kernels or [own]:
        metal.smoke_check(part.binary.decode())


def _with_msl_check(compile_one: Callable, checked: set[str]) -> Callable:
    """compile_specialization, the MSL of each vulkan specialization checked (once)."""

    def compiled(spec: JIT.Specialization) -> JIT.JITKernel:
        kernel = compile_one(spec)
        if spec.target == "vulkan" and spec.key not in checked:
            _check_msl(spec, kernel, compile_one)
            checked.add(spec.key)
        return kernel

    return compiled


_MSL_CHECKED: set[str] = set()


@pytest.fixture(autouse=True)
def _lavapipe_and_known_gaps(request: pytest.FixtureRequest,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The tools the test's target needs, and its known gap as a strict xfail; on vulkan, the
    MSL of every kernel it compiles parsed too (_check_msl)."""
    target = request.cls.__name__.split("__")[0][len("Test_"):]
    require("spirv-val")
    require_device()
    if target == "webgpu":
        require_naga()
    elif metal.clang() is not None and shutil.which("spirv-cross"):
        monkeypatch.setattr(JIT, "compile_specialization", _with_msl_check(
            JIT.compile_specialization, _MSL_CHECKED))
    gap = gap_of(f"{request.cls.__name__}::{request.node.name}")
    if gap is not None:
        reason, error = gap
        request.applymarker(pytest.mark.xfail(strict=True, raises=error, reason=reason))
