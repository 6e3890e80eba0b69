"""The conformance runner (benchmarks/tilelang_examples.py) on small example files of its own:
the import rewrite, which files it runs or leaves out, and how it records each outcome."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

RUNNER_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "tilelang_examples.py"
_spec = importlib.util.spec_from_file_location("tilelang_examples", RUNNER_PATH)
runner = importlib.util.module_from_spec(_spec)
sys.modules["tilelang_examples"] = runner
_spec.loader.exec_module(runner)


def _write(folder: Path, relative: str, text: str) -> Path:
    path = folder / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


# ---------------------------------------------------------------------------------------------
# the rewrite


def test_rewrite_changes_only_tilelang_imports_and_keeps_line_numbers() -> None:
    source = textwrap.dedent('''\
        """Docstring: import tilelang stays as written here."""
        import tilelang
        import tilelang as tl
        import tilelang.language as T
        import tilelang.testing
        import os, tilelang  # noqa: E401
        from tilelang import language as T2
        from tilelang.profiler import do_bench
        from tilelang.autotuner import (
            autotune,
        )
        import tilelang_utils
        from tvm import DataType
        from . import tilelang
        # import tilelang in a comment

        def helper():
            import tilelang.language as L
            return "import tilelang"
        ''')
    expected = textwrap.dedent('''\
        """Docstring: import tilelang stays as written here."""
        import tilec as tilelang
        import tilec as tl
        import tilec.language as T
        import tilec.testing, tilec as tilelang
        import os, tilec as tilelang  # noqa: E401
        from tilec import language as T2
        from tilec.profiler import do_bench
        from tilec.autotuner import (
            autotune,
        )
        import tilelang_utils
        from tvm import DataType
        from . import tilelang
        # import tilelang in a comment

        def helper():
            import tilec.language as L
            return "import tilelang"
        ''')
    assert runner.rewrite_imports(source) == expected


def test_rewritten_imports_bind_tilec_under_the_example_names() -> None:
    source = runner.rewrite_imports("import tilelang\nimport tilelang.language as T\n"
                                    "from tilelang import language as L\n")
    names: dict = {}
    exec(compile(source, "example.py", "exec"), names)  # noqa: S102 - the rewritten imports
    import tilec
    import tilec.language

    assert names["tilelang"] is tilec
    assert names["T"] is tilec.language and names["L"] is tilec.language


def test_rewrite_keeps_non_ascii_text_beside_an_import() -> None:
    source = "x = 'é'; import tilelang  # é\n"
    assert runner.rewrite_imports(source) == "x = 'é'; import tilec as tilelang  # é\n"


def test_rewrite_rejects_source_that_does_not_parse() -> None:
    with pytest.raises(SyntaxError):
        runner.rewrite_imports("import tilelang\ndef broken(:\n")


# ---------------------------------------------------------------------------------------------
# selection

KERNEL = '''\
import tilelang
import tilelang.language as T

@tilelang.jit
def add(A, B):
    with T.Kernel(1, threads=128) as bx:
        pass
'''
MAIN = KERNEL + '\nif __name__ == "__main__":\n    add(1, 2)\n'


@pytest.mark.parametrize(("relative", "source", "reason"), [
    ("gemm/test_example_gemm.py", MAIN, "pytest wrapper"),
    ("gemm/regression_example_gemm.py", MAIN, "performance-regression wrapper"),
    ("conftest.py", "import pytest\n", "pytest configuration"),
    ("amd/example_fa.py", MAIN, "AMD"),
    ("gemm_fp8/example_gemm_amd.py", MAIN, "AMD"),
    ("flash_attention_sm100/fwd.py", MAIN, "Blackwell"),
    ("gemm/blackwell.py", MAIN.replace("pass", "T.tcgen05_gemm()"), "Blackwell"),
    ("gemm/hip.py", MAIN.replace("@tilelang.jit", '@tilelang.jit(target="hip")'), "AMD"),
    ("attn/example_triton_attn.py", "import triton\nfrom tilelang.profiler import do_bench\n"
     'if __name__ == "__main__":\n    do_bench(print)\n', "Triton-only"),
    ("model/eval.py", 'import torch\nif __name__ == "__main__":\n    print(1)\n', "no TileLang"),
    ("gemm/helpers.py", KERNEL, "helper module"),
    ("plot/layout.py", "import tilelang.language as T\nprint(T)\n", "no kernel"),
    ("autodd/tilelang_buggy.py", MAIN, "fails by design"),
    ("gdn/example_chunk_delta_h.py", MAIN, "a TypeError under TileLang too"),
    ("gdn/example_chunk_delta_bwd.py", MAIN, "a TypeError under TileLang too"),
])
def test_files_left_out_name_their_reason(relative: str, source: str, reason: str) -> None:
    assert reason in runner.exclusion_reason(relative, source)


@pytest.mark.parametrize("source", [
    MAIN,
    KERNEL + "\nadd(1, 2)\n",  # quickstart style: runs at the top level
    "def main():\n    pass\n" + KERNEL + '\nif __name__ == "__main__":\n    main()\n',
])
def test_kernel_files_that_run_something_are_selected(source: str) -> None:
    assert runner.exclusion_reason("gemm/example_gemm.py", source) is None


def test_a_file_running_a_sibling_kernel_is_selected(tmp_path: Path) -> None:
    _write(tmp_path, "attn/kernels.py", KERNEL)
    _write(tmp_path, "attn/bench.py", '''\
        import triton
        from kernels import add
        if __name__ == "__main__":
            add(1, 2)
        ''')
    _write(tmp_path, "attn/test_attn.py", MAIN)
    selection = runner.select_examples(tmp_path)
    assert selection.selected == ["attn/bench.py"]
    assert set(selection.left_out) == {"attn/kernels.py", "attn/test_attn.py"}
    assert "helper module" in selection.left_out["attn/kernels.py"]


def test_copy_rewrites_every_python_file_and_copies_the_rest(tmp_path: Path) -> None:
    examples, scratch = tmp_path / "examples", tmp_path / "scratch"
    _write(examples, "gemm/example.py", MAIN)
    _write(examples, "gemm/quantize/lop3.py", "import tilelang.language as T\n")
    _write(examples, "gemm/data.json", '{"import tilelang": 1}')
    runner.copy_rewritten(examples, scratch)
    assert (scratch / "gemm/example.py").read_text().startswith("import tilec as tilelang\n")
    assert (scratch / "gemm/quantize/lop3.py").read_text() == "import tilec.language as T\n"
    assert (scratch / "gemm/data.json").read_text() == '{"import tilelang": 1}'


# ---------------------------------------------------------------------------------------------
# outcomes


@pytest.mark.parametrize(("message", "reason"), [
    ("module 'tilec.language' has no attribute 'annotate_layout'", "T.annotate_layout missing"),
    ("module 'tilec' has no attribute 'PassConfigKey'", "tilelang.PassConfigKey missing"),
    ("cannot import name 'do_bench' from 'tilec.profiler' (/x/profiler.py)",
     "tilelang.profiler.do_bench missing"),
    ("No module named 'tilec.carver'", "tilelang.carver missing (module)"),
    ("No module named 'fla.ops'", "package not installed: fla"),
    ("No module named 'tvm'", "tvm imported directly (TileLang bundles TVM; tilec has none)"),
    ("<module 'tilec.language' from '/x/__init__.py'> has no attribute 'alloc_barrier'",
     "T.alloc_barrier missing"),
    ("T.alloc_barrier is not supported by tilec yet", "T.alloc_barrier not supported"),
    ("buffer 'kernel' has no attribute 'data'", "buffer.data missing"),
    ("'AutoTuner' object has no attribute 'compile'", "AutoTuner.compile missing"),
    ("do_bench() got an unexpected keyword argument 'backend'", "do_bench() takes no backend="),
    ("do_bench() got an unexpected keyword argument 'k'",
     "do_bench() takes no k=, nor does TileLang's (the example's own call)"),
    ("compile() got an unexpected keyword argument 'k'", "compile() takes no k="),
    ("cannot tell the dtype of tensor 'A': name 'dtype' is not defined",
     "TilecError: cannot tell the dtype of tensor '…': name '…' is not defined"),
])
def test_failure_reasons_group_failures_alike(message: str, reason: str) -> None:
    error_type = "TilecError" if "tensor" in message else "AttributeError"
    assert runner.failure_reason({"type": error_type, "message": message}) == reason


def _run(tmp_path: Path, source: str, timeout: float = 60.0, mode: str = "run") -> dict:
    _write(tmp_path, "demo/example.py", source)
    return runner.run_example("demo/example.py", tmp_path.resolve(), mode, timeout)


def test_a_passing_example(tmp_path: Path) -> None:
    record = _run(tmp_path, 'import sys\nassert sys.argv[0].endswith("example.py")\n')
    assert record["status"] == "passed" and record["error"] is None


def test_a_failing_example_records_its_exception_and_line(tmp_path: Path) -> None:
    record = _run(tmp_path, '''\
        def main():
            raise ValueError("sizes do not match: 3")

        if __name__ == "__main__":
            main()
        ''')
    assert record["status"] == "failed"
    assert record["error"] == {"type": "ValueError", "message": "sizes do not match: 3",
                               "where": "demo/example.py:2"}
    assert record["reason"] == "ValueError: sizes do not match: N"


def test_a_multi_line_message_keeps_its_further_lines_as_detail(tmp_path: Path) -> None:
    source = 'raise RuntimeError("no config ran:\\n  config 1: bad\\n  config 2: bad")\n'
    record = _run(tmp_path, source)
    assert record["error"]["message"] == "no config ran:"
    assert record["error"]["detail"] == "  config 1: bad\n  config 2: bad"


def test_an_example_imports_its_sibling_modules(tmp_path: Path) -> None:
    _write(tmp_path, "demo/helper.py", "VALUE = 7\n")
    record = _run(tmp_path, "from helper import VALUE\nassert VALUE == 7\n")
    assert record["status"] == "passed"


def test_a_nonzero_exit_is_a_failure(tmp_path: Path) -> None:
    record = _run(tmp_path, "import sys\nsys.exit(3)\n")
    assert record["status"] == "failed" and record["error"]["message"] == "exit status 3"


def test_a_native_abort_is_a_crash(tmp_path: Path) -> None:
    record = _run(tmp_path, "import os\nos.abort()\n")
    assert record["status"] == "crashed" and record["error"]["type"] == "SIGABRT"


def test_a_slow_example_times_out_saying_where(tmp_path: Path) -> None:
    record = _run(tmp_path, """\
        import time

        def wait():
            time.sleep(60)

        wait()
        """, timeout=3.0)
    assert record["status"] == "timeout" and record["seconds"] < 30
    assert record["where"] == "demo/example.py:4" and record["busy_in"] == "the example"
    assert record["reason"] == "timeout (over 3 s) in the example"
    assert record["stack"][0] == "demo/example.py:4 in wait"


def test_a_timed_out_file_keeps_the_seconds_tilec_compiled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """compile_s / autotune_s: the example's time in tilec's compiler and autotuner, kept
    when its timeout stops it (a file with no kernel has neither)."""
    source = """\
        import time
        import torch
        import tilec as tilelang
        import tilec.language as T

        @tilelang.jit
        def double(A):
            N = T.const("N")
            B = T.empty((N,), T.float32)
            with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
                for i in T.Parallel(128):
                    B[bx * 128 + i] = A[bx * 128 + i] * 2.0
            return B

        double(torch.randn(256))
        time.sleep(60)
        """
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path / "cache"))  # a compile, not a hit
    record = _run(tmp_path, source, timeout=20.0, mode="cpu")
    assert record["status"] == "timeout"
    assert 0 < record["compile_s"] < 20 and record["autotune_s"] == 0
    assert "compile_s" not in _run(tmp_path, "print(1)\n")


def test_a_timeout_names_the_library_the_example_waits_in() -> None:
    log = ("starting\nTimeout (0:00:57)!\nThread 0x1 (most recent call first):\n"
           '  File "/usr/lib/python3.12/threading.py", line 359 in wait\n'
           '  File "/x/site/triton/runtime/autotuner.py", line 20 in run\n'
           '  File "/scratch/kda/chunk_o.py", line 216 in run_test\n'
           '  File "/usr/lib/python3.12/runpy.py", line 88 in _run_code\n\n'
           "Thread 0x2 (most recent call first):\n"
           '  File "/usr/lib/python3.12/threading.py", line 359 in wait\n')
    where, busy = runner.timeout_place(log, Path("/scratch"))
    assert where == "kda/chunk_o.py:216" and busy == "Triton (the example's reference)"
    importing = ("Timeout (0:00:57)!\nThread 0x1 (most recent call first):\n"
                 '  File "<frozen importlib._bootstrap>", line 1176 in _find_and_load\n'
                 '  File "/x/site/tilec/autotuner.py", line 210 in _compile_all\n'
                 '  File "/scratch/kda/wy_fast.py", line 184 in run_test\n'
                 '  File "/usr/lib/python3.12/runpy.py", line 88 in _run_code\n')
    assert runner.timeout_place(importing, Path("/scratch")) == (  # who imports, not importlib
        "kda/wy_fast.py:184", "tilec's autotuner")
    backward = ("Timeout (0:00:57)!\nThread 0x2 (most recent call first):\n"
                '  File "/x/site/tilec/compiler/pipeline.py", line 190 in run_pass_pipeline\n'
                '  File "/scratch/bca/example.py", line 391 in backward\n\n'
                "Thread 0x1 (most recent call first):\n"
                '  File "/x/site/torch/autograd/graph.py", line 829 in _engine_run_backward\n'
                '  File "/scratch/bca/example.py", line 471 in _run_fixed_case\n'
                '  File "/usr/lib/python3.12/runpy.py", line 88 in _run_code\n')
    assert runner.timeout_place(backward, Path("/scratch")) == (  # the work, not the wait
        "bca/example.py:471", "tilec's compiler (in torch's autograd thread)")
    assert runner.timeout_place("no dump\n", Path("/scratch")) == (
        None, "an unknown place (no stack dump)")
    # the JSON keeps the main thread's innermost frames (the log's last lines are its outermost)
    assert runner.main_thread_stack(backward, Path("/scratch")) == [
        "/x/site/torch/autograd/graph.py:829 in _engine_run_backward",
        "bca/example.py:471 in _run_fixed_case", "/usr/lib/python3.12/runpy.py:88 in _run_code"]
    assert runner.main_thread_stack(log, Path("/scratch"), limit=2) == [
        "/usr/lib/python3.12/threading.py:359 in wait",
        "/x/site/triton/runtime/autotuner.py:20 in run"]
    assert runner.main_thread_stack("no dump\n", Path("/scratch")) == []


def test_compile_mode_compiles_for_cuda_and_stops_at_the_launch(tmp_path: Path) -> None:
    record = _run(tmp_path, '''\
        import torch
        import tilec as tilelang
        import tilec.language as T

        @tilelang.jit
        def double(A):
            N = T.const("N")
            B = T.empty((N,), T.float32)
            with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
                for i in T.Parallel(128):
                    B[bx * 128 + i] = A[bx * 128 + i] * 2.0
            return B

        a = torch.randn(256, device="cuda")
        torch.cuda.synchronize()
        double(a)
        raise AssertionError("the kernel call must stop the example")
        ''', mode="compile")
    assert record["status"] == "compiled", record
    assert "compiled for cuda" in record["launch"] and record["where"] == "demo/example.py:16"


def test_cpu_mode_runs_the_kernels_on_the_cpu_target(tmp_path: Path) -> None:
    """--mode cpu: the example's CUDA tensors are CPU ones and its kernels run on the CPU
    target, so its own checks run; a wrong result fails them."""
    source = '''\
        import torch
        import tilec as tilelang
        import tilec.language as T

        @tilelang.jit
        def double(A):
            N = T.const("N")
            B = T.empty((N,), T.float32)
            with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
                for i in T.Parallel(128):
                    B[bx * 128 + i] = A[bx * 128 + i] * FACTOR
            return B

        a = torch.randn(256, device="cuda", generator=torch.Generator(device="cuda"))
        torch.testing.assert_close(double(a), a * 2.0)
        '''
    assert _run(tmp_path, source.replace("FACTOR", "2.0"), mode="cpu")["status"] == "passed"
    record = _run(tmp_path, source.replace("FACTOR", "3.0"), mode="cpu")
    assert record["status"] == "failed" and record["error"]["type"] == "AssertionError"


def test_compile_mode_answers_device_queries_as_an_h200(tmp_path: Path) -> None:
    """carver's CUDA("cuda") and examples sizing persistent grids read the device's properties;
    compile mode reports an H200's (132 SMs, 227 KiB of shared memory per block, 50 MiB L2)."""
    record = _run(tmp_path, '''\
        import torch
        from tilec.carver.arch import CUDA

        device = CUDA("cuda")
        assert device.arch == "sm_90a", device.arch
        assert "H200" in device.name, device.name
        assert device.compute_max_core == 132, device.compute_max_core
        assert device.smem_cap == 232448, device.smem_cap
        assert device.l2_cache_size_bytes == 50 * 2**20, device.l2_cache_size_bytes
        properties = torch.cuda.get_device_properties(torch.device("cuda:0"))
        assert properties.multi_processor_count == 132
        assert (properties.major, properties.minor) == (9, 0)
        ''', mode="compile")
    assert record["status"] == "passed", record


