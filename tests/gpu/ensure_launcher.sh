#!/usr/bin/env bash
# Builds tilec's native launcher and native kernel call (built against this machine's torch)
# for its python3 unless both already import (the GPU machine gets the sources without the
# compiled modules). Run from the repo root.
#   tests/gpu/ensure_launcher.sh LOG
# The modules go beside the tilec.runtime that python3 imports (PYTHONPATH's python/, or a
# staged site-packages), from the launcher sources there; the CMake build folder is that
# folder's own, so suites unpacked in several places on one machine each get their build (one
# shared folder refused every source but the first: "does not match the source ... used to
# generate cache", and the suites ran on the Python call). Exits 1, saying so, when either
# module still does not import: the native-call tests would fail and the launch-overhead
# figures would be the Python call's.
log=${1:-/tmp/launcher_build.log}
runtime=$(python3 -c "import os, tilec.runtime as r; print(os.path.dirname(r.__file__))") || {
  echo "tilec.runtime does not import: set PYTHONPATH first"; exit 1; }
if ! python3 -c "import torch, tilec.runtime._launcher, tilec.runtime._launcher_torch" 2>/dev/null; then
  build=/tmp/build-launcher-$(printf %s "$runtime" | md5sum | cut -c1-12)
  echo "building the native launcher into $runtime (CMake folder $build)"
  cmake -S "$runtime/launcher" -B "$build" -DPython_EXECUTABLE="$(which python3)" \
    -DCMAKE_BUILD_TYPE=Release -DTILEC_LAUNCHER_OUTPUT_DIR="$runtime" > "$log" 2>&1 &&
    cmake --build "$build" -j 8 >> "$log" 2>&1 || tail -20 "$log"
fi
python3 -c "import tilec.runtime._launcher as l; print('native launcher:', l.__file__)" &&
  python3 -c "import torch, tilec.runtime._launcher_torch as c; print('native call:', c.__file__)" ||
  { echo "the native launcher or call did not build (log: $log): kernels take the Python call"
    exit 1; }
