"""The native launcher's standalone CMake build puts its modules where Python imports
tilec.runtime from: built into a source tree that the installed tilec never reads, every kernel
would take the Python call (JITKernel.call_path would name the missing module)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

LAUNCHER = Path(__file__).resolve().parents[1] / "python" / "tilec" / "runtime" / "launcher"


def configured_output(build: Path, pythonpath: Path | None) -> str:
    """TILEC_LAUNCHER_OUTPUT_DIR as CMake configures the launcher (no torch call, no build)."""
    cmake = shutil.which("cmake", path=f"{Path(sys.executable).parent}{os.pathsep}"
                                       f"{os.environ.get('PATH', '')}")
    if cmake is None:
        pytest.skip("no cmake")
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    subprocess.run([cmake, "-S", str(LAUNCHER), "-B", str(build),
                    f"-DPython_EXECUTABLE={sys.executable}", "-DTILEC_BUILD_TORCH_CALL=OFF"],
                   check=True, capture_output=True, text=True, env=env, timeout=240)
    cache = (build / "CMakeCache.txt").read_text()
    return re.search(r"^TILEC_LAUNCHER_OUTPUT_DIR:PATH=(.*)$", cache, re.M).group(1)


def test_modules_go_to_the_imported_tilec(tmp_path: Path) -> None:
    """A tilec installed elsewhere (here a stand-in package first on PYTHONPATH) gets them."""
    runtime = tmp_path / "site" / "tilec" / "runtime"
    runtime.mkdir(parents=True)
    (runtime.parent / "__init__.py").write_text("")
    (runtime / "__init__.py").write_text("")
    assert configured_output(tmp_path / "build", tmp_path / "site") == str(runtime)


def test_the_editable_install_builds_into_its_sources(tmp_path: Path) -> None:
    """`make`'s editable install imports tilec.runtime from python/tilec/runtime itself."""
    assert Path(configured_output(tmp_path / "build", None)).resolve() == LAUNCHER.parent