def test_compile_mode_reports_a_frontend_error_at_the_example_line(tmp_path: Path) -> None:
    record = _run(tmp_path, '''\
        import torch
        import tilec as tilelang
        import tilec.language as T

        @tilelang.jit
        def broken(A):
            with T.Kernel(1, threads=128) as bx:
                T.no_such_primitive(A)

        broken(torch.randn(128, device="cuda"))
        ''', mode="compile")
    assert record["status"] == "failed"
    assert record["error"]["where"] == "demo/example.py:8", record


# ---------------------------------------------------------------------------------------------
# the examples' dependencies, staged for a machine without network


def _wheel(folder: Path, name: str, version: str, files: dict[str, str],
           tag: str = "py3-none-any") -> Path:
    import zipfile

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{version}-{tag}.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for relative, text in files.items():
            archive.writestr(relative, text)
        archive.writestr(f"{name}-{version}.dist-info/METADATA", f"Name: {name}\n")
    return path


def test_staged_wheels_are_unpacked_and_listed(tmp_path: Path) -> None:
    wheels, deps = tmp_path / "wheels", tmp_path / "deps"
    _wheel(wheels, "fla_core", "0.3.2", {"fla/__init__.py": "__version__ = '0.3.2'\n",
                                         "fla/ops/utils.py": "def prepare_token_indices(x):\n"
                                                             "    return x + 1\n"})
    _wheel(wheels, "einops", "0.8.2", {"einops/__init__.py": ""})
    assert runner.unpack_wheels(wheels, deps) == ["einops==0.8.2", "fla_core==0.3.2"]
    assert (deps / "fla" / "ops" / "utils.py").exists()
    assert runner.staged_deps(deps) == ["einops==0.8.2", "fla_core==0.3.2"]
    assert runner.staged_deps(tmp_path / "nothing") == [] and runner.staged_deps(None) == []


