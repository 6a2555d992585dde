"""Puts the Python the hosted fuzz targets need into $OUT/lib, for oss-fuzz/build.sh.

A fuzzing cluster's runner image has no Python of ours (maybe none at all), so the
torch_compile_*, torch_onnx_export and tvm_* binaries carry their own:

  lib/cpython  this interpreter, relocated: bin/python3, its shared library (if any) in lib/,
               the standard library in lib/pythonX.Y (without site-packages and tests) and
               the C headers in include/pythonX.Y (Inductor compiles its kernels against
               them). The targets start it with PYTHONHOME and LD_LIBRARY_PATH pointing here
               (dlcfuzz::paths::python_interpreter).
  lib/python   the compilers' environment (.deps/python of `scripts/setup.sh
               --python-compilers`): torch, apache-tvm, onnxscript, onnxruntime and their
               dependencies, without Triton, which only the CUDA targets use (and those need
               a device a cluster bot lacks). The CUDA libraries stay (about 3 GB): PyPI's
               torch wheel will not import without them, even on a machine with no GPU.

Usage: python3 oss-fuzz/bundle_python.py ENV_DIR OUT_LIB_DIR
"""

import os
import shutil
import sys
import sysconfig

# Top-level entries of the environment that only the CUDA targets load (1 of its 5.8 GB
# here): torch imports and compiles on the CPU without Triton.
GPU_ONLY_PREFIXES = ("triton",)
# Console scripts, whose first line names the build machine's interpreter.
UNUSABLE = {"bin", "__pycache__"}


def gpu_only(name: str) -> bool:
    lowered = name.lower()
    return lowered.startswith(GPU_ONLY_PREFIXES)


def copy_environment(env_dir: str, dest: str) -> None:
    """The environment without its GPU-only packages, as lib/python."""
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    for name in sorted(os.listdir(env_dir)):
        if gpu_only(name) or name in UNUSABLE:
            continue
        source = os.path.join(env_dir, name)
        target = os.path.join(dest, name)
        if os.path.isdir(source):
            shutil.copytree(source, target, symlinks=True)
        else:
            shutil.copy2(source, target)


def copy_interpreter(dest: str) -> None:
    """This interpreter with its standard library and headers, as lib/cpython."""
    shutil.rmtree(dest, ignore_errors=True)
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    os.makedirs(os.path.join(dest, "bin"))
    os.makedirs(os.path.join(dest, "lib"))
    shutil.copy2(os.path.realpath(sys.executable), os.path.join(dest, "bin", "python3"))
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    library = sysconfig.get_config_var("INSTSONAME") or ""
    if sysconfig.get_config_var("Py_ENABLE_SHARED") and os.path.exists(
        os.path.join(libdir, library)
    ):
        shutil.copy2(os.path.join(libdir, library), os.path.join(dest, "lib", library))
    skip = shutil.ignore_patterns(
        "site-packages", "dist-packages", "test", "tests", "idlelib", "tkinter", "turtledemo"
    )
    shutil.copytree(
        sysconfig.get_path("stdlib"), os.path.join(dest, "lib", version), ignore=skip
    )
    platstdlib = sysconfig.get_path("platstdlib")
    dynload = os.path.join(platstdlib, "lib-dynload")
    bundled_dynload = os.path.join(dest, "lib", version, "lib-dynload")
    if not os.path.isdir(bundled_dynload):
        # Debian keeps the extension modules apart from the pure-Python library.
        shutil.copytree(dynload, bundled_dynload)
    shutil.copytree(sysconfig.get_path("include"), os.path.join(dest, "include", version))


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    env_dir, out_lib = sys.argv[1], sys.argv[2]
    if not os.path.isdir(os.path.join(env_dir, "torch")):
        sys.exit(
            f"{env_dir} holds no torch: run `scripts/setup.sh --python-compilers` first"
        )
    copy_interpreter(os.path.join(out_lib, "cpython"))
    copy_environment(env_dir, os.path.join(out_lib, "python"))


if __name__ == "__main__":
    main()
