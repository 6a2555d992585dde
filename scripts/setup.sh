#!/usr/bin/env bash
# Idempotent set-up for dlcfuzz: installs what is missing for the chosen command, then runs it.
#   scripts/setup.sh                                  # the core: ONNX Runtime, z3, libtorch
#   scripts/setup.sh --ort 1.31.1 cargo run --release -- fuzz --target ort_cpu
#                                                     # also ONNX Runtime 1.31.1, and test it
#   scripts/setup.sh --python-compilers cargo test --release --lib --tests
#                                                     # also torch.compile and TVM (~5 GB)
# Options (before the command):
#   --ort VERSION         test ONNX Runtime VERSION (installed into .deps/ort/VERSION; the
#                         newest, 1.32.0, is always installed into .deps/py and is the default);
#                         exported to the command as DLCFUZZ_ORT_VERSION. ORT_DYLIB_PATH, if
#                         set, points the targets at any other build instead.
#   --python-compilers    also install the Python-hosted compilers (full torch, apache-tvm)
#                         into .deps/python: the torch_compile_* and tvm_* targets need them.
#   --openvino            also install the OpenVINO wheel into .deps/openvino (its C library is
#                         what the openvino_cpu target loads; done anyway when the command names
#                         an openvino target, and for the tests).
#   --cargo-fuzz          also install cargo-fuzz (done anyway for a `cargo fuzz` command).
# Python wheels go into the git-ignored, project-local .deps/; nothing is installed
# system-wide except Debian packages when missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
deps="$root/.deps/py"
mkdir -p "$deps"

log() { printf '[setup] %s\n' "$*" >&2; }

ort_newest=1.32.0
openvino_newest=2026.4.1
ort_version="${DLCFUZZ_ORT_VERSION:-$ort_newest}"
python_compilers="${DLCFUZZ_PYTHON_COMPILERS:-0}"
openvino="${DLCFUZZ_OPENVINO:-0}"
while [ "$#" -gt 0 ]; do
  case "$1" in
    --ort) ort_version="${2:?--ort needs a version}"; shift 2 ;;
    --ort=*) ort_version="${1#--ort=}"; shift ;;
    --python-compilers) python_compilers=1; shift ;;
    --openvino) openvino=1; shift ;;
    --cargo-fuzz) export DLCFUZZ_CARGO_FUZZ=1; shift ;;
    --) shift; break ;;
    *) break ;;
  esac
done

# Python wheels: the newest ONNX Runtime (the default target, and what every finding's
# repro.py is re-checked against), onnx and numpy for the repro scripts, z3 for the solver.
wheels=("onnxruntime==$ort_newest" onnx numpy z3-solver==5.4.0.0)
have_wheels() {
  PYTHONPATH="$deps" python3 - "$ort_newest" <<'PY' 2>/dev/null
import importlib.metadata as m, sys
want = {"onnxruntime": sys.argv[1], "z3-solver": "5.4.0.0"}
for name, version in want.items():
    if m.version(name) != version:
        sys.exit(1)
import onnx, numpy  # noqa: F401
PY
}
if ! have_wheels; then
  log "installing Python wheels into .deps/py: ${wheels[*]}"
  python3 -m pip install --disable-pip-version-check --quiet --upgrade --target "$deps" "${wheels[@]}"
fi
for f in "$deps/z3/lib/libz3.so" "$deps/onnxruntime/capi/libonnxruntime.so.$ort_newest"; do
  [ -e "$f" ] || { log "missing $f after pip install"; exit 1; }
done

# Another ONNX Runtime release, on request: only the wheel, beside the newest.
if [ "$ort_version" != "$ort_newest" ]; then
  ort_dir="$root/.deps/ort/$ort_version"
  if [ ! -e "$ort_dir/onnxruntime/capi/libonnxruntime.so.$ort_version" ]; then
    log "installing onnxruntime==$ort_version into .deps/ort/$ort_version"
    python3 -m pip install --disable-pip-version-check --quiet --no-deps --target "$ort_dir" \
      "onnxruntime==$ort_version" \
      || { log "onnxruntime $ort_version could not be installed (is it a release on PyPI?)"; exit 1; }
  fi
  [ -e "$ort_dir/onnxruntime/capi/libonnxruntime.so.$ort_version" ] \
    || { log "onnxruntime $ort_version has no libonnxruntime.so.$ort_version"; exit 1; }
fi
export DLCFUZZ_ORT_VERSION="$ort_version"

# libtorch for the reference (tch 0.26 links torch 2.13.0): a slim pip install, without the
# CUDA libraries the full wheel pulls in; .cargo/config.toml points LIBTORCH at it.
torch_deps="$root/.deps/torch"
if [ ! -e "$torch_deps/torch/lib/libtorch_cpu.so" ]; then
  log "installing libtorch (torch==2.13.0, slim) into .deps/torch"
  python3 -m pip install --disable-pip-version-check --quiet --no-deps --target "$torch_deps" \
    torch==2.13.0 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cupti==13.0.85
