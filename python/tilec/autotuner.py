"""TileLang's autotuner on tilec: `@tilec.autotune` above `@tilec.jit`, and `AutoTuner`.

Tuning one problem compiles every configuration, each in its own forked process (in parallel,
so that a compiler crash or hang costs that configuration and not the caller's process; with
the opt-in TILEC_AUTOTUNE_FRESH_COMPILERS=1, where the process has initialized CUDA, a new
interpreter given the configuration's tile IR, built in the caller's process:
fresh_compilers_wanted), then
checks each kernel against `ref_prog` and times it with the kernel's profiler; the fastest wins.
A configuration that fails to build, compile, check or time is reported (one warning listing
each with its error, and `result.trials`), and an error is raised when none survives.

The caller's arguments always win: a tuned argument the call passes is never replaced by a
configuration's value. When the call passes every tuned argument nothing is tuned: that one
configuration is compiled, as TileLang does; when it passes some, the others are tuned.

Compiling and timing may happen on different machines: `precompile(...)` fills the kernel
cache (TILEC_CACHE_DIR) for every configuration; a GPU machine without MLIR then finds each
kernel there and only times it.

A tuning's outcome is kept on disk too, as TileLang keeps it (`<cache dir>/autotune/KEY.json`;
KEY hashes every configuration and the cache key of its kernel, the profile settings, the
inputs given by `set_autotune_inputs`, the device's name and the compiler's fingerprint: another
compiler may make other kernels): the same problem tuned again, in
another process, takes the winner from there and times nothing. Not where a `ref_prog`,
`supply_prog` or `manual_check_prog` is given (what a function does cannot be keyed, and a
result it checked must not be served to another), nor with the kernel cache disabled; delete
the folder to tune afresh.
"""

from __future__ import annotations

import contextlib
import faulthandler
import inspect
import json
import logging
import multiprocessing
import os
import platform
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any

import tilec.language as T
from tilec import cache
from tilec.errors import TilecError, check_options
from tilec.jit import (
    JITFunction,
    JITKernel,
    Specialization,
    compile_specialization,
    load_compiler,
    prim_func_specialization,
    resolve_target,
    tensor_arguments,
)
from tilec.runtime.artifact import Artifact
from tilec.transform import codegen_settings

__all__ = ["AutoTuner", "AutotuneResult", "AutotuneWarning", "AutotunedFunction", "Trial",
           "autotune", "get_autotune_inputs", "set_autotune_inputs"]

Config = dict[str, Any]
ConfigSource = Sequence[Config] | Callable[..., Sequence[Config]]

PASS_CONFIGS_KEY = "pass_configs"  # a configuration's own pass configs, not an argument
COMPILE_TIMEOUT_S = 300.0  # a child compiling longer than this is stopped and reported
_logger = logging.getLogger(__name__)
_captured = threading.local()  # set_autotune_inputs' stack, per thread


class AutotuneWarning(UserWarning):
    """Some configurations failed (to build, compile, check or time) and were skipped."""


@dataclass
class Trial:
    """One configuration's outcome: its latency in ms, or why it was skipped."""

    config: Config
    latency: float | None = None
    error: str | None = None


@dataclass
class AutotuneResult:
    """The winner of one tuning (TileLang's AutotuneResult).

    `config` is what the kernel was compiled with; `latency` / `ref_latency` (ms) are None when
    nothing was timed (every tuned argument given) or no `ref_prog` was given.
    """

    config: Config
    kernel: JITKernel
    latency: float | None = None
    ref_latency: float | None = None
    trials: list[Trial] = field(default_factory=list)

    @property
    def libcode(self) -> str:
        return self.kernel.get_kernel_source()


@dataclass(frozen=True)
class CompileArgs:
    """How each configuration is compiled (TileLang's other options are accepted, unused);
    a configuration's own "pass_configs" are merged over `pass_configs`."""

    out_idx: Sequence[int] | int | None = None
    target: str | None = "auto"
    pass_configs: dict[Any, Any] | None = None


@dataclass(frozen=True)
class ProfileArgs:
    """How each compiled configuration is checked and timed.

    `warmup` / `rep` count runs, as TileLang's tuner does; `timeout` (s) bounds one
    configuration's check and timing where a timer signal can interrupt it (the main thread).
    """

    warmup: int = 25
    rep: int = 100
    timeout: float = 30
    supply_type: Any = None  # a TensorSupplyType; None: the profiler's default
    ref_prog: Callable | None = None
    supply_prog: Callable | None = None
    rtol: float = 1e-2
    atol: float = 1e-2
    max_mismatched_ratio: float = 0.01
    skip_check: bool = False
    manual_check_prog: Callable | None = None
    cache_input_tensors: bool = False
    backend: str = "event"
    early_stop_factor: float | None = None  # time only briefly what is past factor x the best

    def __post_init__(self) -> None:
        if self.early_stop_factor is not None and self.early_stop_factor < 1:
            raise TilecError(f"autotune: early_stop_factor must be at least 1, got "
                             f"{self.early_stop_factor}")


