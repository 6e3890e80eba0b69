"""The profiler on the CPU target: inputs drawn as TileLang's TensorSupplyType kinds draw them,
do_bench's counts, backends and return modes (perf_counter timing), assert_allclose and its
mismatch ratio."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
import torch

import tilec
from tilec.errors import TilecError
from tilec.profiler import Profiler, cupti_available, do_bench, summarize
from tilec.utils import TensorSupplyType, get_tensor_supply
from tilec.utils.tensor import random_tensor

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))

from frontend_kernels import row_softmax, scale_shift  # noqa: E402

SLEEP_MS = 2.0


def sleep() -> None:
    time.sleep(SLEEP_MS / 1e3)


@pytest.fixture
def softmax_kernel(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    return tilec.compile(row_softmax(8, 64), out_idx=[-1], target="cpu")


# ----- do_bench ------------------------------------------------------------------------------


def test_do_bench_times_in_milliseconds_on_the_host() -> None:
    times = do_bench(sleep, _n_warmup=1, _n_repeat=6, return_mode="all", device="cpu")
    assert len(times) == 6 and all(SLEEP_MS <= t < 50 * SLEEP_MS for t in times)
    assert SLEEP_MS <= do_bench(sleep, warmup=4, rep=10, device="cpu") < 50 * SLEEP_MS


def test_warmup_and_rep_are_milliseconds() -> None:
    calls = []

    def counted() -> None:
        calls.append(1)
        sleep()

    do_bench(counted, warmup=6, rep=20, device="cpu")
    # one first call, five for the estimate, then at most 6 ms and 20 ms of calls
    assert 1 + 5 + 1 + 1 <= len(calls) <= 1 + 5 + 3 + 10
    calls.clear()
    do_bench(counted, _n_warmup=3, _n_repeat=4, device="cpu")
    assert len(calls) == 1 + 5 + 3 + 4


def test_early_stop_returns_the_estimate() -> None:
    calls = []
    estimate = do_bench(lambda: calls.append(sleep()), device="cpu", early_stop_baseline=0.5)
    assert estimate >= SLEEP_MS and len(calls) == 1 + 5


def test_summaries_and_quantiles() -> None:
    times = [4.0, 1.0, 3.0, 2.0]
    assert summarize(times, None, "mean") == 2.5
    assert summarize(times, None, "median") == 2.5
    assert summarize(times, None, "min") == 1.0 and summarize(times, None, "max") == 4.0
    assert summarize(times, None, "all") == times
    assert summarize(times, [0.5], "mean") == 2.5
    assert summarize(times, [0.0, 1.0, 0.25], "mean") == [1.0, 4.0, 1.75]
    with pytest.raises(TilecError, match="quantiles lie in"):
        summarize(times, [1.5], "mean")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"backend": "nvtx"}, "unknown do_bench backend"),
    ({"return_mode": "p99"}, "unknown do_bench return_mode"),
    ({"backend": "cupti", "device": "cpu"}, "needs a CUDA device"),
    ({"backend": "cudagraph", "device": "cpu"}, "needs a CUDA device"),
])
def test_do_bench_rejects_what_it_cannot_do(kwargs: dict, message: str) -> None:
    with pytest.raises(TilecError, match=message):
        do_bench(sleep, **kwargs)


@pytest.mark.skipif(torch.cuda.is_available() or cupti_available(),
                    reason="checks the fallback where torch's profiler records no GPU kernels")
def test_cupti_without_cupti_warns_and_falls_back() -> None:
    from tilec.profiler import _bench_cupti

    with pytest.warns(RuntimeWarning, match="timing with CUDA events instead"):
        assert _bench_cupti(sleep, torch.empty(4), 2) is None


# ----- inputs ----------------------------------------------------------------------------------


def draw(kind: TensorSupplyType, dtype: str, n: int = 4096) -> torch.Tensor:
    return random_tensor(kind, dtype, [n], "cpu")


def test_tensor_supply_kinds_draw_as_tilelang() -> None:
    auto = draw(TensorSupplyType.Auto, "float16").float()
    assert auto.min() >= -1 and auto.max() <= 1 and 0.5 < auto.std() < 0.65  # f16 rounds to 1
    assert set(draw(TensorSupplyType.Auto, "int32").tolist()) == {-2, -1, 0, 1, 2}
    assert set(draw(TensorSupplyType.Integer, "float32").tolist()) == {-2, -1, 0, 1, 2}
    assert set(draw(TensorSupplyType.Integer, "uint8").tolist()) == {0, 1, 2}
    assert set(draw(TensorSupplyType.Integer, "bool").tolist()) == {False, True}
    fp8 = draw(TensorSupplyType.Integer, "float8_e4m3").float()
    assert torch.equal(fp8, fp8.round()) and fp8.abs().max() <= 128 and fp8.std() > 30
    normal = draw(TensorSupplyType.Normal, "float32")
    assert abs(normal.mean() + 1) < 0.1 and abs(normal.std() - 1) < 0.1  # TileLang's mean -1
    randn = draw(TensorSupplyType.Randn, "bfloat16").float()
    assert abs(randn.mean()) < 0.1 and abs(randn.std() - 1) < 0.1
    uniform = draw(TensorSupplyType.Uniform, "float32")
    assert uniform.min() >= -1 and uniform.max() < 1 and abs(uniform.mean()) < 0.1
    assert torch.equal(draw(TensorSupplyType.Uniform, "int8"), torch.ones(4096, dtype=torch.int8))
    assert not draw(TensorSupplyType.Zero, "float16").any()
    assert draw(TensorSupplyType.One, "int32").eq(1).all()
    assert draw(TensorSupplyType.Auto, "float16").dtype == torch.float16


def test_get_tensor_supply_takes_a_parameter(softmax_kernel) -> None:
    supply = get_tensor_supply(TensorSupplyType.One, device="cpu")
    x = supply(softmax_kernel.params[0])
    assert x.shape == (8, 64) and x.dtype == torch.float32 and x.eq(1).all()


def test_get_profiler_takes_the_supply_type(softmax_kernel) -> None:
    (ones,) = softmax_kernel.get_profiler(TensorSupplyType.One).inputs()
    assert ones.eq(1).all()
    profiler = softmax_kernel.get_profiler(tensor_supply_type=TensorSupplyType.Randn)
    assert profiler.supply_type is TensorSupplyType.Randn
    assert softmax_kernel.get_profiler().supply_type is TensorSupplyType.Auto
    with pytest.raises(TilecError, match="takes a tilec.TensorSupplyType"):
        softmax_kernel.get_profiler("randn")
    assert tilec.TensorSupplyType is TensorSupplyType


def test_inputs_follow_the_parameters(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    kernel = tilec.compile(scale_shift(16, 32), out_idx=[-1], target="cpu")
    a, scale, shift = kernel.get_profiler().inputs()
    assert a.shape == (16, 32) and scale.shape == (16,) and shift.shape == (32,)
    assert a.dtype == torch.float32 and a.std() > 0.5  # uniform in [-1, 1), never zeros


# ----- the profiler object -----------------------------------------------------------------------


def test_run_once_and_func(softmax_kernel) -> None:
    profiler = softmax_kernel.get_profiler(TensorSupplyType.One)
    assert profiler.func is softmax_kernel
    torch.testing.assert_close(profiler.run_once(), torch.full((8, 64), 1 / 64))
    assert profiler.run_once(lambda x: x.sum()).item() == 8 * 64


def test_do_bench_times_the_kernel_and_a_function(softmax_kernel) -> None:
    profiler = softmax_kernel.get_profiler()
    kernel_ms = profiler.do_bench(n_warmup=1, n_repeat=5)
    torch_ms = profiler.do_bench(lambda x: torch.softmax(x, dim=1), warmup=1, rep=5,
                                 backend="event", return_mode="median")
    assert kernel_ms > 0 and torch_ms > 0
    x = torch.randn(8, 64)
    assert len(profiler.do_bench(input_tensors=[x], n_repeat=3, return_mode="all")) == 3
    with pytest.raises(TilecError, match="needs a CUDA device"):
        profiler.do_bench(backend="cupti")
    assert isinstance(tilec.Profiler(softmax_kernel), Profiler)


def test_assert_allclose_accepts_the_right_reference(softmax_kernel) -> None:
    profiler = softmax_kernel.get_profiler()
    profiler.assert_allclose(lambda x: torch.softmax(x.double(), dim=1), atol=1e-5, rtol=1e-5)


def test_assert_allclose_rejects_a_wrong_reference(softmax_kernel) -> None:
    profiler = softmax_kernel.get_profiler()
    with pytest.raises(AssertionError, match="output 0: .* elements mismatched"):
        profiler.assert_allclose(lambda x: torch.softmax(x.double(), dim=0))


def test_assert_allclose_reports_the_mismatch_ratio(softmax_kernel) -> None:
    def one_row_wrong(x: torch.Tensor) -> torch.Tensor:
        expected = torch.softmax(x.double(), dim=1)
        expected[3] += 1.0
        return expected

    profiler = softmax_kernel.get_profiler()
    profiler.assert_allclose(one_row_wrong, atol=1e-5, rtol=1e-5, max_mismatched_ratio=0.2)
    with pytest.raises(AssertionError, match=r"64 of 512 elements mismatched \(12.5000%; at "
                                             r"most 10.0000% allowed"):
        profiler.assert_allclose(one_row_wrong, atol=1e-5, rtol=1e-5, max_mismatched_ratio=0.1)



# ----- the CUDA timing path, on a fake CUDA clock --------------------------------------------


class FakeEvent:
    """A CUDA event whose timestamp is the host clock when it is recorded."""

    def __init__(self, enable_timing: bool = False):
        assert enable_timing
        self.at: float | None = None

    def record(self) -> None:
        self.at = time.perf_counter()

    def elapsed_time(self, end: FakeEvent) -> float:
        return (end.at - self.at) * 1e3


@pytest.fixture
def fake_cuda(monkeypatch):
    """torch.cuda's events and synchronize on the host clock; "cuda" tensors on the CPU."""
    real_empty = torch.empty
    flushes = []

    def empty(*shape, device=None, **kwargs):
        tensor = real_empty(*shape, **kwargs)
        if device == "cuda":
            flushes.append(tensor)
        return tensor

    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *args: None)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch, "empty", empty)
    return flushes