fi
[ -e "$torch_deps/torch/lib/libtorch_cpu.so" ] || { log "missing libtorch after pip install"; exit 1; }

# The Python-hosted compilers (torch.compile, the torch ONNX exporter with onnxscript and
# ONNX Runtime, TVM Relax): the full torch wheel with its CUDA
# libraries (importing torch needs them even on a CPU-only machine; Triton comes along for the
# GPU variants) and apache-tvm, in one environment with onnx for TVM's frontend. The Rust
# side starts `python3` with PYTHONPATH=.deps/python (src/paths.rs: python_env).
# Only with --python-compilers: the README's campaign command does not wait for ~5 GB.
py_env="$root/.deps/python"
torch_newest=2.15.0
have_python_env() {
  PYTHONPATH="$py_env" python3 - "$torch_newest" "$ort_newest" "$openvino_newest" "$@" <<'PY' 2>/dev/null
import importlib.metadata as m, sys
want = {"torch": sys.argv[1], "apache-tvm": "0.27.0.post1", "onnx": None,
        "onnxscript": None, "onnxruntime": sys.argv[2], "openvino": sys.argv[3]}
for name, version in want.items():
    if m.version(name) != (version or m.version(name)):
        sys.exit(1)
if "--import" in sys.argv:
    import torch, tvm, onnx, onnxscript, onnxruntime  # noqa: F401
PY
}
if [ "$python_compilers" = 1 ] && ! have_python_env; then
  log "installing torch==$torch_newest, apache-tvm==0.27.0.post1, onnx, onnxscript, onnxruntime==$ort_newest and openvino==$openvino_newest (torch.compile's openvino backend) into .deps/python (about 5 GB)"
  python3 -m pip install --disable-pip-version-check --quiet --upgrade --target "$py_env" \
    "torch==$torch_newest" apache-tvm==0.27.0.post1 onnx onnxscript "onnxruntime==$ort_newest" \
    "openvino==$openvino_newest"
  have_python_env --import || { log "torch/tvm/onnx/onnxscript/onnxruntime do not import from .deps/python after pip install"; exit 1; }
fi

# OpenVINO (the openvino_cpu target): the wheel and numpy, without the wheel's other
# dependencies (the C library needs none; a finding's repro.py needs numpy). Only when asked
# for, when the command names an openvino target, or for the tests (which cover every target).
case " $* " in
  *openvino*|*" test "*) openvino=1 ;;
esac
if [ "$openvino" = 1 ] && ! ls "$root/.deps/openvino/openvino/libs/libopenvino_c.so."* >/dev/null 2>&1; then
  log "installing openvino==$openvino_newest into .deps/openvino (about 180 MB)"
  python3 -m pip install --disable-pip-version-check --quiet --no-deps --target "$root/.deps/openvino" \
    "openvino==$openvino_newest" numpy
  ls "$root/.deps/openvino/openvino/libs/libopenvino_c.so."* >/dev/null 2>&1 \
    || { log "missing libopenvino_c.so.* after pip install"; exit 1; }
fi

# C toolchain for cc/bindgen-based crates (and for Inductor's generated C++).
if ! command -v cc >/dev/null 2>&1; then
  log "installing build-essential"
  apt-get update -qq && apt-get install -y -qq build-essential
fi

# libclang for bindgen (the TorchScript shim's Rust bindings, generated by build.rs).
if ! ls /usr/lib/llvm-*/lib/libclang.so* >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q 'libclang\.so'; then
  log "installing libclang-dev"
  apt-get update -qq && apt-get install -y -qq libclang-dev
fi

# A TrueType font for the plots of `dlcfuzz report`, and zip for oss-fuzz/build.sh.
if [ ! -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || ! command -v zip >/dev/null 2>&1; then
  log "installing fonts-dejavu-core and zip"
  apt-get update -qq && apt-get install -y -qq fonts-dejavu-core zip
fi

# cargo-fuzz, only for a `cargo fuzz` / `cargo +nightly fuzz` command (or --cargo-fuzz), when a
# nightly toolchain exists. `cargo run -- fuzz` is dlcfuzz's own campaign: no cargo-fuzz.
wants_cargo_fuzz="${DLCFUZZ_CARGO_FUZZ:-0}"
if [ "${1:-}" = cargo ] && { [ "${2:-}" = fuzz ] || { [ "${2:-}" != "${2#+}" ] && [ "${3:-}" = fuzz ]; }; }; then
  wants_cargo_fuzz=1
fi
if [ "$wants_cargo_fuzz" = 1 ] && rustup toolchain list 2>/dev/null | grep -q nightly \
  && ! command -v cargo-fuzz >/dev/null 2>&1; then
  log "installing cargo-fuzz"
  cargo install cargo-fuzz --locked --quiet
fi

if [ "$#" -gt 0 ]; then
  exec "$@"
fi
