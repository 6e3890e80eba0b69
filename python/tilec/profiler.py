"""`kernel.get_profiler()`: timing and checking a compiled kernel as TileLang's profiler does.

`do_bench` times with CUDA events on a GPU (median of many runs after a warm-up, the L2 cache
flushed before each run) and with `time.perf_counter` on the CPU target. `assert_allclose`
runs the kernel and a reference on the same random inputs drawn from the kernel's parameters.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

from tilec.errors import LaunchError
from tilec.runtime.artifact import Param

L2_FLUSH_BYTES = 256 * 1024 * 1024  # larger than any L2 (60 MB on an H200)


class Profiler:
    """Times and checks `kernel` (a compiled tilec kernel object) on random inputs.

    `symbols` gives sizes for the dynamic dimensions of the kernel's parameters (a kernel
    specialized on its arguments' shapes has none).
    """

    def __init__(self, kernel: Any, symbols: dict[str, int] | None = None, seed: int = 0):
        self.kernel = kernel
        self.symbols = dict(symbols or {})
        self.seed = seed
        self.on_gpu = str(kernel.target).startswith("cuda")

    # ----- inputs ------------------------------------------------------------------------
    def _size(self, dim: int | str, param: Param) -> int:
        if isinstance(dim, int):
            return dim
        if dim not in self.symbols:
            raise LaunchError(f"the profiler needs a size for '{dim}' (parameter "
                              f"'{param.name}'): get_profiler(symbols={{'{dim}': ...}})")
        return self.symbols[dim]

    def _random(self, param: Param, generator: Any) -> Any:
        import torch

        from tilec.jit import torch_dtype

        device = "cuda" if self.on_gpu else "cpu"
        dtype = torch_dtype(param.dtype)
        if param.kind == "scalar":
            return 1.0 if dtype.is_floating_point else 1
        shape = [self._size(d, param) for d in param.shape]
        if dtype == torch.bool:
            return torch.rand(shape, generator=generator).lt(0.5).to(device)
        if dtype.is_floating_point:
            values = torch.randn(shape, generator=generator, dtype=torch.float32)
            return values.to(device=device, dtype=dtype)
        return torch.randint(-4, 5, shape, generator=generator).to(device=device, dtype=dtype)

    def inputs(self) -> list[Any]:
        """Fresh random inputs (normal floats, small integers), one per input parameter."""
        import torch

        generator = torch.Generator().manual_seed(self.seed)
        self.seed += 1
        return [self._random(p, generator) for p in self.kernel.params if not p.is_output]

    # ----- timing ------------------------------------------------------------------------
    def do_bench(self, fn: Callable | None = None, warmup: float = 25, rep: float = 100,
                 n_warmup: int | None = None, n_repeat: int | None = None,
                 input_tensors: Sequence[Any] | None = None, flush_l2: bool = True) -> float:
        """Median milliseconds of `fn(*inputs)` (the kernel when fn is None). `warmup` and
        `rep` are milliseconds of warm-up and of measurement; n_warmup / n_repeat fix the
        counts instead."""
        args = list(input_tensors) if input_tensors is not None else self.inputs()
        target = fn if fn is not None else self.kernel

        def run() -> Any:
            return target(*args)

        if self.on_gpu:
            return self._bench_gpu(run, warmup, rep, n_warmup, n_repeat, flush_l2)
        return self._bench_cpu(run, warmup, rep, n_warmup, n_repeat)

    @staticmethod
    def _counts(estimate_ms: float, warmup: float, rep: float, n_warmup: int | None,
                n_repeat: int | None) -> tuple[int, int]:
        estimate_ms = max(estimate_ms, 1e-4)
        warm = n_warmup if n_warmup is not None else max(1, int(warmup / estimate_ms))
        repeat = n_repeat if n_repeat is not None else max(5, int(rep / estimate_ms))
        return warm, min(repeat, 10_000)

    def _bench_gpu(self, run: Callable, warmup: float, rep: float, n_warmup: int | None,
                   n_repeat: int | None, flush_l2: bool) -> float:
        import torch

        flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
        run()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            run()
        end.record()
        torch.cuda.synchronize()
        warm, repeat = self._counts(start.elapsed_time(end) / 5, warmup, rep, n_warmup, n_repeat)
        for _ in range(warm):
            run()
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(repeat)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(repeat)]
        for first, last in zip(starts, ends, strict=True):
            if flush_l2:
                flush.zero_()
            first.record()
            run()
            last.record()
        torch.cuda.synchronize()
        return statistics.median(a.elapsed_time(b) for a, b in zip(starts, ends, strict=True))

    def _bench_cpu(self, run: Callable, warmup: float, rep: float, n_warmup: int | None,
                   n_repeat: int | None) -> float:
        began = time.perf_counter()
        run()
        estimate_ms = (time.perf_counter() - began) * 1e3
        warm, repeat = self._counts(estimate_ms, warmup, rep, n_warmup, n_repeat)
        for _ in range(warm):
            run()
        times = []
        for _ in range(repeat):
            began = time.perf_counter()
            run()
            times.append((time.perf_counter() - began) * 1e3)
        return statistics.median(times)

    # ----- checking ----------------------------------------------------------------------
    def run_poisoned(self, *inputs: Any) -> Any:
        """Run the kernel so that its outputs land on memory filled with NaN (integers: their
        minimum), so an element the kernel never writes cannot pass a check.

        The kernel allocates its outputs; a first call gives their sizes, poison tensors of
        those sizes are made and freed, and torch's caching allocator hands the same blocks to
        the second call's outputs (checked on the GPU, where the allocator caches).
        """
        import torch

        first = self.kernel(*inputs)
        outputs = first if isinstance(first, (tuple, list)) else (first,)
        specs = [(tuple(o.shape), o.dtype, o.device) for o in outputs]
        del first, outputs
        poison = [torch.full(shape, _poison_value(dtype), dtype=dtype, device=device)
                  for shape, dtype, device in specs]
        addresses = {p.data_ptr() for p in poison}
        del poison
        produced = self.kernel(*inputs)
        results = produced if isinstance(produced, (tuple, list)) else (produced,)
        if self.on_gpu and {r.data_ptr() for r in results} != addresses:
            raise AssertionError("the kernel's outputs did not reuse the poisoned blocks")
        return produced

    def assert_allclose(self, reference_fn: Callable, atol: float = 1e-2, rtol: float = 1e-2,
                        max_mismatched_ratio: float = 0.0,
                        input_tensors: Sequence[Any] | None = None) -> None:
        """Run the kernel and `reference_fn` on the same inputs (`input_tensors`, else random
        ones); their outputs must agree within atol + rtol * |reference| (up to
        `max_mismatched_ratio` of elements)."""
        import torch

        args = list(input_tensors) if input_tensors is not None else self.inputs()
        produced = self.run_poisoned(*args)
        expected = reference_fn(*args)
        produced = list(produced) if isinstance(produced, (tuple, list)) else [produced]
        expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
        if len(produced) != len(expected):
            raise AssertionError(f"the kernel returned {len(produced)} outputs, the reference "
                                 f"{len(expected)}")
        for number, (out, ref) in enumerate(zip(produced, expected, strict=True)):
            out = torch.as_tensor(out).double().cpu()
            ref = torch.as_tensor(ref).double().cpu()
            if out.shape != ref.shape:
                raise AssertionError(f"output {number}: shape {tuple(out.shape)}, reference "
                                     f"{tuple(ref.shape)}")
            bad = ~torch.isclose(out, ref, rtol=rtol, atol=atol)
            ratio = bad.sum().item() / max(1, bad.numel())
            if ratio > max_mismatched_ratio:
                error = (out - ref).abs().nan_to_num(float("inf")).max().item()
                raise AssertionError(
                    f"output {number}: {bad.sum().item()} of {bad.numel()} elements differ "
                    f"(max abs error {error:.4g}, atol {atol}, rtol {rtol})")


def _poison_value(dtype: Any) -> float | int | bool:
    import torch

    if dtype == torch.bool:
        return True
    if dtype.is_floating_point:
        return float("nan")
    return torch.iinfo(dtype).min
