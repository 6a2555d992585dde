#!/bin/bash
# Proves oss-fuzz/build.sh the way it can run here, without Docker: a fresh $OUT, then every
# target fuzzes from $OUT alone for SECONDS (default 30) under `env -i`, in a mount namespace
# where this checkout (its .deps, target/ and corpus/), the build's Python, cargo and rustup
# are hidden behind empty folders. Each target's last libFuzzer lines are printed; its log and
# artifacts (a finding stops a target early: libFuzzer's default) stay in OUT/../work.
#   oss-fuzz/prove.sh [OUT [SECONDS]]        (root: it uses `unshare -m`)
#   DLCFUZZ_PROVE_REBUILD=0 oss-fuzz/prove.sh /tmp/o/out    # reuse a built $OUT
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-/tmp/dlcfuzz-oss/out}"
seconds="${2:-30}"
base="$(dirname "$out")"
case "$out/" in "$root"/*) echo "OUT must lie outside the checkout ($root)" >&2; exit 2 ;; esac
command -v unshare >/dev/null || { echo "needs unshare (util-linux) to hide the checkout" >&2; exit 2; }

if [ "${DLCFUZZ_PROVE_REBUILD:-1}" != 0 ]; then
  rm -rf "$out" "$base/src" "$base/work"
  mkdir -p "$out" "$base/src" "$base/work"
  ln -s "$root" "$base/src/dlcfuzz"
  SRC="$base/src" OUT="$out" WORK="$base/work" RUSTUP_TOOLCHAIN=nightly \
    CARGO_TARGET_DIR="$root/target" "$root/oss-fuzz/build.sh"
fi
echo "== \$OUT"
(cd "$out" && ls -1 | grep -v '^lib$'; du -sh lib/* | sed 's/^/lib: /')

python_home="$(python3 -c 'import sys; print(sys.base_prefix)')"
hidden=("$root" "$python_home" "${CARGO_HOME:-$HOME/.cargo}" "${RUSTUP_HOME:-$HOME/.rustup}")
for binary in "$out"/*; do
  [ -f "$binary" ] && [ -x "$binary" ] || continue
  target="$(basename "$binary")"
  corpus="$base/work/corpus-$target"
  rm -rf "$corpus" && mkdir -p "$corpus"
  if [ -f "$out/${target}_seed_corpus.zip" ]; then
    unzip -q "$out/${target}_seed_corpus.zip" -d "$corpus"
  fi
  options=()
  while IFS='=' read -r key value; do
    key="${key// /}"; value="${value// /}"
    case "$key" in timeout) options+=("-timeout=$value") ;; dict) options+=("-dict=$out/$value") ;; esac
  done < <(grep '=' "$out/$target.options" 2>/dev/null || true)
  echo "== $target (${seconds}s from \$OUT, env -i; ${options[*]:-no options})"
  masks=""
  for dir in "${hidden[@]}"; do [ -d "$dir" ] && masks+="mount -t tmpfs none '$dir'; "; done
  log="$base/work/$target.log"
  artifacts="$base/work/artifacts-$target"
  mkdir -p "$artifacts"
  set +e
  (cd "$base/work" && unshare -m sh -c "$masks exec env -i '$binary' -max_total_time=$seconds \
    -print_final_stats=1 -artifact_prefix='$artifacts/' ${options[*]:-} '$corpus'") >"$log" 2>&1
  status=$?
  set -e
  grep -E '^(#[0-9]+|dlcfuzz:|stat::number_of_executed_units|stat::average_exec_per_sec|Done)|ERROR|panicked' "$log" | tail -6
  echo "exit status $status (log: $log)"
done
