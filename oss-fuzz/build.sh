#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build for dlcfuzz: every fuzz target, runnable from $OUT alone.
#
# Builds every cargo-fuzz target with `cargo fuzz build -O` and puts into $OUT:
#   - each target binary (`cargo fuzz list`: all 17; the CUDA ones end at start-up saying
#     they need a device, as a cluster bot has none);
#   - <target>_seed_corpus.zip from corpus/<target>/;
#   - <target>.options from fuzz/ (derived from the target registry: the time limit of one
#     input, and the ONNX dictionary for the ONNX-file targets) and the dictionary onnx.dict;
#   - under $OUT/lib, everything the targets load at run time, found beside the binary
#     through its $ORIGIN rpaths or dlcfuzz::paths:
#       lib/onnxruntime  ONNX Runtime's shared library (the newest release);
#       lib/z3           libz3 of the constraint solver;
#       lib/torch/lib    libtorch of the tch crate (the reference, TorchScript);
#       lib/cpython      a relocated Python interpreter with its standard library and
#                        headers (oss-fuzz/bundle_python.py);
#       lib/python       the Python-hosted compilers' environment: torch, apache-tvm,
#                        onnxscript, onnxruntime, without Triton (CUDA only);
#       lib/openvino     the OpenVINO wheel (its C library, loaded by openvino_cpu);
#       lib/cache        the probed capability tables, so that a fresh runner does not
#                        spend minutes probing.
# What $OUT cannot carry: torch_compile_cpu needs g++ (Inductor compiles every kernel with
# it); the runner image must have it, and the target says so at start-up when it is missing.
# Needs $SRC (holding the checkout as $SRC/dlcfuzz) and $OUT; $WORK is used for scratch.
# Python wheels come from PyPI through scripts/setup.sh (idempotent).
project="$SRC/dlcfuzz"
cd "$project"
scripts/setup.sh --python-compilers --openvino
mkdir -p "$OUT"

cargo fuzz build -O
triple="$(rustc -vV | sed -n 's/^host: //p')"
bin_dir="${CARGO_TARGET_DIR:-$project/target}/$triple/release"
for target in $(cargo fuzz list); do
  cp "$bin_dir/$target" "$OUT/$target"
  if [ -d "corpus/$target" ]; then
    rm -f "$OUT/${target}_seed_corpus.zip"
    (cd "corpus/$target" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
  fi
  cp "fuzz/$target.options" "$OUT/$target.options"
  echo "built $target"
done
cp dicts/onnx.dict "$OUT/onnx.dict"

lib="$OUT/lib"
mkdir -p "$lib/onnxruntime" "$lib/z3" "$lib/torch"
# The newest release setup.sh installed (the targets load libonnxruntime.so.<version>).
cp .deps/py/onnxruntime/capi/libonnxruntime.so.* "$lib/onnxruntime/"
cp -a .deps/py/z3/lib/. "$lib/z3/"
rm -rf "$lib/torch/lib" "$lib/nvidia"
cp -a .deps/torch/torch/lib "$lib/torch/lib"
if [ -d .deps/torch/nvidia ]; then cp -a .deps/torch/nvidia "$lib/nvidia"; fi
python3 oss-fuzz/bundle_python.py .deps/python "$lib"
rm -rf "$lib/openvino"
cp -a .deps/openvino "$lib/openvino"
mkdir -p "$lib/cache"
if [ -d .deps/cache ]; then cp -a .deps/cache/. "$lib/cache/"; fi
# The instrumented Python is keyed by source path: $OUT's own is built on its first start.
rm -rf "$lib/cache/python-lines"
du -sh "$OUT" | sed 's/^/OUT size: /'