# ---------------------------------------------------------------------------------------------
# compiling in child processes


def _describe(error: BaseException) -> str:
    if isinstance(error, TilecError):
        return str(error)
    return f"{type(error).__name__}: {error}"


def _compile_child(spec: Specialization, connection: Any, log_fd: int) -> None:
    """In a forked child: compile `spec`; send back its artifact, or the error's text."""
    os.dup2(log_fd, 2)  # an MLIR assertion's message lands where the parent can read it
    faulthandler.disable()  # a crash is the parent's to report, from that message
    cache.disable_cache()  # the parent stores what comes back; children never race on disk
    try:
        outcome: Artifact | str = compile_specialization(spec).artifact
    except Exception as error:  # reported for this configuration; the others go on
        outcome = _describe(error)
    connection.send(outcome)
    connection.close()


def fresh_compile_main() -> None:
    """A fresh compiler process (TILEC_AUTOTUNE_FRESH_COMPILERS): the pickled job in the file
    named by argv[1] (deleted once read), the artifact or the error's text pickled on stdout.
    Whatever the compiler prints goes to stderr, the parent's log."""
    import pickle

    answer = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    faulthandler.disable()  # a crash is the parent's to report, from the log
    cache.disable_cache()
    with open(sys.argv[1], "rb") as file:
        text, params, target, launch, options = pickle.load(file)
    os.unlink(sys.argv[1])
    try:
        from mlir import ir

        from tilec.compiler.driver import compile_module
        from tilec.dialect import new_context

        with new_context():
            module = ir.Module.parse(text)
            outcome: Artifact | str = compile_module(module, params, target, launch=launch,
                                                     **options)
    except Exception as error:  # reported for this configuration; the others go on
        outcome = _describe(error)
    with answer:
        pickle.dump(outcome, answer)


def _fresh_job(spec: Specialization) -> bytes | str:
    """What a fresh compiler process needs for `spec`, pickled: its tile IR as text (built
    here: the frontend runs the kernel's Python, which a fresh process could not import), or
    the frontend's error."""
    import pickle

    try:
        result = spec.build()
        settings = codegen_settings(spec.pass_configs)
        with result.context:
            text = result.module.operation.get_asm(enable_debug_info=True)
    except Exception as error:
        return _describe(error)
    options = {"fast_math": settings.fast_math, "disable_tma": settings.disable_tma,
               "bounds_check": settings.bounds_check}
    return pickle.dumps((text, result.params, spec.target, result.launch, options))


def fresh_compilers_wanted() -> bool:
    """TILEC_AUTOTUNE_FRESH_COMPILERS=1 (opt-in, not yet run on a GPU): where this process has
    initialized CUDA, each configuration compiles in a fresh interpreter, not a forked child.
    Why: gemm/example_gemm_autotune_early_stop.py's first configuration faulted ("unspecified
    launch failure") on the H100 in the one probe step that forked compile children after CUDA
    was initialized; the steps that forked none ran it clean (CUDA supports no CUDA use in a
    child forked after initialization, and the parent's state after such a fork is the
    suspect)."""
    if os.environ.get("TILEC_AUTOTUNE_FRESH_COMPILERS") != "1":
        return False
    torch = sys.modules.get("torch")
    return torch is not None and torch.cuda.is_initialized()


@dataclass
class _Child:
    """One compiling child: its process (a forked multiprocessing.Process or a fresh
    subprocess.Popen), the channel its answer comes on, when it started, its stderr log."""

    index: int
    process: Any
    channel: Any
    started: float
    log: Any

    def answer(self) -> Artifact | str:
        """Its artifact or error text; EOFError where it died without answering."""
        if isinstance(self.process, subprocess.Popen):
            import pickle

            data = self.channel.read()
            if not data:
                raise EOFError
            return pickle.loads(data)
        return self.channel.recv()

    def exit_code(self) -> int | None:
        if isinstance(self.process, subprocess.Popen):
            return self.process.wait()
        self.process.join()
        return self.process.exitcode

    def close(self) -> None:
        self.exit_code()
        self.channel.close()
        self.log.close()


def _forked_child(spec: Specialization, index: int) -> _Child:
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    log = tempfile.TemporaryFile()
    process = context.Process(target=_compile_child, daemon=True,
                              args=(spec, sender, log.fileno()))
    process.start()
    sender.close()
    return _Child(index, process, receiver, time.monotonic(), log)


