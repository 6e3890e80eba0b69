"""Installs the `tilec` package; building it first runs CMake for the native modules.

Package map: python/tilec -> tilec (frontend, language, jit, runtime, cli),
compiler/ -> tilec.compiler (passes, pipelines, targets).
"""

import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))


class BuildWithCMake(build_py):
    """Build the tile dialect extension into python/tilec before packaging."""

    def run(self) -> None:
        build_dir = os.path.join(ROOT, "build")
        flags = [f"-DPython_EXECUTABLE={sys.executable}", "-DCMAKE_BUILD_TYPE=Release"]
        if os.environ.get("TILEC_NO_DIALECT"):
            flags.append("-DTILEC_BUILD_DIALECT=OFF")
        subprocess.check_call(["cmake", "-S", ROOT, "-B", build_dir, *flags])
        jobs = str(os.cpu_count() or 2)
        subprocess.check_call(["cmake", "--build", build_dir, "-j", jobs])
        super().run()


setup(
    packages=[
        "tilec",
        "tilec.dialect",
        "tilec.language",
        "tilec.frontend",
        "tilec.runtime",
        "tilec.carver",
        "tilec.carver.roller",
        "tilec.contrib",
        "tilec.layout",
        "tilec.testing",
        "tilec.tvm",
        "tilec.utils",
        "tilec.tools",
        "tilec.compiler",
        "tilec.compiler.passes",
        "tilec.compiler.targets",
        "tilec.compiler.tensorcore",
        "tilec.compiler.layouts",
    ],
    package_dir={"tilec": "python/tilec", "tilec.compiler": "compiler"},
    package_data={"tilec.dialect": ["*.so", "_tile_ops_gen.py"], "tilec.runtime": ["*.so"]},
    cmdclass={"build_py": BuildWithCMake},
)
