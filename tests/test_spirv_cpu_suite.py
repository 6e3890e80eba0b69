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

import fnmatch
import importlib.util
import inspect
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from _pytest.fixtures import FixtureFunctionDefinition
from conftest import SUITE_TARGET_VARIABLE
from test_spirv_targets import require, require_device, require_naga

from tilec.errors import CompileError, LaunchError

TESTS = Path(__file__).resolve().parent
SUITE = ("test_numerics_cpu", "test_eager", "test_errors", "test_float16x2",
         "test_runtime_grid", "test_runtime_slices", "test_sub_byte_types",
         "test_unroll_fragments")
TARGETS = ("vulkan", "webgpu")
# the error a gap raises: one for both targets, or one per target (webgpu's naga-wasm fails
# while compiling to WGSL, vulkan's SPIR-V reaches wgpu's reader at load)
AT_LOAD_OR_WGSL = {"vulkan": LaunchError, "webgpu": CompileError}
NARROW_STORAGE = ("8-bit storage: wgpu's naga has no StorageBuffer8BitAccess (int8, sub-byte "
                  "and float8 tensors)", AT_LOAD_OR_WGSL)
F16_PAIR_CAST = ("naga cannot bitcast an i32 to a float16 pair (T.reinterpret of "
                 "T.float16x2): 'Unable to cast'", AT_LOAD_OR_WGSL)
WORKGROUP_MEMORY = ("the example's tiles need 57344 bytes of workgroup memory (SPIR-V: 32768)",
                    CompileError)
# fnmatch pattern over "Test_<target>__<module>::<test>[params]": (why, the error it raises)
GAPS = {
    "*__eager::test_get_kernel_source_on_the_function_compiles_those_arguments": (
        "checks the CPU target's LLVM IR", AssertionError),
    **{f"*__sub_byte_types::test_{test}*": NARROW_STORAGE for test in (
        "decode_packed_tensor", "decode_to_other_floats", "encode_packed_output",
        "encode_float4_rounds_to_nearest", "copies_through_every_buffer_kind",
        "format_weights_decode_as_packed", "gemm_of_sub_byte_integers")},
    "Test_webgpu__sub_byte_types::test_tensor_argument_checks_the_packed_shape": NARROW_STORAGE,
    "*__sub_byte_types::test_gemm_int4_example[[]*": WORKGROUP_MEMORY,
    "*__sub_byte_types::test_gemm_mxfp4_example[[]*": WORKGROUP_MEMORY,
    "*__sub_byte_types::test_e8m0_scales": ("float8 has no SPIR-V type", CompileError),
    "*__float16x2::test_pair_arithmetic_is_float16_arithmetic_on_both_halves": F16_PAIR_CAST,
    "Test_vulkan__float16x2::test_field_pairs_decode_words*": NARROW_STORAGE,
    "Test_webgpu__float16x2::test_field_pairs_decode_words*": F16_PAIR_CAST,
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


def gap_of(test_id: str) -> tuple[str, type[Exception] | dict] | None:
    """The known gap of a collected test ("Test_<target>__<module>::<test>[params]"), or None;
    the last pattern that matches wins, so a narrower reason follows a wider one."""
    found = None
    for pattern, gap in GAPS.items():
        if fnmatch.fnmatchcase(test_id, pattern):
            found = gap
    return found


@pytest.fixture(autouse=True)
def _lavapipe_and_known_gaps(request: pytest.FixtureRequest) -> None:
    """The tools the test's target needs, and its known gap as a strict xfail."""
    target = request.cls.__name__.split("__")[0][len("Test_"):]
    require("spirv-val")
    require_device()
    if target == "webgpu":
        require_naga()
    gap = gap_of(f"{request.cls.__name__}::{request.node.name}")
    if gap is not None:
        reason, error = gap
        if isinstance(error, dict):
            error = error[target]
        request.applymarker(pytest.mark.xfail(strict=True, raises=error, reason=reason))
