#!/usr/bin/env bash
# Every GPU measurement of tilec in one call on the GPU machine, which has torch but no MLIR:
#   benchmarks/device_suite.sh build DIR [SUITE...]   (compiler machine, from the repo root)
#   bash DIR/run.sh OUT                                (GPU machine: carry DIR, results to OUT)
# `build` copies the runtime's sources into DIR/src and compiles, for sm_90a, the GPU test suite
# (tests/gpu/build_artifacts.py + precompile_frontend.py) and each benchmark's kernels into its
# own cache; `run.sh` runs the suite (tests/gpu/run_on_device.sh: pytest -m gpu, quickstart,
# launch overhead) and then each benchmark's `run` half, each bounded by its own timeout, so a
# hang in one leaves the others' results. DIR can pass the device's carry limit (64 MiB): tar it
# (`tar czf DIR.tgz DIR`, a fifth of the size) and unpack it there before run.sh. SUITE names a subset: gpu fused_gemm mma_sync_gemm
# attention bandwidth quantized gemm (default: all), gemm_per_op (not in the default: gemm's suite per
# op beside the whole-kernel GEMM and the library peers, benchmarks/gemm_per_op.py, about two
# minutes) or sanitizer (not in the default either): one small
# problem per lowering path of the GPU suite under compute-sanitizer's memcheck, racecheck,
# synccheck and initcheck (tests/gpu/run_sanitizer.py's `paths` plan, about two minutes,
# reports in OUT/sanitizer/sanitizer.json; its --plan runs the whole suite in about ten).
set -uo pipefail
mode=${1:?usage: device_suite.sh build DIR [SUITE...]}
dir=${2:?usage: device_suite.sh build DIR [SUITE...]}
shift 2
[ "$mode" = build ] || { echo "unknown mode '$mode' (only 'build': run DIR/run.sh there)" >&2; exit 2; }
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(gpu fused_gemm mma_sync_gemm attention bandwidth quantized gemm)
python=${PYTHON:-.venv/bin/python}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
rm -f "$dir/gpu/built"  # the GPU suite's kernels are compiled again on each build

mkdir -p "$dir/src"
tar -c --exclude=__pycache__ --exclude='*.so' --exclude=benchmarks/results \
    python tests benchmarks examples | tar -x -C "$dir/src"
git rev-parse --short HEAD > "$dir/commit" 2>/dev/null || true

# run.sh's line per suite, and its wall-clock limit on the GPU machine (seconds).
declare -A run_line=(
  [gpu]='bash tests/gpu/run_on_device.sh "$DIR/gpu/artifacts" "$DIR/gpu/cache" "$OUT/gpu"'
  [fused_gemm]='TILEC_CACHE_DIR="$DIR/fused_gemm" python3 benchmarks/fused_gemm.py run --out "$OUT/fused_gemm.json"'
  [mma_sync_gemm]='TILEC_CACHE_DIR="$DIR/mma_sync_gemm" python3 benchmarks/mma_sync_gemm.py run --out "$OUT/mma_sync_gemm.json"'
  [attention]='TILEC_CACHE_DIR="$DIR/attention" python3 benchmarks/attention.py run --out "$OUT/attention.json"'
  [bandwidth]='TILEC_CACHE_DIR="$DIR/bandwidth" python3 benchmarks/bandwidth.py run --out "$OUT/bandwidth.json"'
  [quantized]='TILEC_CACHE_DIR="$DIR/quantized" python3 benchmarks/quantized.py run --out "$OUT/quantized.json"'
  [gemm]='python3 benchmarks/gemm_device.py run "$DIR/gemm" --out "$OUT/gemm.json"'
  [gemm_per_op]='TILEC_CACHE_DIR="$DIR/gemm_per_op" python3 benchmarks/gemm_per_op.py run --out "$OUT/gemm_per_op.json"'
  [sanitizer]='python3 tests/gpu/run_sanitizer.py "$OUT/sanitizer" --artifacts "$DIR/gpu/artifacts" --cache "$DIR/gpu/cache" --commit "$(cat "$DIR/commit")"'
)
declare -A run_limit=([gpu]=450 [fused_gemm]=150 [mma_sync_gemm]=120 [attention]=240 [bandwidth]=120
                      [quantized]=120 [gemm]=300 [gemm_per_op]=150 [sanitizer]=150)

{
  echo '#!/usr/bin/env bash'
  echo '# Written by benchmarks/device_suite.sh build: bash run.sh OUT on the GPU machine.'
  echo 'set -u'
  echo 'DIR=$(cd "$(dirname "$0")" && pwd); OUT=${1:?usage: run.sh OUT}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)'
  echo 'cd "$DIR/src"; export PYTHONPATH="$PWD/python:${PYTHONPATH:-}" PYTHONUNBUFFERED=1'
  echo 'export DIR OUT; cp "$DIR/commit" "$OUT/" 2>/dev/null'
  echo 'bash tests/gpu/ensure_launcher.sh "$OUT/launcher_build.log"'
} > "$dir/run.sh"

status=0
for suite in "${suites[@]}"; do
  [ -n "${run_line[$suite]:-}" ] || { echo "unknown suite '$suite'" >&2; exit 2; }
  log="$dir/build_$suite.log"
  start=$(date +%s)
  case $suite in
    gpu|sanitizer)  # the sanitizer runs the GPU suite's kernels: built once for both
      if [ -f "$dir/gpu/built" ]; then true; else
        "$python" tests/gpu/build_artifacts.py "$dir/gpu/artifacts" --arch sm_90a > "$log" 2>&1 &&
          "$python" tests/gpu/precompile_frontend.py "$dir/gpu/cache" >> "$log" 2>&1 &&
          touch "$dir/gpu/built"
      fi ;;
    gemm) "$python" benchmarks/gemm.py build "$dir/gemm" > "$log" 2>&1 ;;
    *) "$python" "benchmarks/$suite.py" build "$dir/$suite" > "$log" 2>&1 ;;
  esac
  rc=$?
  echo "$suite: build rc=$rc in $(( $(date +%s) - start )) s (log $log)"
  if [ $rc -ne 0 ]; then status=1; tail -5 "$log"; continue; fi
  {
    echo "echo \"== $suite\"; start=\$(date +%s)"
    echo "timeout ${run_limit[$suite]} bash -c '${run_line[$suite]}' > \"\$OUT/$suite.log\" 2>&1"
    echo "echo \"$suite rc=\$? in \$(( \$(date +%s) - start )) s\" | tee -a \"\$OUT/summary.txt\""
  } >> "$dir/run.sh"
done
echo "run.sh and $(du -sh "$dir" | cut -f1) in $dir"
exit $status
