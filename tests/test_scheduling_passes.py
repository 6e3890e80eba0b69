"""The CUDA scheduling passes' decisions against the generators' own limits, the arch lookup
(including the `arch` option, which tilec-opt cannot pass) and the decisions' attribute form."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from mlir import ir

import tilec.dialect as tile_dialect
from tilec.compiler.passes import get_pass
from tilec.compiler.passes._ir_walk import walk
from tilec.compiler.passes._scheduling import decision_attr, read_decision, target_description
from tilec.compiler.passes.infer_mma_layout import (
    MMA_ATTR,
    GemmProblem,
    consumer_warpgroups,
    warp_grid,
    wgmma_decision,
)
from tilec.compiler.tensorcore.ampere import AmpereGemmConfig
from tilec.compiler.tensorcore.dtypes import OPERAND_BYTES, check_types
from tilec.compiler.tensorcore.hopper import HopperGemmConfig
from tilec.errors import CompileError

LIT_INPUTS = Path(__file__).resolve().parent.parent / "lit_tests" / "passes"


def _chunk(file: str, function: str) -> str:
    """The `// -----` chunk of a lit input that defines `function`."""
    text = (LIT_INPUTS / file).read_text()
    return next(chunk for chunk in text.split("\n// -----\n") if f"@{function}(" in chunk)


def _gemms(module: ir.Module) -> list[ir.Operation]:
    return [op for op in walk(module.operation) if op.name == "tile.gemm"]


def _problems() -> Iterator[GemmProblem]:
    """Tile shapes, types and layouts around and beyond the instructions' limits."""
    for block_m, block_n, block_k, dtype, out, trans_a, trans_b in itertools.product(
        (32, 64, 96, 128, 192, 256, 512),
        (16, 32, 64, 96, 128, 192, 256, 320),
        (8, 16, 32, 64, 128),
        ("f16", "bf16", "e4m3", "s8", "tf32"),
        ("f16", "bf16", "f32", "s32"),
        (False, True),
        (False, True),
    ):
        try:
            check_types(dtype, out, trans_a, trans_b)
        except ValueError:
            continue
        yield GemmProblem(block_m, block_n, block_k, dtype, out, trans_a, trans_b, "shared")


@pytest.mark.parametrize("threads", [64, 128, 256, 384])
def test_wgmma_decision_is_what_the_hopper_kernel_takes(threads: int) -> None:
    """A tile gets tile.mma exactly when the sm_90a generator builds it (2 stages, the K tile
    of one 128-byte swizzle row), with the same consumer warpgroups and full-width N."""
    for problem in _problems():
        groups = consumer_warpgroups(problem.block_m, threads)
        try:
            HopperGemmConfig(
                block_m=problem.block_m,
                block_n=problem.block_n,
                block_k=128 // OPERAND_BYTES[problem.dtype],
                stages=2,
                consumers=groups,
                dtype=problem.dtype,
                epilogue_n=128 if problem.block_n % 128 == 0 else 64,
                out_dtype=problem.out_dtype,
                trans_a=problem.trans_a,
                trans_b=problem.trans_b,
            )
            built = True
        except ValueError:
            built = False
        decision = wgmma_decision(problem, threads)
        assert (decision is not None) == built, problem
        if decision is not None:
            assert decision["warpgroups"] == groups
            assert decision["instr"] == (64, problem.block_n, problem.k_step)


def test_warp_grid_is_the_most_square_the_ampere_kernel_takes() -> None:
    for problem in _problems():
        grid = warp_grid(problem, 128)
        if grid is None:
            continue
        warps_m, warps_n = grid
        assert warps_m * warps_n == 4
        AmpereGemmConfig(
            block_m=problem.block_m,
            block_n=problem.block_n,
            block_k=problem.block_k,
            warps_m=warps_m,
            warps_n=warps_n,
            dtype=problem.dtype,
            out_dtype=problem.out_dtype,
            trans_a=problem.trans_a,
            trans_b=problem.trans_b,
        )
    square = GemmProblem(128, 128, 32, "f16", "f16", False, False, "shared")
    assert warp_grid(square, 128) == (2, 2)
    assert warp_grid(square, 256) in ((2, 4), (4, 2))
    assert warp_grid(square, 48) is None  # not whole warps


