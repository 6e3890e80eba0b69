#!/usr/bin/env bash
# Builds tilec's native launcher and native kernel call (built against this machine's torch)
# for its python3 unless both already import (the GPU machine gets the sources without the
# compiled modules). Run from the repo root.
#   tests/gpu/ensure_launcher.sh LOG
log=${1:-/tmp/launcher_build.log}
if ! python3 -c "import torch, tilec.runtime._launcher, tilec.runtime._launcher_torch" 2>/dev/null; then
  echo "building the native launcher here"
  cmake -S python/tilec/runtime/launcher -B /tmp/build-launcher -DPython_EXECUTABLE="$(which python3)" \
    -DCMAKE_BUILD_TYPE=Release > "$log" 2>&1 &&
    cmake --build /tmp/build-launcher -j 8 >> "$log" 2>&1 || tail -20 "$log"
fi
python3 -c "import tilec.runtime._launcher as l; print('native launcher:', l.__file__)"
python3 -c "import torch, tilec.runtime._launcher_torch as c; print('native call:', c.__file__)"