def test_restaging_replaces_what_was_staged(tmp_path: Path) -> None:
    deps = tmp_path / "deps"
    runner.unpack_wheels(_wheel(tmp_path / "a", "old", "1.0", {"old.py": ""}).parent, deps)
    runner.unpack_wheels(_wheel(tmp_path / "b", "new", "2.0", {"new.py": ""}).parent, deps)
    assert not (deps / "old.py").exists() and runner.staged_deps(deps) == ["new==2.0"]


def test_staging_refuses_native_wheels_and_foreign_folders(tmp_path: Path) -> None:
    native = _wheel(tmp_path / "native", "fast_ext", "1.0", {"fast_ext.so": ""},
                    tag="cp312-cp312-manylinux_2_28_x86_64")
    with pytest.raises(RuntimeError, match="not pure-Python wheels.*fast_ext"):
        runner.unpack_wheels(native.parent, tmp_path / "deps")
    foreign = tmp_path / "mine"
    _write(foreign, "notes.txt", "keep me\n")
    with pytest.raises(RuntimeError, match="did not put there"):
        runner.unpack_wheels(_wheel(tmp_path / "ok", "ok", "1.0", {"ok.py": ""}).parent, foreign)
    assert (foreign / "notes.txt").read_text() == "keep me\n"


def test_an_example_imports_staged_deps_after_the_machines_own(tmp_path: Path) -> None:
    deps = tmp_path / "deps"
    runner.unpack_wheels(_wheel(tmp_path / "wheels", "fla_core", "0.3.2", {
        "fla/__init__.py": "VALUE = 41\n", "pytest/__init__.py": "raise ImportError('shadowed')\n",
    }).parent, deps)
    source = ("import fla\nimport pytest\nimport sys\nassert fla.VALUE == 41\n"
              "assert sys.path[-1] == sys.argv[1], sys.path\n")
    _write(tmp_path, "demo/example.py", source)
    runner.SMALL_SIZES["demo/example.py"] = [str(deps)]
    try:
        record = runner.run_example("demo/example.py", tmp_path.resolve(), "run", 60.0, deps)
        without = runner.run_example("demo/example.py", tmp_path.resolve(), "run", 60.0)
    finally:
        del runner.SMALL_SIZES["demo/example.py"]
    assert record["status"] == "passed", record
    assert without["status"] == "failed" and without["reason"] == "package not installed: fla"


