#!/usr/bin/env python3
"""Counts op-name string literals outside the operator declarations (src/ops/) and outside
test modules (from the first `#[cfg(test)]` followed by `mod` to the end of a file): how many
places still key facts about an operator by its name (issue 31).

Op names: every op type of the pinned ONNX Runtime capability table (the registry's).
Usage: scripts/op-name-literals.py [GIT-REV]   (default: the working tree)"""
import collections
import json
import pathlib
import re
import subprocess
import sys


def sources(rev):
    if rev:
        listing = subprocess.run(["git", "ls-tree", "-r", "--name-only", rev, "src"],
                                 capture_output=True, text=True, check=True).stdout.split()
        for path in listing:
            if path.endswith(".rs"):
                yield path, subprocess.run(["git", "show", f"{rev}:{path}"],
                                           capture_output=True, text=True, check=True).stdout
    else:
        for path in sorted(pathlib.Path("src").rglob("*.rs")):
            yield str(path), path.read_text()


def op_names():
    table = json.load(open("src/backend/capability/pinned/ort.json"))
    names = {t[0] for k in ("supported", "unsupported") for t in table[k]}
    return names | {t[0] for t, _ in table["broken"]}


def main():
    rev = sys.argv[1] if len(sys.argv) > 1 else None
    names = op_names()
    per_file = collections.Counter()
    for path, text in sources(rev):
        if path.startswith("src/ops/"):
            continue
        tests = re.search(r"#\[cfg\(test\)\]\s*mod ", text)
        if tests:
            text = text[:tests.start()]
        text = re.sub(r"//[^\n]*", "", text)
        for m in re.finditer(r'"([A-Za-z0-9_]+)"', text):
            if m.group(1) in names:
                per_file[path] += 1
    print(sum(per_file.values()), "in", len(per_file), "files")
    for path, n in per_file.most_common():
        print(n, path)


if __name__ == "__main__":
    main()