def _fresh_child(job: bytes, index: int) -> _Child:
    with tempfile.NamedTemporaryFile(prefix="tilec-compile-job-", delete=False) as file:
        file.write(job)
    log = tempfile.TemporaryFile()
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    process = subprocess.Popen(
        [sys.executable, "-c", "from tilec.autotuner import fresh_compile_main; "
         "fresh_compile_main()", file.name],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log, env=environment)
    return _Child(index, process, process.stdout, time.monotonic(), log)


def _crash_report(child: _Child) -> str:
    """What a child that died without answering leaves: its signal and stderr's tail."""
    code = child.exit_code()
    how = f"signal {signal.Signals(-code).name}" if code and code < 0 else f"exit code {code}"
    child.log.seek(0)
    tail = child.log.read().decode(errors="replace").strip()[-1500:]
    return f"the compiler crashed ({how})" + (f":\n{tail}" if tail else "")


def _compile_in_children(specs: list[Specialization], workers: int,
                         on_done: Callable[[int, Artifact | str], None],
                         fresh: bool = False) -> list[Artifact | str]:
    """Compile each spec in a child of its own, `workers` at a time: forked, or with `fresh` a
    new interpreter given the spec's tile IR (fresh_compilers_wanted); on_done(index, result)
    as each one ends."""
    results: list[Artifact | str] = [""] * len(specs)
    waiting = deque(range(len(specs)))
    running: dict[Any, _Child] = {}
    while waiting or running:
        while waiting and len(running) < workers:
            index = waiting.popleft()
            job = _fresh_job(specs[index]) if fresh else None
            if isinstance(job, str):  # its frontend failed here
                results[index] = job
                on_done(index, job)
                continue
            child = _fresh_child(job, index) if job else _forked_child(specs[index], index)
            running[child.channel] = child
        for channel in wait(list(running), timeout=1.0):
            child = running.pop(channel)
            try:
                results[child.index] = child.answer()
            except EOFError:
                results[child.index] = _crash_report(child)
            child.close()
            on_done(child.index, results[child.index])
        now = time.monotonic()
        for channel, child in list(running.items()):
            if now - child.started > COMPILE_TIMEOUT_S:
                child.process.kill()
                child.close()
                del running[channel]
                results[child.index] = (f"compiling took longer than {COMPILE_TIMEOUT_S:.0f} s; "
                                        "stopped")
                on_done(child.index, results[child.index])
    return results


def _usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, where the platform tells)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _compile_all(specs: list[Specialization], max_workers: int | None,
                 progress: Any) -> list[JITKernel | str]:
    """Every spec's kernel (from the cache, else compiled in children) or its error text."""
    outcomes: list[JITKernel | str] = [""] * len(specs)
    missing: dict[str, list[int]] = {}  # cache key -> configs compiling to that kernel
    for index, spec in enumerate(specs):
        if cache.lookup(spec.key) is not None:
            outcomes[index] = compile_specialization(spec)
            progress.update(1)
        else:
            missing.setdefault(spec.key, []).append(index)
    if not missing:
        return outcomes
    firsts = [indices[0] for indices in missing.values()]

    def done(position: int, result: Artifact | str) -> None:
        """Each artifact goes into the cache as it comes: a run stopped half way (a time
        limit, ^C) leaves what it compiled to the next run."""
        if isinstance(result, Artifact):
            cache.store(specs[firsts[position]].key, result)
        progress.update(1)

    if "fork" in multiprocessing.get_all_start_methods():
        for target in {specs[index].target for index in firsts}:
            load_compiler(target)
        workers = max(1, min(len(firsts), max_workers or _usable_cpus()))
        compiled = _compile_in_children([specs[i] for i in firsts], workers, done,
                                        fresh=fresh_compilers_wanted())
    else:  # no fork: compile here, one after another
        compiled = []
        for position, index in enumerate(firsts):
            try:
                compiled.append(compile_specialization(specs[index]).artifact)
            except Exception as error:
                compiled.append(_describe(error))
            done(position, compiled[-1])
    for first, result in zip(firsts, compiled, strict=True):
        spec = specs[first]
        if isinstance(result, Artifact):
            kernel: JITKernel | str = (compile_specialization(spec) if cache.is_enabled()
                                       else JITKernel(result, spec.location, spec.pass_configs,
                                                      spec))
        else:
            kernel = result
        for index in missing[spec.key]:
            outcomes[index] = kernel
        progress.update(len(missing[spec.key]) - 1)
    return outcomes


# ---------------------------------------------------------------------------------------------
# checking and timing


