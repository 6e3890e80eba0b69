"""Installs the `tilec` package; building it runs CMake for the native modules.

Package map: python/tilec -> tilec (frontend, language, jit, runtime, cli, tools),
compiler/ -> tilec.compiler (passes, pipelines, targets). The native modules are the tile
dialect extension (tilec/dialect/_tile*.so) and the CUDA launcher (tilec/runtime/_launcher*.so),
built by CMake into the source tree through build/ (`make`, `pip install -e .`). A wheel
(`make wheel`: `pip wheel`, then auditwheel's manylinux tag) takes them from the same build/
when the same interpreter builds it, from build/wheel-<interpreter>/ otherwise (pip's isolated
build environment, whose MLIR wheels are its own), installed by `cmake --install` with rpaths
relative to the package only.
"""

import hashlib
import os
import subprocess
import sys

from setuptools import Distribution, find_packages, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
TREE_BUILD = os.path.join(ROOT, "build")


def _packages() -> list[str]:
    """Every package under python/tilec and compiler/ (a new subpackage needs no entry here)."""
    user = ["tilec", *(f"tilec.{name}" for name in find_packages(os.path.join(ROOT, "python",
                                                                              "tilec")))]
    compiler = ["tilec.compiler", *(f"tilec.compiler.{name}"
                                    for name in find_packages(os.path.join(ROOT, "compiler")))]
    return user + compiler


def _configured_by_this_interpreter(build_dir: str) -> bool:
    cache = os.path.join(build_dir, "CMakeCache.txt")
    if not os.path.exists(cache):
        return False
    with open(cache) as lines:  # Python_EXECUTABLE:<type>=<path>
        return any(line.startswith("Python_EXECUTABLE:")
                   and line.split("=", 1)[1].strip() == sys.executable for line in lines)


class BuildWithCMake(build_py):
    """Builds the native modules; for a wheel, installs them into the wheel's tree."""

    def run(self) -> None:
        super().run()
        if self.editable_mode or _configured_by_this_interpreter(TREE_BUILD):
            build_dir, output = TREE_BUILD, os.path.join(ROOT, "python", "tilec")
        else:  # another interpreter's MLIR wheels: its own build, the tree's modules untouched
            interpreter = hashlib.sha1(sys.executable.encode()).hexdigest()[:10]
            build_dir = os.path.join(TREE_BUILD, f"wheel-{interpreter}")
            output = os.path.join(build_dir, "tilec")
        flags = [f"-DPython_EXECUTABLE={sys.executable}", "-DCMAKE_BUILD_TYPE=Release",
                 f"-DTILEC_OUTPUT_DIR={output}"]
        if os.environ.get("TILEC_NO_DIALECT"):
            flags.append("-DTILEC_BUILD_DIALECT=OFF")
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir, *flags])
        jobs = str(min(os.cpu_count() or 2, 4))
        subprocess.check_call(["cmake", "--build", build_dir, "-j", jobs])
        if not self.editable_mode:  # the wheel's copies, with rpaths inside site-packages
            subprocess.check_call(["cmake", "--install", build_dir, "--component", "wheel",
                                   "--prefix", os.path.join(os.path.abspath(self.build_lib),
                                                            "tilec")])


class NativeDistribution(Distribution):
    """The wheel holds compiled modules: tag it for this platform and Python."""

    def has_ext_modules(self) -> bool:
        return True


setup(
    packages=_packages(),
    package_dir={"tilec": "python/tilec", "tilec.compiler": "compiler"},
    package_data={"tilec.compiler.targets": ["ascend_include/*.h", "msl_shim/metal_*",
                                             "msl_shim/simd/*.h", "naga_wgsl.mjs"]},
    cmdclass={"build_py": BuildWithCMake},
    distclass=NativeDistribution,
)