def test_cuda_path_times_with_events_and_flushes_l2(fake_cuda) -> None:
    calls = []

    def counted() -> None:
        calls.append(1)
        sleep()

    times = do_bench(counted, _n_warmup=2, _n_repeat=5, return_mode="all", cache_size=1)
    assert len(times) == 5 and all(t >= SLEEP_MS for t in times)
    assert len(calls) == 1 + 5 + 2 + 5
    (flush,) = fake_cuda
    assert flush.numel() * flush.element_size() == 1024 * 1024 and flush.dtype == torch.int32
    assert do_bench(counted, warmup=4, rep=10, cache_size=1, fast_flush=False) >= SLEEP_MS
    assert fake_cuda[1].dtype == torch.int8


def test_l2_flush_reads_writes_or_leaves_l2(fake_cuda, monkeypatch) -> None:
    """"read" sums the flush buffer (clean lines, no write-back inside the timed call),
    "write" zeroes it, "none" allocates and runs nothing; an unknown kind is an error."""
    sums = []
    real_sum = torch.sum
    monkeypatch.setattr(torch, "sum", lambda *args, **kwargs: sums.append(args[0])
                        or real_sum(*args, **kwargs))
    do_bench(sleep, _n_warmup=1, _n_repeat=3, cache_size=1, l2_flush="read")
    buffer = fake_cuda[0]
    assert len(sums) == 5 + 3 and all(tensor is buffer for tensor in sums)
    fake_cuda.clear()
    do_bench(sleep, _n_warmup=1, _n_repeat=3, cache_size=1, l2_flush="none")
    assert fake_cuda == [] and len(sums) == 8
    with pytest.raises(TilecError, match="unknown do_bench l2_flush 'dirty'"):
        do_bench(sleep, l2_flush="dirty")