class _Timeout(Exception):
    pass


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Interrupt the block after `seconds` (main thread only, where signals arrive)."""
    usable = (seconds and seconds > 0 and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread())
    if not usable:
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def set_autotune_inputs(*inputs: Any) -> Iterator[None]:
    """Within the block, the autotuner checks and times every configuration on these inputs
    (the kernel's input arguments, in order) instead of generated ones."""
    if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
        inputs = tuple(inputs[0])
    stack = _captured.__dict__.setdefault("stack", [])
    stack.append(list(inputs))
    try:
        yield
    finally:
        stack.pop()


def get_autotune_inputs() -> list[Any] | None:
    """The inputs of the innermost `set_autotune_inputs` block of this thread, if any."""
    stack = getattr(_captured, "stack", None)
    return stack[-1] if stack else None


class _Bench:
    """Checks and times kernels with one set of profile settings (inputs shared if asked)."""

    def __init__(self, profile: ProfileArgs, given_inputs: list[Any] | None = None):
        self.profile = profile
        self.given_inputs = given_inputs  # set_autotune_inputs'
        self.cached_inputs: tuple[Any, list[Any]] | None = None  # (params signature, tensors)

    def profiler(self, kernel: JITKernel) -> Any:
        supply = self.profile.supply_type
        return kernel.get_profiler() if supply is None else kernel.get_profiler(
            tensor_supply_type=supply)

    def inputs(self, kernel: JITKernel, profiler: Any) -> list[Any]:
        if self.given_inputs is not None:
            return self.given_inputs
        params = [p for p in kernel.params if not p.is_output]
        signature = tuple((p.kind, p.dtype, tuple(p.shape)) for p in params)
        if (self.profile.cache_input_tensors and self.cached_inputs is not None
                and self.cached_inputs[0] == signature):
            return self.cached_inputs[1]
        supply = self.profile.supply_prog
        tensors = list(supply(params)) if supply is not None else profiler.inputs()
        self.cached_inputs = (signature, tensors)
        return tensors

    def _bench(self, profiler: Any, fn: Callable | None, inputs: list[Any],
               baseline: float | None = None) -> float:
        extra: dict[str, Any] = {}
        if self.profile.backend != "event":
            extra["backend"] = self.profile.backend
        if baseline is not None:  # a first estimate past it is returned without the full run
            extra["early_stop_baseline"] = baseline
        return profiler.do_bench(fn, n_warmup=self.profile.warmup, n_repeat=self.profile.rep,
                                 input_tensors=inputs, **extra)

    def check_and_time(self, kernel: JITKernel, best: float | None) -> float:
        """The kernel's latency after its check; with early stopping, a kernel whose first
        estimate is past early_stop_factor x `best` keeps that estimate."""
        profile = self.profile
        profiler = self.profiler(kernel)
        inputs = self.inputs(kernel, profiler)
        with _deadline(profile.timeout):
            if profile.ref_prog is not None and not profile.skip_check:
                try:
                    self._check(profiler, inputs)
                except AssertionError as error:
                    raise AssertionError(f"wrong result against ref_prog: {error}") from None
            factor = profile.early_stop_factor
            baseline = best * factor if factor is not None and best is not None else None
            return self._bench(profiler, None, inputs, baseline)

    def _check(self, profiler: Any, inputs: list[Any]) -> None:
        profile = self.profile
        if profile.manual_check_prog is not None:
            profile.manual_check_prog(profiler.run_poisoned(*inputs), profile.ref_prog(*inputs))
        else:
            profiler.assert_allclose(profile.ref_prog, atol=profile.atol, rtol=profile.rtol,
                                     max_mismatched_ratio=profile.max_mismatched_ratio,
                                     input_tensors=inputs)

    def ref_latency(self, kernel: JITKernel) -> float | None:
        if self.profile.ref_prog is None:
            return None
        profiler = self.profiler(kernel)
        return self._bench(profiler, self.profile.ref_prog, self.inputs(kernel, profiler))


class _NoProgress:
    def update(self, count: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, description: str) -> Any:
    """A tqdm bar over the configurations where tqdm is installed (and stderr a terminal)."""
    try:
        from tqdm import tqdm
    except ImportError:
        return _NoProgress()
    return tqdm(total=total, desc=description, disable=None, leave=False)


def _caller_stacklevel() -> int:
    """The stacklevel of the first frame outside tilec, for warnings about the user's call."""
    package = os.path.dirname(os.path.abspath(__file__))
    level, frame = 1, inspect.currentframe()
    while frame is not None and frame.f_back is not None and os.path.abspath(
            frame.f_code.co_filename).startswith(package):
        level, frame = level + 1, frame.f_back
    return level - 1


# what torch says of a CUDA error after which the process's context is unusable: every later
# launch in the process fails with it too, so the configuration it came from is the culprit
LOST_CONTEXT_ERRORS = ("unspecified launch failure", "illegal memory access",
                       "misaligned address", "illegal instruction", "device-side assert")


def _loses_context(error: BaseException) -> bool:
    text = str(error)
    return "CUDA error" in text and any(known in text for known in LOST_CONTEXT_ERRORS)


def _first_failure(failed: list[Trial]) -> str:
    """One line naming why the configurations failed (for logs that keep a first line)."""
    firsts = [((trial.error or "").strip().splitlines() or [""])[0] for trial in failed]
    if all(first == firsts[0] for first in firsts):
        return f"each failed with: {firsts[0]}"
    return f"the first failed with: {firsts[0]}"


def _short(text: str) -> str:
    return text if len(text) <= 600 else text[:600] + " ..."


RESULTS_FOLDER = "autotune"  # under the kernel cache's directory


def _device_name(target: str) -> str:
    """What the latencies were measured on: the GPU's name, or the host's processor."""
    if target != "cpu":
        try:
            import torch

            return torch.cuda.get_device_name()
        except (ImportError, RuntimeError, AssertionError):
            pass
    return f"{target} {platform.machine()} {platform.processor()}"


def _result_key(trials: list[Trial], specs: dict[int, Specialization], profile: ProfileArgs,
                given_inputs: list[Any] | None) -> str | None:
    """The key a tuning's outcome is kept on disk under, or None where it must not be kept."""
    callbacks = (profile.ref_prog, profile.supply_prog, profile.manual_check_prog)
    if not cache.is_enabled() or not specs or any(c is not None for c in callbacks):
        return None
    settings = {name: value for name, value in profile.__dict__.items()
                if name not in ("ref_prog", "supply_prog", "manual_check_prog", "timeout")}
    kernels = [[trial.config, specs[index].key if index in specs else trial.error]
               for index, trial in enumerate(trials)]
    target = next(iter(specs.values())).target
    return cache.cache_key({"autotune": kernels, "profile": settings,
                            "inputs": _key_value(given_inputs), "target": target,
                            "device": _device_name(target),
                            "compiler": cache.compiler_fingerprint()})


def _result_path(key: str) -> str:
    return os.path.join(cache.cache_dir(), RESULTS_FOLDER, f"{key}.json")


def _load_result(key: str, trials: list[Trial], specs: dict[int, Specialization],
                 name: str) -> AutotuneResult | None:
    """The outcome an earlier tuning kept under `key`, its winner's kernel from the kernel
    cache (or compiled); None where there is none or it cannot be read."""
    try:
        with open(_result_path(key)) as file:
            record = json.load(file)
        winner = int(record["winner"])
        kept = record["trials"]
        if len(kept) != len(trials) or winner not in specs:
            return None
        kernel = compile_specialization(specs[winner])
    except (OSError, ValueError, KeyError, TypeError, TilecError):
        return None
    for trial, outcome in zip(trials, kept, strict=True):
        trial.latency, trial.error = outcome["latency"], outcome["error"]
    _logger.info("autotune %s: the winner of an earlier tuning, from %s", name,
                 _result_path(key))
    config = dict(trials[winner].config)
    kernel.update_tuner_result(record["latency"], config, record["ref_latency"])
    return AutotuneResult(config, kernel, record["latency"], record["ref_latency"], trials)


def _save_result(key: str, result: AutotuneResult, winner: int) -> None:
    """Keep `result` under `key` (written aside, then renamed: a reader sees all or nothing)."""
    record = {"winner": winner, "latency": result.latency, "ref_latency": result.ref_latency,
              "trials": [{"latency": trial.latency, "error": trial.error}
                         for trial in result.trials]}
    path = _result_path(key)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        descriptor, staging = tempfile.mkstemp(prefix=f".{key}-", dir=os.path.dirname(path))
        with os.fdopen(descriptor, "w") as file:
            json.dump(record, file)
        os.replace(staging, path)
    except OSError as error:
        warnings.warn(f"autotune: could not keep the tuning's result in {path} ({error}); "
                      "the next process tunes again", AutotuneWarning, stacklevel=3)


def tune_configs(name: str, location: tuple[str, int], configs: list[Config],
                 make_spec: Callable[[Config], Specialization], profile: ProfileArgs,
                 max_workers: int | None = None) -> AutotuneResult:
    """Compile, check and time every configuration; the fastest one's kernel wins."""
    trials = [Trial(dict(config)) for config in configs]
    specs: dict[int, Specialization] = {}
    for index, trial in enumerate(trials):
        try:
            specs[index] = make_spec(trial.config)
        except Exception as error:  # a configuration the kernel cannot be built with
            trial.error = _describe(error)
    bench = _Bench(profile, get_autotune_inputs())
    result_key = _result_key(trials, specs, profile, bench.given_inputs)
    if result_key is not None:
        kept = _load_result(result_key, trials, specs, name)
        if kept is not None:
            return kept
    progress = _progress(len(specs), f"compiling {name} configurations")
    try:
        kernels = dict(zip(specs, _compile_all(list(specs.values()), max_workers, progress),
                           strict=True))
    finally:
        progress.close()
    best: tuple[float, int, JITKernel] | None = None
    progress = _progress(len(kernels), f"timing {name} configurations")
    try:
        for index, kernel in kernels.items():
            trial = trials[index]
            progress.update(1)
            if isinstance(kernel, str):
                trial.error = kernel
                continue
            try:
                trial.latency = bench.check_and_time(kernel, best[0] if best else None)
            except _Timeout:
                trial.error = f"checking and timing took longer than {profile.timeout} s"
                continue
            except Exception as error:
                if _loses_context(error):  # nothing after it can run: name the culprit
                    first = _describe(error).strip().splitlines()[0]
                    raise TilecError(
                        f"autotune of {name}: the kernel of configuration {trial.config} "
                        f"failed on the GPU ({first}); the process's CUDA context is lost "
                        f"with it, so no other configuration can run", *location) from None
                trial.error = _describe(error)
                continue
            _logger.info("autotune %s: %s took %.4f ms", name, trial.config, trial.latency)
            if best is None or trial.latency < best[0]:
                best = (trial.latency, index, kernel)
    finally:
        progress.close()
    failed = [trial for trial in trials if trial.error is not None]
    report = "\n".join(f"  {trial.config}: {_short(trial.error or '')}" for trial in failed)
    if best is None:
        raise TilecError(f"autotune of {name}: none of the {len(trials)} configurations "
                         f"compiled and ran; {_first_failure(failed)}\n{report}", *location)
    if failed:
        warnings.warn(f"autotune of {name}: {len(failed)} of {len(trials)} configurations "
                      f"failed and were skipped:\n{report}", AutotuneWarning,
                      stacklevel=_caller_stacklevel())
    latency, index, winner = best
    ref_latency = bench.ref_latency(winner)
    winner.update_tuner_result(latency, dict(trials[index].config), ref_latency)
    result = AutotuneResult(dict(trials[index].config), winner, latency, ref_latency, trials)
    if result_key is not None:
        _save_result(result_key, result, index)
    return result


# ---------------------------------------------------------------------------------------------
# configurations


def _load_configs(source: ConfigSource, args: tuple, kwargs: dict, name: str,
                  location: tuple[str, int]) -> list[Config]:
    configs = source(*args, **kwargs) if callable(source) else source
    if isinstance(configs, dict) or not isinstance(configs, Sequence) or not all(
            isinstance(config, dict) for config in configs):
        raise TilecError(f"autotune of {name}: configs must be a list of dicts of keyword "
                         f"arguments (or a function returning one), got {type(configs).__name__}",
                         *location)
    if not configs:
        raise TilecError(f"autotune of {name}: no configurations to try", *location)
    return [dict(config) for config in configs]


def _split(config: Config) -> tuple[Config, dict[Any, Any] | None]:
    """A configuration's keyword arguments, and its own pass configs."""
    arguments = {key: value for key, value in config.items() if key != PASS_CONFIGS_KEY}
    return arguments, config.get(PASS_CONFIGS_KEY)


def _check_keys(configs: list[Config], fn: Callable, name: str,
                location: tuple[str, int]) -> None:
    """Every configuration key but "pass_configs" must be a parameter of the tuned function."""
    parameters = inspect.signature(fn).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return
    keys = {key for config in configs for key in _split(config)[0]}
    unknown = sorted(keys - set(parameters))
    if unknown:
        raise TilecError(f"autotune of {name}: configuration keys {unknown} are not "
                         f"parameters of {fn.__name__}", *location)


def _remaining(configs: list[Config], given: set[str]) -> list[Config]:
    """The configurations without the arguments the caller gave, duplicates dropped."""
    remaining: list[Config] = []
    for config in configs:
        rest = {key: value for key, value in config.items() if key not in given}
        if rest not in remaining:
            remaining.append(rest)
    return remaining


def _key_value(value: Any) -> Any:
    """A hashable stand-in for one argument: tensors by shape and dtype, other values with
    their type (True, 1 and 1.0 are equal in Python, not as kernel arguments)."""
    if hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value, T.DType):
        return ("tensor", tuple(value.shape), str(value.dtype))
    if isinstance(value, (list, tuple)):
        return tuple(_key_value(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _key_value(v)) for k, v in value.items()))
    return (type(value).__name__, value)


