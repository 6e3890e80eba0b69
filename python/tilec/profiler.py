"""Timing and checking kernels as TileLang's profiler does: `do_bench` and `kernel.get_profiler()`.

`do_bench(fn, warmup=25, rep=100)` calls `fn()` for about `warmup` milliseconds, then about
`rep` milliseconds more, timing each call (the counts come from a first estimate of one call
with its L2 flush, as TileLang's do_bench counts them; `_n_warmup` / `_n_repeat` fix them
instead). On a GPU the L2 cache is flushed before each timed call, as `l2_flush` says:

- "write" (TileLang's and Triton's): a 256 MiB buffer zeroed, which leaves L2 full of dirty
  lines whose write-back to DRAM then falls inside the timed call (about 12 µs on an H200's
  50 MB L2 at its copy bandwidth: the floor of a call that reads more than L2 holds);
- "read": the buffer summed, which leaves clean lines a call evicts for nothing;
- "none": L2 as the previous call left it.

The backends are:

- "event": a pair of CUDA events around each call;
- "cudagraph": the calls captured in one CUDA graph, replayed ten times, each replay's time
  divided by the calls it holds (no launch overhead in the numbers); calls that cannot be
  captured are timed with "event" after a warning;
- "cupti": the kernels' own durations as torch's profiler (Kineto/CUPTI) records them, summed
  without the flushes and divided by the number of calls. Where torch was built without CUPTI
  or records no GPU activity, do_bench warns and times with "event" instead.

Without a GPU (or with `device="cpu"`: CPU kernels) each call is timed with
`time.perf_counter`; only "event" has a meaning there, the other backends are a TilecError.

`return_mode` picks what comes back from the per-call times: "mean" (TileLang's default),
"median", "min", "max", or "all" (the list); `quantiles=[0.5, 0.9]` returns those instead
(linear interpolation, one quantile as a float). "cupti" measures one average, which every mode
returns.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time
import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Literal, get_args

from tilec.errors import LaunchError, TilecError
from tilec.utils.tensor import TensorSupplyType, random_tensor, torch_assert_close

Backend = Literal["event", "cupti", "cudagraph"]
ReturnMode = Literal["min", "max", "mean", "median", "all"]
L2Flush = Literal["write", "read", "none"]
L2_FLUSHES: tuple[str, ...] = get_args(L2Flush)
BACKENDS = ("event", "cupti", "cudagraph")
RETURN_MODES = ("min", "max", "mean", "median", "all")
ESTIMATE_CALLS = 5
GRAPH_REPLAYS = 10
FLUSH_RANGE = "tilec.profiler.l2_flush"  # the profiler range around each flush (cupti)
MIN_ESTIMATE_MS = 1e-4  # a call never counts as shorter (no division by zero)


def do_bench(fn: Callable[[], Any], warmup: float = 25, rep: float = 100, _n_warmup: int = 0,
             _n_repeat: int = 0, quantiles: Sequence[float] | None = None,
             fast_flush: bool = True, backend: Backend = "event",
             return_mode: ReturnMode = "mean", device: Any = None, cache_size: int = 256,
             early_stop_baseline: float | None = None,
             l2_flush: L2Flush = "write") -> float | list[float]:
    """Milliseconds per call of `fn()` (see the module docstring). `cache_size` is the L2
    flush buffer in MiB (int32 elements with fast_flush, else bytes); with
    `early_stop_baseline`, a first estimate above it is returned without the full run."""
    if l2_flush not in L2_FLUSHES:
        raise TilecError(f"unknown do_bench l2_flush {l2_flush!r}; known: "
                         f"{', '.join(L2_FLUSHES)}")
    if backend not in BACKENDS:
        raise TilecError(f"unknown do_bench backend {backend!r}; known: {', '.join(BACKENDS)}")
    if return_mode not in RETURN_MODES:
        raise TilecError(f"unknown do_bench return_mode {return_mode!r}; known: "
                         f"{', '.join(RETURN_MODES)}")
    counts = (warmup, rep, _n_warmup, _n_repeat, early_stop_baseline)
    if _on_host(device):
        if backend != "event":
            raise TilecError(f"do_bench backend {backend!r} times GPU kernels and needs a CUDA "
                             "device; on the CPU use backend='event' (perf_counter)")
        times = _bench_host(fn, *counts)
    else:
        times = _bench_cuda(fn, counts, backend, device, cache_size, fast_flush, l2_flush)
    return summarize(times, quantiles, return_mode)


def _on_host(device: Any) -> bool:
    if device is not None:
        return str(device) == "cpu"
    try:
        import torch
    except ImportError:
        return True
    return not torch.cuda.is_available()


def _counts(estimate_ms: float, warmup: float, rep: float, n_warmup: int,
            n_repeat: int) -> tuple[int, int]:
    estimate_ms = max(estimate_ms, MIN_ESTIMATE_MS)
    warm = n_warmup if n_warmup > 0 else max(1, int(warmup / estimate_ms))
    repeat = n_repeat if n_repeat > 0 else max(1, int(rep / estimate_ms))
    return warm, repeat


def summarize(times: Sequence[float], quantiles: Sequence[float] | None,
              return_mode: ReturnMode) -> float | list[float]:
    """What do_bench returns from per-call times (see the module docstring)."""
    if quantiles is not None:
        values = [_quantile(sorted(times), q) for q in quantiles]
        return values[0] if len(values) == 1 else values
    if return_mode == "all":
        return list(times)
    pick = {"min": min, "max": max, "mean": statistics.fmean, "median": statistics.median}
    return pick[return_mode](times)


def _quantile(ordered: Sequence[float], q: float) -> float:
    if not 0.0 <= q <= 1.0:
        raise TilecError(f"do_bench quantiles lie in [0, 1], got {q}")
    position = q * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _bench_host(fn: Callable[[], Any], warmup: float, rep: float, n_warmup: int, n_repeat: int,
                early_stop_baseline: float | None) -> list[float]:
    def timed() -> float:
        began = time.perf_counter()
        fn()
        return (time.perf_counter() - began) * 1e3

    fn()
    estimate = statistics.fmean(timed() for _ in range(ESTIMATE_CALLS))
    if early_stop_baseline is not None and estimate > early_stop_baseline:
        return [estimate]
    warm, repeat = _counts(estimate, warmup, rep, n_warmup, n_repeat)
    for _ in range(warm):
        fn()
    return [timed() for _ in range(repeat)]


def _cuda_device(device: Any) -> Any:
    """A context selecting `device` (an index, "cuda:1", a torch.device); None: the current."""
    import torch

    if device is None:
        return contextlib.nullcontext()
    chosen = torch.device(f"cuda:{device}" if isinstance(device, int) else device)
    if chosen.type != "cuda":
        raise TilecError(f"do_bench runs on a CUDA device or on 'cpu', got {device!r}")
    return torch.cuda.device(chosen)


def _bench_cuda(fn: Callable[[], Any], counts: tuple, backend: Backend, device: Any,
                cache_size: int, fast_flush: bool, l2_flush: L2Flush) -> list[float]:
    import torch

    warmup, rep, n_warmup, n_repeat, early_stop_baseline = counts
    with _cuda_device(device):
        fn()
        torch.cuda.synchronize()
        flush = _l2_flush(l2_flush, cache_size, fast_flush)
        start, end = _event(), _event()
        calls = [(_event(), _event()) for _ in range(ESTIMATE_CALLS)]
        start.record()
        for first, last in calls:  # each call with its flush, as the timed calls have
            flush()
            first.record()
            fn()
            last.record()
        end.record()
        torch.cuda.synchronize()
        # the counts from the calls with their flushes (TileLang's); early stopping compares
        # the calls alone with the baseline (a best latency, itself without flushes)
        estimate = sum(first.elapsed_time(last) for first, last in calls) / ESTIMATE_CALLS
        if early_stop_baseline is not None and estimate > early_stop_baseline:
            return [estimate]
        warm, repeat = _counts(start.elapsed_time(end) / ESTIMATE_CALLS, warmup, rep, n_warmup,
                               n_repeat)
        for _ in range(warm):
            fn()
        if backend == "cupti":
            measured = _bench_cupti(fn, flush, repeat)
            if measured is not None:
                return measured
        if backend == "cudagraph":
            measured = _bench_cudagraph(fn, flush, repeat)
            if measured is not None:
                return measured
        return _bench_events(fn, flush, repeat)


def _l2_flush(kind: L2Flush, cache_size: int, fast_flush: bool) -> Callable[[], Any]:
    """What runs before each timed call (the module docstring's `l2_flush`)."""
    import torch

    if kind == "none":
        return lambda: None
    element = torch.int32 if fast_flush else torch.int8
    buffer = torch.empty(cache_size * 1024 * 1024 // element.itemsize, dtype=element,
                         device="cuda")
    if kind == "write":
        return buffer.zero_
    total = torch.empty((), dtype=torch.int64, device="cuda")
    return partial(torch.sum, buffer, 0, out=total)


def _event() -> Any:
    import torch

    return torch.cuda.Event(enable_timing=True)


def _bench_events(fn: Callable[[], Any], flush: Callable[[], Any],
                  repeat: int) -> list[float]:
    import torch

    pairs = [(_event(), _event()) for _ in range(repeat)]
    for first, last in pairs:
        flush()
        first.record()
        fn()
        last.record()
    torch.cuda.synchronize()
    return [first.elapsed_time(last) for first, last in pairs]


def _bench_cudagraph(fn: Callable[[], Any], flush: Callable[[], Any],
                     repeat: int) -> list[float] | None:
    """Per-call times from graph replays; None (after a warning) where `fn` cannot be captured
    (it synchronizes, or copies from pageable host memory)."""
    import torch

    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                for _ in range(repeat):
                    fn()
        except RuntimeError as error:
            warnings.warn(f"do_bench(backend='cudagraph'): the calls cannot be captured in a "
                          f"CUDA graph ({error}); timing with CUDA events instead",
                          RuntimeWarning, stacklevel=4)
            return None
        torch.cuda.synchronize()
        pairs = [(_event(), _event()) for _ in range(GRAPH_REPLAYS)]
        for first, last in pairs:
            flush()
            first.record()
            graph.replay()
            last.record()
        torch.cuda.synchronize()
    return [first.elapsed_time(last) / repeat for first, last in pairs]


def cupti_available() -> bool:
    """Whether torch's profiler can record GPU kernels here (Kineto built with CUPTI)."""
    import torch

    try:
        activities = torch.profiler.supported_activities()
    except (AttributeError, RuntimeError):
        return False
    return torch.profiler.ProfilerActivity.CUDA in activities


def _bench_cupti(fn: Callable[[], Any], flush: Callable[[], Any],
                 repeat: int) -> list[float] | None:
    """The mean GPU time of one call from the profiler's kernel records; None (after a
    warning) where the profiler records no GPU activity."""
    import torch

    if cupti_available():
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=activities) as profile:
            for _ in range(repeat):
                with torch.profiler.record_function(FLUSH_RANGE):
                    flush()
                fn()
            torch.cuda.synchronize()
        total_us = flushed_us = 0.0
        for event in profile.events():
            if getattr(event.device_type, "name", "") != "CUDA":
                continue
            if event.is_user_annotation:
                if event.key == FLUSH_RANGE:
                    flushed_us += event.self_device_time_total
            else:
                total_us += event.self_device_time_total
        if total_us > 0:
            return [(total_us - flushed_us) / repeat / 1e3]
    warnings.warn("do_bench(backend='cupti'): torch's profiler records no GPU kernels here "
                  "(no CUPTI); timing with CUDA events instead", RuntimeWarning, stacklevel=3)
    return None


