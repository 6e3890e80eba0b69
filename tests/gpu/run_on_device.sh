#!/usr/bin/env bash
# The GPU machine's side of the CUDA suite: no MLIR there, only tilec's runtime.
#   tests/gpu/run_on_device.sh ARTIFACT_DIR CACHE_DIR OUT_DIR
# ARTIFACT_DIR from tests/gpu/build_artifacts.py, CACHE_DIR from precompile_frontend.py.
# Uses the prebuilt native launcher if it imports, else builds it with CMake; then runs the
# suite (pytest -m gpu), the quickstart (README's main command) and the launch-overhead
# benchmark, writing JSON and logs to OUT_DIR.
set -uo pipefail
ARTIFACTS=$1
export TILEC_CACHE_DIR=$2
OUT=$3
mkdir -p "$OUT"
export PYTHONPATH="$PWD/python:${PYTHONPATH:-}"
export PYTHONUNBUFFERED=1
{
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda)"
} > "$OUT/environment.txt" 2>&1
cat "$OUT/environment.txt"
bash tests/gpu/ensure_launcher.sh "$OUT/launcher_build.log"
TILEC_GPU_ARTIFACTS="$ARTIFACTS" TILEC_GPU_RESULTS="$OUT/gpu_suite.json" \
  TILEC_GPU_FRONTEND_RESULTS="$OUT/gpu_frontend.json" \
  TILEC_GPU_MMA_SYNC_RESULTS="$OUT/gpu_mma_sync.json" timeout 400 \
  python3 -m pytest -m gpu tests/gpu -q -p no:cacheprovider --noconftest -o addopts="" \
  --continue-on-collection-errors -rf 2>&1 | tee "$OUT/gpu_suite.log" | tail -40
timeout 120 python3 examples/quickstart.py 2>&1 | tee "$OUT/quickstart.log" | tail -3
timeout 120 python3 benchmarks/launch_overhead.py --artifacts "$ARTIFACTS" \
  --out "$OUT/launch_overhead.json" 2>&1 | tee "$OUT/launch_overhead.log" | tail -12
