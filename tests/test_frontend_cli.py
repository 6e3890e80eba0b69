"""The `tilec` command line and the kernel cache (a hit needs neither MLIR nor the compiler)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch

import tilec
import tilec.language as T
from tilec import cache
from tilec.cli import main

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "examples" / "quickstart.py"
SIZES = ["--const", "M=64", "--const", "N=48", "--const", "K=40"]


@dataclass
class CliResult:
    returncode: int
    stdout: str
    stderr: str


Cli = Callable[..., CliResult]


@pytest.fixture
def tilec_cli(capsys: pytest.CaptureFixture) -> Cli:
    """Runs `tilec ARGS` in this process (as the console script does) and captures it."""

    def run(*args: str | Path) -> CliResult:
        try:
            code = main([str(a) for a in args])
        except SystemExit as exit_:  # argparse's usage errors
            code = exit_.code
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


def test_emit_tile_prints_the_frontend_ir(tilec_cli: Cli) -> None:
    result = tilec_cli("--emit=tile", QUICKSTART, *SIZES)
    assert result.returncode == 0, result.stderr
    assert "func.func @matmul(%arg0: memref<64x40xf16>" in result.stdout
    assert "tile.kernel" in result.stdout and "loc(" not in result.stdout


def test_emit_tile_with_debug_info_and_output_file(tmp_path: Path, tilec_cli: Cli) -> None:
    output = tmp_path / "matmul.mlir"
    result = tilec_cli("--emit", "tile", "--mlir-print-debuginfo", "-o", output, QUICKSTART,
                       *SIZES, "--const", "block_M=32")
    assert result.returncode == 0 and result.stdout == ""
    text = output.read_text()
    assert "quickstart.py" in text and "memref<32x32xf16, \"shared\">" in text


def test_default_emit_is_the_final_cpu_source(tilec_cli: Cli) -> None:
    result = tilec_cli("--target", "cpu", QUICKSTART, *SIZES)
    assert result.returncode == 0, result.stderr
    assert "define void @tilec_matmul" in result.stdout


def test_print_ir_after_all(tilec_cli: Cli) -> None:
    result = tilec_cli("--emit=loops", "--print-ir-after-all", "--target", "cpu", QUICKSTART,
                       *SIZES)
    assert result.returncode == 0, result.stderr
    assert "IR Dump After" in result.stderr
    assert "scf.for" in result.stdout and "tile.kernel" not in result.stdout


def test_compile_error_exits_1_with_the_location(tmp_path: Path, tilec_cli: Cli) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(textwrap.dedent("""\
        import tilec.language as T

        @T.prim_func
        def main(A: T.Tensor((64,), "float32")):
            with T.Kernel(1, threads=4096) as _:
                A[0] = 1.0
        """))
    result = tilec_cli("--emit=tile", bad)
    assert result.returncode == 1
    assert f"{bad}:5: a block has 1 to 1024 threads" in result.stderr


@pytest.mark.parametrize("args, message", [
    (["--kernel", "nope"], "no kernel named nope"),
    (["--const", "M"], "--const takes NAME=VALUE"),
    (["--bogus-flag"], "unrecognized arguments"),
    (["--target", "tpu"], "--target tpu: unknown target 'tpu'"),
    (["--target", "cuda:sm_999", "--emit", "ptx"], "--target cuda:sm_999: unsupported CUDA arch"),
    (["--target", "cpu", "--emit", "ptx"],
     "--emit ptx is not a stage of cpu; its stages: tile, loops, llvm, llvmir, asm"),
])
def test_usage_errors_exit_2(args: list[str], message: str, tilec_cli: Cli) -> None:
    result = tilec_cli(QUICKSTART, *args)
    assert result.returncode == 2
    assert message in result.stderr


def test_missing_file_exits_2(tmp_path: Path, tilec_cli: Cli) -> None:
    result = tilec_cli(tmp_path / "missing.py")
    assert result.returncode == 2 and "no such file" in result.stderr


def test_factory_needs_its_arguments(tmp_path: Path, tilec_cli: Cli) -> None:
    source = tmp_path / "factory.py"
    source.write_text(textwrap.dedent("""\
        import tilec.language as T

        def scale(N, block=32):
            @T.prim_func
            def main(A: T.Tensor((N,), "float32")):
                with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
                    for i in T.Parallel(block):
                        if bx * block + i < N:
                            A[bx * block + i] = A[bx * block + i] * 2.0
            return main
        """))
    assert tilec_cli("--emit=tile", source).returncode == 2
    result = tilec_cli("--emit=tile", source, "--const", "N=100")
    assert result.returncode == 0, result.stderr
    assert "memref<100xf32>" in result.stdout and "tile.parallel [32]" in result.stdout
    result = tilec_cli("--emit=tile", source, "--const", "N=100", "--const", "M=7")
    assert result.returncode == 2  # M was dropped without a word
    assert "--const M: no kernel compiled here (scale) takes it" in result.stderr
    assert "a factory its parameters: N, block" in result.stderr


BLOCK_MLIR = """
import builtins, importlib.abc, sys