def test_a_folders_own_deps_come_first_for_its_examples_only(tmp_path: Path) -> None:
    deps = tmp_path / "deps"
    runner.unpack_wheels(_wheel(tmp_path / "wheels", "fla_core", "0.3.2", {
        "fla/__init__.py": "VALUE = 32\n"}).parent, deps)
    _write(deps / runner.FOLDER_DEPS_DIR / "gdn", "fla/__init__.py", "VALUE = 22\n")
    for folder, value in (("gdn", 22), ("kda", 32)):
        _write(tmp_path / "scratch", f"{folder}/example.py",
               f"import fla\nassert fla.VALUE == {value}\n")
        record = runner.run_example(f"{folder}/example.py", (tmp_path / "scratch").resolve(),
                                    "run", 60.0, deps)
        assert record["status"] == "passed", (folder, record)
    assert runner.folder_deps(deps, "gdn/example.py") == deps / "by-folder" / "gdn"
    assert runner.folder_deps(deps, "kda/example.py") is None
    assert runner.folder_deps(None, "gdn/example.py") is None


def test_staging_a_package_from_its_git_commit(tmp_path: Path) -> None:
    import subprocess

    source = tmp_path / "fla-source"
    _write(source, "fla/__init__.py", "VALUE = 1\n")
    _write(source, "tests/test_fla.py", "")
    git = ["git", "-C", str(source), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q", str(source)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    _write(source, "fla/__init__.py", "VALUE = 2\n")
    subprocess.run([*git, "commit", "-q", "-am", "two"], check=True)
    package = runner.GitPackage("flash-linear-attention", commit[:8], "fla")
    staged = runner.stage_git_package(str(source), package, tmp_path / "dest")
    assert staged == f"flash-linear-attention@{commit[:8]}"
    assert (tmp_path / "dest" / "fla" / "__init__.py").read_text() == "VALUE = 1\n"
    assert not (tmp_path / "dest" / "tests").exists()


# ---------------------------------------------------------------------------------------------
# the suite: passes, retries, parts


SLEEPER = 'import time, tilelang\nT = "T.Kernel("\ntime.sleep({seconds})\n'


def test_a_timed_out_file_is_retried_with_the_longer_limit(tmp_path: Path) -> None:
    _write(tmp_path, "a/quick.py", SLEEPER.format(seconds=0))
    _write(tmp_path, "a/slow.py", SLEEPER.format(seconds=6))
    _write(tmp_path, "a/never.py", SLEEPER.format(seconds=600))
    result = runner.run_suite(tmp_path, "run", 4.0, None, 3, None, retry_timeout=12.0)
    files = result["files"]
    assert files["a/quick.py"]["status"] == "passed" and "retried" not in files["a/quick.py"]
    assert files["a/slow.py"]["status"] == "passed" and files["a/slow.py"]["retried"]
    assert files["a/slow.py"]["first_try"]["status"] == "timeout"
    assert files["a/never.py"]["status"] == "timeout" and files["a/never.py"]["retried"]
    assert files["a/never.py"]["reason"] == "timeout (over 12 s) in the example"
    assert result["passed_on_retry"] == ["a/slow.py"] and result["passed"] == 2
    assert result["settings"]["retry_timeout_s"] == 12.0


def test_run_alone_files_run_after_the_others_and_only_picks_files(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    stamp = ('import time, tilelang\nT = "T.Kernel("\nimport pathlib\n'
             'p = pathlib.Path({log!r})\np.write_text(p.read_text() + "{name} " '
             'if p.exists() else "{name} ")\n')
    log = str(tmp_path / "order.txt")
    for name in ("a", "b", "heavy"):
        _write(tmp_path / "ex", f"x/{name}.py", stamp.format(log=log, name=name))
    monkeypatch.setattr(runner, "RUN_ALONE", frozenset({"x/a.py"}))
    result = runner.run_suite(tmp_path / "ex", "run", 30.0, ["x/a.py", "*/b.py"], 1, None)
    assert result["passed"] == 2 and "x/heavy.py" not in result["files"]  # --only, twice
    assert (tmp_path / "order.txt").read_text().split() == ["b", "a"]


def test_shortest_first_orders_by_a_previous_runs_seconds(tmp_path: Path) -> None:
    previous = {"files": {"x/slow.py": {"status": "timeout", "seconds": 60.0},
                          "x/quick.py": {"status": "passed", "seconds": 2.0},
                          "x/mid.py": {"status": "failed", "seconds": 9.0},
                          "x/skipped.py": {"status": "not-run", "seconds": 0.0}}}
    seconds = runner.previous_seconds(previous)
    assert "x/skipped.py" not in seconds  # not run: no measure of it
    files = ["x/mid.py", "x/new.py", "x/quick.py", "x/skipped.py", "x/slow.py"]
    # new.py and skipped.py take the median's place (9 s), after mid.py in path order
    assert runner.shortest_first(files, seconds) == [
        "x/quick.py", "x/mid.py", "x/new.py", "x/skipped.py", "x/slow.py"]
    stamp = ('import tilelang\nT = "T.Kernel("\nimport pathlib\np = pathlib.Path({log!r})\n'
             'p.write_text(p.read_text() + "{name} " if p.exists() else "{name} ")\n')
    log = str(tmp_path / "order.txt")
    for name in ("a", "b", "c"):
        _write(tmp_path / "ex", f"x/{name}.py", stamp.format(log=log, name=name))
    order = {"x/a.py": 30.0, "x/b.py": 1.0, "x/c.py": 5.0}
    result = runner.run_suite(tmp_path / "ex", "run", 30.0, None, 1, None, order=order)
    assert result["passed"] == 3 and result["settings"]["shortest_first"]
    assert (tmp_path / "order.txt").read_text().split() == ["b", "c", "a"]


def test_parts_split_the_selection_and_merge_into_one_result(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        _write(tmp_path, f"x/{name}.py", SLEEPER.format(seconds=0))
    _write(tmp_path, "x/bad.py", SLEEPER.format(seconds=0) + "raise ValueError('no')\n")
    first = runner.run_suite(tmp_path, "run", 30.0, None, 2, None, part=runner.Part.parse("1/2"))
    second = runner.run_suite(tmp_path, "run", 30.0, None, 2, None, part=runner.Part.parse("2/2"))
    assert sorted(first["files"]) == ["x/a.py", "x/bad.py"]  # every second file, by path
    assert sorted(second["files"]) == ["x/b.py", "x/c.py"]
    merged = runner.merge_results([first, second])
    assert (merged["passed"], merged["failed"], merged["total"]) == (3, 1, 4)
    assert merged["failure_reasons"][0]["files"] == ["x/bad.py"]
    assert [s["part"] for s in merged["settings"]] == ["1/2", "2/2"]
    with pytest.raises(ValueError, match="two parts"):
        runner.merge_results([first, first])
    with pytest.raises(ValueError, match="K/N"):
        runner.Part.parse("3/2")