# ---------------------------------------------------------------------------------------------
# @tilec.autotune


class AutotunedFunction:
    """`@tilec.autotune(...)` over `@tilec.jit`: tunes once per problem, then reuses the winner.

    An eager kernel called with tensors runs the winner on them; a prim_func factory returns
    the winning kernel. `.compile(...)` returns the kernel in both styles.
    """

    def __init__(self, fn: JITFunction, configs: ConfigSource, profile: ProfileArgs,
                 max_workers: int | None = None):
        if not isinstance(fn, JITFunction):
            raise TilecError("@tilec.autotune goes above @tilec.jit: "
                             "@autotune(configs=...) then @jit on the function")
        self.fn = fn
        self.configs = configs
        self.profile = profile
        self.max_workers = max_workers
        self.results: dict[Any, AutotuneResult] = {}
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__

    def _plan(self, args: tuple, kwargs: dict) -> tuple[list[Config], Config]:
        """The configurations left to try, and the tuned arguments the caller gave."""
        configs = _load_configs(self.configs, args, kwargs, self.__name__, self.fn.location)
        _check_keys(configs, self.fn.fn, self.__name__, self.fn.location)
        signature = inspect.signature(self.fn.fn)
        try:
            bound = signature.bind_partial(*args, **{
                k: v for k, v in kwargs.items() if k in signature.parameters})
        except TypeError as error:
            raise TilecError(f"{self.__name__}: {error}", *self.fn.location) from None
        tuned = {key for config in configs for key in _split(config)[0]}
        given = {key: value for key, value in bound.arguments.items() if key in tuned}
        return _remaining(configs, set(given)), given

    def _specialize(self, args: tuple, kwargs: dict, target: str | None,
                    config: Config) -> Specialization:
        arguments, pass_configs = _split(config)
        return self.fn.specialize(args, {**kwargs, **arguments}, target, pass_configs)

    def tune(self, *args: Any, target: str | None = None, **kwargs: Any) -> AutotuneResult:
        """The result for these arguments (tensors, or sizes as keywords), tuning if needed."""
        resolved = resolve_target(target or self.fn.target)
        key = (_key_value(args), _key_value(kwargs), resolved,
               tuple(cache.compile_settings().items()))
        try:
            result = self.results.get(key)
        except TypeError:  # an argument that cannot be hashed: tune every time
            key, result = None, None
        if result is not None:
            return result
        configs, given = self._plan(args, kwargs)
        if configs == [{}]:  # every tuned argument given: compile exactly that
            result = AutotuneResult(given, self.fn.compile(*args, target=target, **kwargs))
        else:
            result = tune_configs(self.__name__, self.fn.location, configs,
                                  lambda config: self._specialize(args, kwargs, target, config),
                                  self.profile, self.max_workers)
            result.config = {**given, **result.config}
        result.kernel.update_tuner_result(result.latency, dict(result.config),
                                          result.ref_latency)
        if key is not None:
            self.results[key] = result
        return result

    def compile(self, *args: Any, target: str | None = None, **kwargs: Any) -> JITKernel:
        """The tuned kernel for these arguments (tensors, or sizes as keywords: M=1024)."""
        return self.tune(*args, target=target, **kwargs).kernel

    def precompile(self, *args: Any, target: str | None = None, **kwargs: Any) -> list[str | None]:
        """Compile every configuration for this problem into the kernel cache, in parallel;
        per configuration, None or the error that kept it from compiling."""
        configs, _ = self._plan(args, kwargs)
        errors: list[str | None] = [None] * len(configs)
        specs: dict[int, Specialization] = {}
        for index, config in enumerate(configs):
            try:
                specs[index] = self._specialize(args, kwargs, target, config)
            except Exception as error:
                errors[index] = _describe(error)
        progress = _progress(len(specs), f"compiling {self.__name__} configurations")
        try:
            outcomes = _compile_all(list(specs.values()), self.max_workers, progress)
        finally:
            progress.close()
        for index, outcome in zip(specs, outcomes, strict=True):
            if isinstance(outcome, str):
                errors[index] = outcome
        return errors

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        kernel = self.compile(*args, **kwargs)
        if self.fn.is_factory:
            return kernel
        parameters = inspect.signature(self.fn.fn).parameters
        return kernel(*tensor_arguments(
            args, {k: v for k, v in kwargs.items() if k in parameters}, self.fn.fn))


