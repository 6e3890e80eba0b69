"""Installs the `tilec` package; building it runs CMake for the native modules.

Package map: python/tilec -> tilec (frontend, language, jit, runtime, cli, tools),
compiler/ -> tilec.compiler (passes, pipelines, targets). The native modules are the tile
dialect extension (tilec/dialect/_tile*.so) and the CUDA launcher (tilec/runtime/_launcher*.so):
an editable install (`pip install -e .`, `make`) builds them into the source tree through
build/; a wheel (`pip wheel .`) builds them into the wheel's own tree through
build/wheel-<interpreter>/, leaving the source tree's as they are.
"""

import hashlib
import os
import subprocess
import sys

from setuptools import Distribution, find_packages, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


def _packages() -> list[str]:
    """Every package under python/tilec and compiler/ (a new subpackage needs no entry here)."""
    user = ["tilec", *(f"tilec.{name}" for name in find_packages(os.path.join(ROOT, "python",
                                                                              "tilec")))]
    compiler = ["tilec.compiler", *(f"tilec.compiler.{name}"
                                    for name in find_packages(os.path.join(ROOT, "compiler")))]
    return user + compiler


class BuildWithCMake(build_py):
    """Builds the dialect extension and the launcher where the package is assembled."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            build_dir, output = os.path.join(ROOT, "build"), os.path.join(ROOT, "python", "tilec")
        else:  # its own build folder per interpreter: the wheel's may link other MLIR wheels
            interpreter = hashlib.sha1(sys.executable.encode()).hexdigest()[:10]
            build_dir = os.path.join(ROOT, "build", f"wheel-{interpreter}")
            output = os.path.join(os.path.abspath(self.build_lib), "tilec")
        wheel = "OFF" if self.editable_mode else "ON"
        flags = [f"-DPython_EXECUTABLE={sys.executable}", "-DCMAKE_BUILD_TYPE=Release",
                 f"-DTILEC_OUTPUT_DIR={output}", f"-DTILEC_WHEEL={wheel}"]
        if os.environ.get("TILEC_NO_DIALECT"):
            flags.append("-DTILEC_BUILD_DIALECT=OFF")
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir, *flags])
        jobs = str(min(os.cpu_count() or 2, 4))
        subprocess.check_call(["cmake", "--build", build_dir, "-j", jobs])


class NativeDistribution(Distribution):
    """The wheel holds compiled modules: tag it for this platform and Python."""

    def has_ext_modules(self) -> bool:
        return True


setup(
    packages=_packages(),
    package_dir={"tilec": "python/tilec", "tilec.compiler": "compiler"},
    package_data={"tilec.dialect": ["*.so", "_tile_ops_gen.py"], "tilec.runtime": ["*.so"],
                  "tilec.compiler.targets": ["ascend_include/*.h", "msl_shim/metal_*",
                                             "msl_shim/simd/*.h", "naga_wgsl.mjs"]},
    cmdclass={"build_py": BuildWithCMake},
    distclass=NativeDistribution,
)