class Profiler:
    """Times and checks `kernel` (a compiled tilec kernel) on inputs made for its parameters.

    `tensor_supply_type` says how inputs are filled (tilec.utils.tensor); `symbols` gives sizes
    to the dynamic dimensions of its parameters (a kernel specialized on shapes has none).
    """

    def __init__(self, kernel: Any, tensor_supply_type: TensorSupplyType = TensorSupplyType.Auto,
                 symbols: dict[str, int] | None = None):
        if not isinstance(tensor_supply_type, TensorSupplyType):
            raise TilecError(f"get_profiler takes a tilec.TensorSupplyType, got "
                             f"{tensor_supply_type!r}")
        self.kernel = kernel
        self.supply_type = tensor_supply_type
        self.symbols = dict(symbols or {})
        self.on_gpu = str(kernel.target).startswith("cuda")

    @property
    def func(self) -> Any:
        """The kernel itself (TileLang's profiler.func)."""
        return self.kernel

    def __call__(self, *args: Any) -> Any:
        return self.kernel(*args)

    # ----- inputs ------------------------------------------------------------------------
    def _size(self, dim: int | str, symbols: dict[str, int], name: str) -> int:
        if isinstance(dim, int):
            return dim
        if dim not in symbols:
            raise LaunchError(f"the profiler needs a size for '{dim}' (parameter '{name}'): "
                              f"get_profiler(symbols={{'{dim}': ...}})")
        return symbols[dim]

    def inputs(self, symbols: dict[str, int] | None = None) -> list[Any]:
        """Fresh inputs, one per input parameter, filled as the supply type says (scalars: 1)."""
        from tilec.jit import stored_shape

        sizes = {**self.symbols, **(symbols or {})}
        device = "cuda" if self.on_gpu else "cpu"
        made = []
        for param in (p for p in self.kernel.params if not p.is_output):
            if param.kind == "scalar":
                made.append(1.0 if param.dtype.startswith(("float", "bfloat")) else 1)
                continue
            shape = [self._size(d, sizes, param.name) for d in stored_shape(param)]
            made.append(random_tensor(self.supply_type, param.dtype, shape, device))
        return made

    def run_once(self, func: Callable | None = None) -> Any:
        """`func` (the kernel when None) on fresh inputs."""
        return (func or self.kernel)(*self.inputs())

    # ----- timing ------------------------------------------------------------------------
    def do_bench(self, func: Callable | None = None, warmup: float = 25, rep: float = 100,
                 n_warmup: int = 0, n_repeat: int = 0,
                 input_tensors: Sequence[Any] | None = None, backend: Backend = "event",
                 quantiles: Sequence[float] | None = None, return_mode: ReturnMode = "mean",
                 dynamic_symbolic_constraints: dict[str, int] | None = None,
                 device: Any = None, early_stop_baseline: float | None = None,
                 l2_flush: L2Flush = "write") -> float | list[float]:
        """Milliseconds of `func(*inputs)` (the kernel when None), as tilec.profiler.do_bench
        times it; inputs are `input_tensors` or fresh ones (`dynamic_symbolic_constraints`
        sizing dynamic dimensions)."""
        if input_tensors is not None:
            args = list(input_tensors)
        else:
            args = self.inputs(dynamic_symbolic_constraints)
        chosen = device if device is not None else (None if self.on_gpu else "cpu")
        return do_bench(partial(func or self.kernel, *args), warmup=warmup, rep=rep,
                        _n_warmup=n_warmup, _n_repeat=n_repeat, quantiles=quantiles,
                        backend=backend, return_mode=return_mode, device=chosen,
                        early_stop_baseline=early_stop_baseline, l2_flush=l2_flush)

    # ----- checking ----------------------------------------------------------------------
    def run_poisoned(self, *inputs: Any) -> Any:
        """Run the kernel so that its outputs land on memory filled with NaN (integers: their
        minimum), so an element the kernel never writes cannot pass a check.

        The kernel allocates its outputs; a first call gives their sizes, poison tensors of
        those sizes are made and freed, and torch's caching allocator hands the same blocks to
        the second call's outputs (checked on the GPU where the allocator caches: with
        PYTORCH_NO_CUDA_MEMORY_CACHING=1, as under compute-sanitizer, each tensor is a
        cudaMalloc of its own that nothing hands back, and initcheck stands in for the poison).
        """
        import torch

        first = self.kernel(*inputs)
        if first is None:  # its outputs' .shape failed as an AttributeError of None
            raise TilecError("the profiler checks the tensors a kernel returns, and this one "
                             "returns none: compile it with out_idx naming its output "
                             "parameters (tilec.compile(func, out_idx=[-1]))")
        outputs = first if isinstance(first, (tuple, list)) else (first,)
        specs = [(tuple(o.shape), o.dtype, o.device) for o in outputs]
        del first, outputs
        poison = [torch.full(shape, _poison_value(dtype), dtype=dtype, device=device)
                  for shape, dtype, device in specs]
        addresses = {p.data_ptr() for p in poison}
        del poison
        produced = self.kernel(*inputs)
        results = produced if isinstance(produced, (tuple, list)) else (produced,)
        caching = os.environ.get("PYTORCH_NO_CUDA_MEMORY_CACHING", "0") != "1"
        if self.on_gpu and caching and {r.data_ptr() for r in results} != addresses:
            raise AssertionError("the kernel's outputs did not reuse the poisoned blocks")
        return produced

    def assert_allclose(self, reference_program: Callable,
                        input_tensors: Sequence[Any] | None = None, atol: float = 1e-2,
                        rtol: float = 1e-2, max_mismatched_ratio: float = 0.01) -> None:
        """Run the kernel (outputs poisoned first) and `reference_program` on the same inputs:
        every output must agree within atol + rtol * |reference| except for at most
        `max_mismatched_ratio` of its elements (TileLang's default 1%); the error gives the
        ratio found. A reference output None is not compared."""
        args = list(input_tensors) if input_tensors is not None else self.inputs()
        produced = _as_list(self.run_poisoned(*args))
        expected = _as_list(reference_program(*args))
        if len(produced) != len(expected):
            raise AssertionError(f"the kernel returned {len(produced)} outputs, the reference "
                                 f"{len(expected)}")
        for number, (out, ref) in enumerate(zip(produced, expected, strict=True)):
            if ref is None:
                continue
            try:
                torch_assert_close(out, ref, rtol=rtol, atol=atol,
                                   max_mismatched_ratio=max_mismatched_ratio, check_device=False,
                                   check_dtype=False, base_name="tilec", ref_name="reference")
            except AssertionError as error:
                raise AssertionError(f"output {number}: {error}") from None


def _as_list(result: Any) -> list[Any]:
    if result is None:
        return []
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _poison_value(dtype: Any) -> float | int | bool:
    import torch

    if dtype == torch.bool:
        return True
    if dtype.is_floating_point:
        return float("nan")
    return torch.iinfo(dtype).min