def test_arch_option_then_module_attribute_then_sm90a() -> None:
    with tile_dialect.new_context():
        module = ir.Module.parse('module attributes {tile.arch = "sm_80"} {}')
        assert target_description(module, "", "p").name == "sm_80"
        assert target_description(module, "sm_90a", "p").name == "sm_90a"
        assert target_description(ir.Module.parse("module {}"), "", "p").name == "sm_90a"
        with pytest.raises(CompileError, match="p: unsupported CUDA arch 'sm_75'"):
            target_description(module, "sm_75", "p")


def test_arch_option_overrides_the_module() -> None:
    """The quickstart in an sm_90a module, scheduled with arch=sm_80: mma.sync, not wgmma."""
    with tile_dialect.new_context():
        module = ir.Module.parse(_chunk("infer-mma-layout.mlir", "quickstart"))
        module.operation.attributes["tile.arch"] = ir.StringAttr.get("sm_90a")
        get_pass("infer-mma-layout")(arch="sm_80").run(module)
        (gemm,) = _gemms(module)
        decision = read_decision(gemm, MMA_ATTR)
        assert decision == {
            "a_source": "shared",
            "instr": (16, 8, 16),
            "kind": "mma.sync",
            "warps": (2, 2),
        }


def test_decisions_round_trip_through_text() -> None:
    fields = {"kind": "wgmma", "warpgroups": 2, "persistent": False, "instr": (64, 256, 16)}
    with tile_dialect.new_context() as context:
        attribute = decision_attr(fields, context)
        module = ir.Module.parse(
            f"module {{ func.func @f() attributes {{tile.mma = {attribute}}} {{ return }} }}"
        )
        function = module.body.operations[0].operation
        assert read_decision(function, "tile.mma") == fields
        assert read_decision(function, "tile.raster") is None


def test_malformed_decision_is_a_compile_error() -> None:
    with tile_dialect.new_context():
        module = ir.Module.parse(
            'module { func.func @f() attributes {tile.mma = "wgmma"} { return } }'
        )
        with pytest.raises(CompileError, match="tile.mma must be a dictionary"):
            read_decision(module.body.operations[0].operation, "tile.mma")


def test_simt_fallback_still_lays_out_an_annotated_accumulator() -> None:
    """A gemm with tile.mma that the tensor-core lowering declines goes to the SIMT passes:
    infer-fragment-layout must still lay out its accumulator (the mma marking is a separate
    attribute from the SIMT layout's tile.layout)."""
    with tile_dialect.new_context():
        module = ir.Module.parse(_chunk("infer-mma-layout.mlir", "attention"))
        get_pass("infer-mma-layout")().run(module)
        get_pass("infer-fragment-layout")().run(module)
        module.operation.verify()
        accumulators = [gemm.operands[2].owner for gemm in _gemms(module)]
        for alloc in accumulators:
            assert "tile.mma_layout" in alloc.attributes
            assert str(alloc.attributes["tile.layout"]).startswith("#tile.linear<")


def test_a_pass_is_found_by_its_own_file_and_an_unknown_name_lists_the_passes() -> None:
    """get_pass imports the named pass's file alone (a CUDA compile skips the CPU, SPIR-V and
    Ascend passes); a name no file has still lists every pass."""
    import subprocess
    import sys

    probe = ("import sys\n"
             "from tilec.compiler.passes import get_pass\n"
             "print(get_pass('insert-shared-barriers').name)\n"
             "print('tilec.compiler.passes.lower_tile_ops_to_loops' in sys.modules)\n"
             "try:\n"
             "    get_pass('no-such-pass')\n"
             "except KeyError as error:\n"
             "    print('lower-tile-ops-to-loops' in str(error))\n")
    lines = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                           text=True).stdout.split()
    assert lines == ["insert-shared-barriers", "False", "True"]