def autotune(func: Callable | None = None, *, configs: ConfigSource, warmup: int = 25,
             rep: int = 100, timeout: float = 100, supply_type: Any = None,
             ref_prog: Callable | None = None, supply_prog: Callable | None = None,
             rtol: float = 1e-2, atol: float = 1e-2, max_mismatched_ratio: float = 0.01,
             skip_check: bool = False, manual_check_prog: Callable | None = None,
             cache_input_tensors: bool = False, early_stop: bool = False,
             early_stop_factor: float = 2.0, max_workers: int | None = None,
             **_tilelang_options: Any) -> Callable[[JITFunction], AutotunedFunction]:
    """`@tilec.autotune(configs=[{"block_M": 128, ...}, ...])` above `@tilec.jit`.

    `configs` is a list of keyword dicts (or a function of the call's arguments returning
    one); a dict's "pass_configs" entry is merged over the jit's pass configs. With
    `early_stop`, a configuration whose first estimate is past early_stop_factor x the best so
    far is not timed in full. TileLang's other options (do_not_specialize...) are accepted,
    unused.
    """
    check_options("tilec.autotune", _tilelang_options, frozenset({"do_not_specialize"}))
    if func is not None:
        raise TilecError("@tilec.autotune needs its configurations: "
                         "@tilec.autotune(configs=[...]) above @tilec.jit")
    profile = ProfileArgs(warmup, rep, timeout, supply_type, ref_prog, supply_prog, rtol, atol,
                          max_mismatched_ratio, skip_check, manual_check_prog,
                          cache_input_tensors,
                          early_stop_factor=early_stop_factor if early_stop else None)

    def wrap(fn: JITFunction) -> AutotunedFunction:
        return AutotunedFunction(fn, configs, profile, max_workers)

    return wrap


