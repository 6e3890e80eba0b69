#!/usr/bin/env bash
# Builds tilec's native launcher for this machine's python3 unless it already imports (the GPU
# machine gets the sources without the compiled module). Run from the repo root.
#   tests/gpu/ensure_launcher.sh LOG
log=${1:-/tmp/launcher_build.log}
if ! python3 -c "import tilec.runtime._launcher" 2>/dev/null; then
  echo "building the native launcher here"
  cmake -S python/tilec/runtime/launcher -B /tmp/build-launcher -DPython_EXECUTABLE="$(which python3)" \
    -DCMAKE_BUILD_TYPE=Release > "$log" 2>&1 &&
    cmake --build /tmp/build-launcher -j 8 >> "$log" 2>&1 || tail -20 "$log"
fi
python3 -c "import tilec.runtime._launcher as l; print('native launcher:', l.__file__)"