def test_the_estimate_counts_the_flush_as_tilelang_does(fake_cuda) -> None:
    """warmup and rep are milliseconds of calls with their L2 flushes: a kernel shorter than
    the flush runs rep / (flush + call) times, not rep / call (TileLang's counts; the examples'
    do_bench of microsecond kernels ran twenty thousand flushes)."""
    flush = torch.empty(64 * 1024 * 1024 // 4, dtype=torch.int32)
    start = time.perf_counter()
    for _ in range(3):
        flush.zero_()
    flush_ms = (time.perf_counter() - start) * 1e3 / 3
    calls = []

    def one_ms() -> None:
        calls.append(1)
        time.sleep(1e-3)

    do_bench(one_ms, warmup=20, rep=40, cache_size=64)
    # by the call alone: 1 + 5 + 20 + 40 calls
    assert flush_ms > 2.0 and len(calls) <= 1 + 5 + 2 + 60 / flush_ms


def test_early_stop_compares_the_calls_without_their_flushes(fake_cuda) -> None:
    """A call under the baseline runs in full, however long its flush takes."""
    calls = []

    def one_ms() -> None:
        calls.append(1)
        time.sleep(1e-3)

    # zeroing 256 MiB takes past 20 ms on a CPU; the call alone 1 ms
    do_bench(one_ms, _n_warmup=1, _n_repeat=3, cache_size=256, early_stop_baseline=20.0)
    assert len(calls) == 1 + 5 + 1 + 3
    calls.clear()
    assert do_bench(one_ms, cache_size=1, early_stop_baseline=0.5) >= 1.0
    assert len(calls) == 1 + 5


@pytest.mark.skipif(cupti_available(), reason="checks the fallback without CUPTI")
def test_cupti_falls_back_to_events_with_a_warning(fake_cuda) -> None:
    with pytest.warns(RuntimeWarning, match="timing with CUDA events instead"):
        times = do_bench(sleep, _n_warmup=1, _n_repeat=3, backend="cupti", return_mode="all",
                         cache_size=1)
    assert len(times) == 3 and min(times) >= SLEEP_MS


def test_checking_a_kernel_that_returns_nothing_says_out_idx(tmp_path: Path, monkeypatch
                                                             ) -> None:
    """Without out_idx the kernel returns None: assert_allclose failed as an AttributeError
    ('NoneType' object has no attribute 'shape') from inside the profiler."""
    monkeypatch.setenv("TILEC_CACHE_DIR", str(tmp_path))
    kernel = tilec.compile(row_softmax(8, 64), target="cpu")
    with pytest.raises(TilecError, match="returns none: compile it with out_idx"):
        kernel.get_profiler().assert_allclose(lambda x: torch.softmax(x, -1))
