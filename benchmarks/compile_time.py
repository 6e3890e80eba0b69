"""How long tilec takes before a kernel runs: `import tilec`, and a cold compile of the quickstart.

Each measurement runs in a fresh Python process with the cache disabled, so nothing is reused.
Writes a JSON record to benchmarks/results/ (or --out).
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

IMPORT_PROBE = """
import time
start = time.perf_counter()
import tilec
print(time.perf_counter() - start)
"""

COMPILE_PROBE = """
import sys, time
sys.path.insert(0, {examples!r})
import torch
import tilec
tilec.disable_cache()
from quickstart import matmul
a = torch.randn({m}, {k}, dtype=torch.float16)
b = torch.randn({k}, {n}, dtype=torch.float16)
start = time.perf_counter()
matmul.compile(a, b, target={target!r})
print(time.perf_counter() - start)
"""


def time_in_fresh_process(code: str, repeats: int) -> list[float]:
    """Seconds reported by `code` (its last printed line), once per fresh interpreter."""
    times = []
    for _ in range(repeats):
        output = subprocess.run(
            [sys.executable, "-c", code], check=True, capture_output=True, text=True
        ).stdout
        times.append(float(output.strip().splitlines()[-1]))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--targets", default="cpu,cuda:sm_90a,cuda:sm_80")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()

    record: dict = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": platform.node(),
        "python": platform.python_version(),
        "import_s": time_in_fresh_process(IMPORT_PROBE, args.repeats),
        "compile_s": {},
    }
    examples = str(ROOT / "examples")
    for target in args.targets.split(","):
        code = COMPILE_PROBE.format(examples=examples, m=1024, n=1024, k=1024, target=target)
        try:
            record["compile_s"][target] = time_in_fresh_process(code, args.repeats)
        except subprocess.CalledProcessError as error:
            record["compile_s"][target] = f"failed: {error.stderr.strip().splitlines()[-1]}"

    print(f"import tilec: median {statistics.median(record['import_s']) * 1e3:.0f} ms")
    for target, times in record["compile_s"].items():
        if isinstance(times, list):
            print(f"quickstart cold compile to {target}: median {statistics.median(times):.2f} s")
        else:
            print(f"quickstart cold compile to {target}: {times}")
    out = args.out or ROOT / "benchmarks" / "results" / f"compile-time-{record['date'][:10]}.json"
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
