#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build for dlcfuzz.
#
# Builds every cargo-fuzz target with `cargo fuzz build -O` and puts into $OUT:
#   - each target binary;
#   - <target>_seed_corpus.zip from corpus/<target>/;
#   - the .options files of fuzz/ and the dictionary (onnx.dict, plus <target>.dict for the
#     targets whose options name it);
#   - the runtime libraries the targets load, under $OUT/lib: ONNX Runtime
#     (lib/onnxruntime, found beside the binary at run time), z3 (lib/z3) and libtorch
#     (lib/torch/lib with its lib/nvidia companions), reached through the binaries'
#     $ORIGIN rpaths; and the capability tables (lib/cache).
# Needs $SRC (holding the checkout as $SRC/dlcfuzz) and $OUT; $WORK is used for scratch.
# Python wheels come from PyPI through scripts/setup.sh (idempotent).
project="$SRC/dlcfuzz"
cd "$project"
scripts/setup.sh
scratch="${WORK:-/tmp}/dlcfuzz-build"
mkdir -p "$scratch" "$OUT"

cargo fuzz build -O
triple="$(rustc -vV | sed -n 's/^host: //p')"
bin_dir="${CARGO_TARGET_DIR:-$project/target}/$triple/release"
for target in $(cargo fuzz list); do
  cp "$bin_dir/$target" "$OUT/$target"
  if [ -d "corpus/$target" ]; then
    rm -f "$OUT/${target}_seed_corpus.zip"
    (cd "corpus/$target" && zip -q -r "$OUT/${target}_seed_corpus.zip" .)
  fi
  if [ -f "fuzz/$target.options" ]; then
    cp "fuzz/$target.options" "$OUT/$target.options"
    cp dicts/onnx.dict "$OUT/$target.dict"
  fi
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
# The probed capability tables, so that a fresh runner does not spend its first minute
# probing every op (the targets read lib/cache when there is no .deps beside them).
mkdir -p "$lib/cache"
if [ -d .deps/cache ]; then cp -a .deps/cache/. "$lib/cache/"; fi
du -sh "$OUT" | sed 's/^/OUT size: /'
