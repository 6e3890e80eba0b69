"""The command line the device benchmarks share: `build CACHE_DIR` on the compiler machine
(compiles every kernel into a cache), `run --out JSON` on the GPU machine (runs them from the
cache with tilec's runtime only), as benchmarks/device_suite.sh calls them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

Options = Callable[[argparse.ArgumentParser, argparse.ArgumentParser], None]


def build_or_run(description: str | None, default_out: str,
                 build: Callable[[argparse.Namespace], None],
                 run: Callable[[argparse.Namespace], None],
                 options: Options | None = None) -> None:
    """Parses `build CACHE_DIR` / `run --out JSON` (plus what `options(build_parser,
    run_parser)` adds to each) and calls `build(args)` or `run(args)`."""
    parser = argparse.ArgumentParser(description=description,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    build_parser = commands.add_parser("build")
    build_parser.add_argument("cache_dir", type=Path)
    run_parser = commands.add_parser("run")
    run_parser.add_argument("--out", type=Path, default=Path(default_out))
    if options is not None:
        options(build_parser, run_parser)
    args = parser.parse_args()
    (build if args.command == "build" else run)(args)


@contextlib.contextmanager
def compile_settings(settings: Mapping[str, str]) -> Iterator[None]:
    """`settings` (tilec's COMPILE_SETTINGS: part of every cache key) set in the environment
    while a variant's kernels are compiled or looked up, as they were before afterwards."""
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def copy_tb_s(torch: Any, l2_flush: str, gib: int = 1) -> float:
    """TB/s of a device-to-device copy of `gib` GiB (read + write counted), timed as the
    kernels are: the bandwidth a memory-bound kernel can reach under this flush."""
    from tilec.profiler import do_bench

    source = torch.empty(gib << 28, dtype=torch.int32, device="cuda")
    target = torch.empty_like(source)
    ms = do_bench(lambda: target.copy_(source), return_mode="median", l2_flush=l2_flush)
    return 2 * source.nbytes / (ms * 1e-3) / 1e12
