#!/usr/bin/env bash
# Idempotent set-up for dlcfuzz: installs what is missing, then runs the given command.
#   scripts/setup.sh                     # just set up
#   scripts/setup.sh cargo test --release
# Python wheels go into the git-ignored, project-local .deps/py (found by .cargo/config.toml
# and build.rs); nothing is installed system-wide except Debian packages when missing.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
deps="$root/.deps/py"
mkdir -p "$deps"

log() { printf '[setup] %s\n' "$*" >&2; }

# Python wheels pinned to the versions dlcfuzz is built against.
wheels=(onnxruntime==1.31.1 onnx numpy z3-solver==5.4.0.0)
have_wheels() {
  PYTHONPATH="$deps" python3 - <<'PY' 2>/dev/null
import importlib.metadata as m, sys
want = {"onnxruntime": "1.31.1", "z3-solver": "5.4.0.0"}
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
for f in "$deps/z3/lib/libz3.so" "$deps/onnxruntime/capi/libonnxruntime.so.1.31.1"; do
  [ -e "$f" ] || { log "missing $f after pip install"; exit 1; }
done

# libtorch for the reference (tch 0.26 links torch 2.13.0): a slim pip install, without the
# CUDA libraries the full wheel pulls in; .cargo/config.toml points LIBTORCH at it.
torch_deps="$root/.deps/torch"
if [ ! -e "$torch_deps/torch/lib/libtorch_cpu.so" ]; then
  log "installing libtorch (torch==2.13.0, slim) into .deps/torch"
  python3 -m pip install --disable-pip-version-check --quiet --no-deps --target "$torch_deps" \
    torch==2.13.0 nvidia-cuda-runtime==13.0.96 nvidia-cuda-cupti==13.0.85
fi
[ -e "$torch_deps/torch/lib/libtorch_cpu.so" ] || { log "missing libtorch after pip install"; exit 1; }

# C toolchain for cc/bindgen-based crates.
if ! command -v cc >/dev/null 2>&1; then
  log "installing build-essential"
  apt-get update -qq && apt-get install -y -qq build-essential
fi

# A TrueType font for the plots of `dlcfuzz report`, and zip for oss-fuzz/build.sh.
if [ ! -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || ! command -v zip >/dev/null 2>&1; then
  log "installing fonts-dejavu-core and zip"
  apt-get update -qq && apt-get install -y -qq fonts-dejavu-core zip
fi

# cargo-fuzz for `cargo +nightly fuzz run <target>` (only when a nightly toolchain exists).
if rustup toolchain list 2>/dev/null | grep -q nightly && ! command -v cargo-fuzz >/dev/null 2>&1; then
  log "installing cargo-fuzz"
  cargo install cargo-fuzz --locked --quiet
fi

if [ "$#" -gt 0 ]; then
  exec "$@"
fi
