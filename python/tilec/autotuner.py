"""`@tilec.autotune(configs=...)` over `@tilec.jit`: TileLang's autotuner interface.

For each problem (the call's shapes, dtypes and non-tuned arguments) the tuner compiles every
configuration, times each on random inputs with the kernel's profiler, and keeps the fastest.

Compiling and timing may happen on different machines: `tuner.precompile(...)` on a machine
with the compiler fills the kernel cache (TILEC_CACHE_DIR) for every configuration, in parallel
processes; on a GPU machine without MLIR the same call then finds every kernel in that cache and
only times them.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from tilec import cache
from tilec.errors import TilecError
from tilec.jit import (
    JITFunction,
    JITKernel,
    Specialization,
    compile_specialization,
    tensor_arguments,
)

Config = dict[str, Any]


@dataclass
class TuneResult:
    """The winner for one problem, and every configuration's time (None: failed to compile)."""

    config: Config
    kernel: JITKernel
    latency_ms: float
    timings: list[tuple[Config, float | None]]


# Filled in the parent just before the pool forks, so children compile without pickling kernels.
_PENDING: list[Specialization] = []


def _compile(spec: Specialization) -> str | None:
    """Compile one configuration into the cache; the error text if it does not compile."""
    try:
        compile_specialization(spec)
    except TilecError as error:
        return str(error)
    return None


def _compile_pending(index: int) -> str | None:
    """In a forked child: compile `_PENDING[index]` into the disk cache."""
    return _compile(_PENDING[index])


class AutoTuner:
    """Wraps a JITFunction; calling it tunes once per problem, then reuses the winner."""

    def __init__(self, fn: JITFunction, configs: Sequence[Config] | Callable[..., Sequence[Config]],
                 warmup: float = 25, rep: float = 100, ref_prog: Callable | None = None,
                 atol: float = 1e-2, rtol: float = 1e-2, skip_check: bool = False,
                 max_workers: int | None = None):
        if not isinstance(fn, JITFunction):
            raise TilecError("@tilec.autotune goes above @tilec.jit: "
                             "@autotune(configs=...) then @jit on the function")
        self.fn = fn
        self.configs = configs
        self.warmup = warmup
        self.rep = rep
        self.ref_prog = ref_prog
        self.atol = atol
        self.rtol = rtol
        self.skip_check = skip_check
        self.max_workers = max_workers
        self.results: dict[Any, TuneResult] = {}

    def _configs_for(self, args: tuple, kwargs: dict) -> list[Config]:
        configs = self.configs(*args, **kwargs) if callable(self.configs) else self.configs
        configs = [dict(config) for config in configs]
        if not configs:
            raise TilecError(f"autotune of {self.fn.__name__}: no configurations to try",
                             *self.fn.location)
        return configs

    def _specializations(self, args: tuple, kwargs: dict,
                         target: str | None) -> tuple[list[Config], list[Specialization]]:
        configs = self._configs_for(args, kwargs)
        specs = [self.fn.specialize(args, {**kwargs, **config}, target) for config in configs]
        return configs, specs

    def precompile(self, *args: Any, target: str | None = None, **kwargs: Any) -> list[str | None]:
        """Compile every configuration for this problem into the kernel cache, in parallel.

        Returns, per configuration, None or the error that kept it from compiling.
        """
        _, specs = self._specializations(args, kwargs, target)
        missing = [i for i, spec in enumerate(specs) if cache.lookup(spec.key) is None]
        errors: list[str | None] = [None] * len(specs)
        workers = min(len(missing), self.max_workers or os.cpu_count() or 1)
        if workers <= 1 or not cache.is_enabled():
            for i in missing:
                errors[i] = _compile(specs[i])
            return errors
        _PENDING[:] = specs
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            for i, error in zip(missing, pool.map(_compile_pending, missing), strict=True):
                errors[i] = error
        _PENDING.clear()
        return errors

    def tune(self, *args: Any, target: str | None = None, **kwargs: Any) -> TuneResult:
        """Compile (or find in the cache) and time every configuration; the fastest wins."""
        configs, specs = self._specializations(args, kwargs, target)
        errors = self.precompile(*args, target=target, **kwargs)
        timings: list[tuple[Config, float | None]] = []
        best: tuple[float, Config, JITKernel] | None = None
        for config, spec, error in zip(configs, specs, errors, strict=True):
            if error is not None:
                timings.append((config, None))
                continue
            kernel = compile_specialization(spec)
            profiler = kernel.get_profiler()
            if self.ref_prog is not None and not self.skip_check:
                profiler.assert_allclose(self.ref_prog, atol=self.atol, rtol=self.rtol)
            latency = profiler.do_bench(warmup=self.warmup, rep=self.rep)
            timings.append((config, latency))
            if best is None or latency < best[0]:
                best = (latency, config, kernel)
        if best is None:
            raise TilecError(f"autotune of {self.fn.__name__}: no configuration compiled; "
                             f"first error: {next(e for e in errors if e)}", *self.fn.location)
        return TuneResult(best[1], best[2], best[0], timings)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        key = self.fn._fast_key(args, kwargs)
        result = self.results.get(key) if key is not None else None
        if result is None:
            result = self.tune(*args, **kwargs)
            if key is not None:
                self.results[key] = result
        if self.fn.is_factory:
            return result.kernel
        return result.kernel(*tensor_arguments(args, kwargs))


def autotune(configs: Sequence[Config] | Callable[..., Sequence[Config]], warmup: float = 25,
             rep: float = 100, ref_prog: Callable | None = None, atol: float = 1e-2,
             rtol: float = 1e-2, skip_check: bool = False, max_workers: int | None = None,
             **_tilelang_options: Any) -> Callable[[JITFunction], AutoTuner]:
    """`@tilec.autotune(configs=[{"block_M": 128, ...}, ...])` above `@tilec.jit`.

    `configs` is a list of keyword dicts (or a function of the call's arguments returning one);
    each is passed to the jit function on top of the call's own arguments.
    """

    def wrap(fn: JITFunction) -> AutoTuner:
        return AutoTuner(fn, configs, warmup, rep, ref_prog, atol, rtol, skip_check, max_workers)

    return wrap