class NoCompiler(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "mlir" or name.startswith(("mlir.", "tilec.compiler", "tilec.frontend.builder",
                                              "tilec.dialect")):
            raise ImportError(f"{name} must not be imported on a cache hit")
        return None

sys.meta_path.insert(0, NoCompiler())
"""


def test_precompiled_cache_runs_without_mlir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            tilec_cli: Cli) -> None:
    """`tilec --cache-dir` on a compiler machine; a machine without MLIR runs the kernels."""
    monkeypatch.setenv("TILEC_CACHE_DIR", os.environ["TILEC_CACHE_DIR"])  # restored after
    cache_dir = tmp_path / "cache"
    result = tilec_cli("--cache-dir", cache_dir, "--target", "cpu", QUICKSTART, *SIZES)
    assert result.returncode == 0, result.stderr
    entries = list(cache_dir.iterdir())
    assert len(entries) == 1 and (entries[0] / "kernel.json").is_file()
    script = BLOCK_MLIR + textwrap.dedent(f"""
        import torch
        sys.path.insert(0, {str(QUICKSTART.parent)!r})
        from quickstart import matmul
        a = torch.randn(64, 40, dtype=torch.float16)
        b = torch.randn(40, 48, dtype=torch.float16)
        c = matmul(a, b)
        error = (c.double() - a.double() @ b.double()).abs().max().item()
        assert error < 0.1, error
        assert "mlir" not in sys.modules
        print("ran without mlir")
        """)
    env = {**os.environ, "TILEC_CACHE_DIR": str(cache_dir), "TILEC_TARGET": "cpu"}
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert "ran without mlir" in run.stdout


def doubler(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=32) as _:
            for i in T.Parallel(N):
                B[i] = A[i] * 2.0

    return main


def test_cache_memory_disk_and_disable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    cache.clear_memory()
    first = tilec.compile(doubler(16), out_idx=[1], target="cpu")
    assert len(list(tmp_path.iterdir())) == 1
    assert tilec.compile(doubler(16), out_idx=[1], target="cpu").artifact is first.artifact
    cache.clear_memory()
    from_disk = tilec.compile(doubler(16), out_idx=[1], target="cpu")
    assert from_disk.artifact is not first.artifact
    assert from_disk.artifact.binary == first.artifact.binary
    assert tilec.compile(doubler(17), out_idx=[1], target="cpu").params[0].shape == [17]
    monkeypatch.setenv("TILEC_DISABLE_CACHE", "1")
    fresh = tilec.compile(doubler(16), out_idx=[1], target="cpu")
    assert fresh.artifact is not from_disk.artifact
    monkeypatch.delenv("TILEC_DISABLE_CACHE")
    tilec.disable_cache()
    try:
        assert tilec.compile(doubler(16), out_idx=[1], target="cpu").artifact is not first.artifact
    finally:
        tilec.enable_cache()
    x = torch.randn(16)
    torch.testing.assert_close(from_disk(x), x * 2)


def test_kernel_object_api() -> None:
    kernel = tilec.compile(doubler(8), out_idx=[-1], target="cpu")
    assert kernel.out_idx == [1]
    assert set(kernel.asm) >= {"tile", "llvmir"}
    assert kernel.get_kernel_source() == kernel.asm["llvmir"]
    assert "tile.parallel" in kernel.asm["tile"]


def test_import_tilec_imports_neither_mlir_nor_torch() -> None:
    script = ("import sys, tilec, tilec.language\n"
              "heavy = [m for m in ('mlir', 'torch', 'tilec.compiler', 'tilec.frontend.builder')"
              " if m in sys.modules]\n"
              "assert not heavy, heavy\n")
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


def test_an_entry_from_another_compiler_is_compiled_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tilec.runtime.artifact import Artifact

    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    cache.clear_memory()
    tilec.compile(doubler(16), out_idx=[1], target="cpu")
    (entry,) = tmp_path.iterdir()
    stale = Artifact.load(entry)
    assert stale.compiler == cache.compiler_fingerprint()
    stale.compiler = "another compiler"
    stale.save(entry)
    cache.clear_memory()
    again = tilec.compile(doubler(16), out_idx=[1], target="cpu")
    assert again.artifact.compiler == cache.compiler_fingerprint()
    assert Artifact.load(entry).compiler == cache.compiler_fingerprint()