# ---------------------------------------------------------------------------------------------
# AutoTuner.from_kernel(...).set_compile_args(...).set_profile_args(...).run()


class AutoTuner:
    """TileLang's explicit tuner over a kernel factory: `kernel(**config)` returns a
    `@T.prim_func` (or the factory is a `@tilec.jit` one)."""

    def __init__(self, fn: Callable, configs: ConfigSource):
        self.fn = fn
        self.configs = configs
        self.compile_args = CompileArgs()
        self.profile_args = ProfileArgs()

    @classmethod
    def from_kernel(cls, kernel: Callable, configs: ConfigSource) -> AutoTuner:
        return cls(kernel, configs)

    @property
    def _python_fn(self) -> Callable:
        return self.fn.fn if isinstance(self.fn, JITFunction) else self.fn

    @property
    def _location(self) -> tuple[str, int]:
        code = self._python_fn.__code__
        return code.co_filename, code.co_firstlineno

    def set_compile_args(self, out_idx: Sequence[int] | int | None = None,
                         target: str | None = "auto", pass_configs: dict | None = None,
                         **_tilelang_options: Any) -> AutoTuner:
        check_options("AutoTuner.set_compile_args", _tilelang_options,
                      frozenset({"execution_backend", "target_host", "verbose"}))
        self.compile_args = CompileArgs(out_idx, target, pass_configs)
        return self

    def set_profile_args(self, warmup: int = 25, rep: int = 100, timeout: float = 30,
                         supply_type: Any = None, ref_prog: Callable | None = None,
                         supply_prog: Callable | None = None, rtol: float = 1e-2,
                         atol: float = 1e-2, max_mismatched_ratio: float = 0.01,
                         skip_check: bool = False, manual_check_prog: Callable | None = None,
                         cache_input_tensors: bool = False, backend: str = "event",
                         **_tilelang_options: Any) -> AutoTuner:
        check_options("AutoTuner.set_profile_args", _tilelang_options, frozenset())
        self.profile_args = ProfileArgs(warmup, rep, timeout, supply_type, ref_prog,
                                        supply_prog, rtol, atol, max_mismatched_ratio,
                                        skip_check, manual_check_prog, cache_input_tensors,
                                        backend)
        return self

    def _specialize(self, config: Config) -> Specialization:
        arguments, own = _split(config)
        compile_args = self.compile_args
        pass_configs = {**(compile_args.pass_configs or {}), **(own or {})}
        if isinstance(self.fn, JITFunction):
            return self.fn.specialize((), arguments, compile_args.target, pass_configs)
        prim = self.fn(**arguments)
        if not isinstance(prim, T.PrimFunc):
            raise TilecError(f"{self._python_fn.__name__} must return a @T.prim_func, got "
                             f"{type(prim).__name__}", *self._location)
        return prim_func_specialization(prim, compile_args.out_idx, compile_args.target,
                                        pass_configs=pass_configs)

    def run(self, warmup: int = 25, rep: int = 100, timeout: float = 30,
            early_stop: bool = False, early_stop_factor: float = 2.0,
            max_workers: int | None = None, **_tilelang_options: Any) -> AutotuneResult:
        """Tune over every configuration (`warmup` / `rep`: runs; `timeout`: s per config;
        `early_stop` as for @autotune). TileLang's pipelining and multi-GPU options are
        accepted, unused."""
        check_options("AutoTuner.run", _tilelang_options, frozenset({
            "use_pipeline", "enable_grouped_compile", "group_compile_size", "benchmark_devices",
            "benchmark_multi_gpu"}))
        name = self._python_fn.__name__
        configs = _load_configs(self.configs, (), {}, name, self._location)
        _check_keys(configs, self._python_fn, name, self._location)
        profile = ProfileArgs(**{**self.profile_args.__dict__, "warmup": warmup, "rep": rep,
                                 "timeout": timeout,
                                 "early_stop_factor": early_stop_factor if early_stop else None})
        return tune_configs(name, self._location, configs, self._specialize, profile, max_workers)

    def __call__(self) -> AutotuneResult:
        return self.run()
