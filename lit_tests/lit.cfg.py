"""lit configuration: `lit -v lit_tests` runs every .mlir (and .py, where a lit.local.cfg adds it).

Tools: tilec and tilec-opt from the bin directory of the Python that runs lit (the venv),
FileCheck and not from the LLVM/MLIR wheels' bin directories inside site-packages (they are
not on PATH).
"""

import os
import shutil
import sys
import sysconfig

import lit.formats

config.name = "tilec"  # noqa: F821 - lit injects `config`
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir"]  # noqa: F821
config.test_source_root = os.path.dirname(__file__)  # noqa: F821
config.excludes = ["lit.cfg.py", "lit.local.cfg", "Inputs"]  # noqa: F821

site_packages = sysconfig.get_paths()["purelib"]
python_bin = os.path.dirname(os.path.realpath(sys.executable))
venv_bin = os.path.dirname(sys.executable)
tool_dirs = [
    venv_bin,
    python_bin,
    os.path.join(site_packages, "llvm", "bin"),
    os.path.join(site_packages, "mlir", "bin"),
]


def find_tool(name: str) -> str:
    """The tool's absolute path: the venv's bin, then the wheels' bin dirs, then PATH."""
    for directory in tool_dirs:
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which(name)
    if found is None:
        lit_config.fatal(f"cannot find '{name}' (looked in {tool_dirs} and PATH)")  # noqa: F821
    return found


config.environment["PATH"] = os.pathsep.join(  # noqa: F821
    tool_dirs + [os.environ.get("PATH", "")]
)
for variable in ("HOME", "TMPDIR", "PYTHONPATH"):
    if variable in os.environ:
        config.environment[variable] = os.environ[variable]  # noqa: F821

# longest names first: "tilec-opt" must not be rewritten as "tilec" + "-opt"
for tool in ("tilec-opt", "tilec", "FileCheck", "not"):
    config.substitutions.append(  # noqa: F821
        (rf"(?<![\w%/.-]){tool}(?![\w-])", find_tool(tool))
    )
config.substitutions.append(("%python", sys.executable))  # noqa: F821
