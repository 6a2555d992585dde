#!/usr/bin/env python3
"""Runs onnx.checker.check_model(full_check=True) on every .onnx file of a folder and prints
one JSON line: {"checked": N, "failed": [[file, error], ...]}."""
import json
import pathlib
import sys

import onnx

failed = []
files = sorted(pathlib.Path(sys.argv[1]).glob("*.onnx"))
for f in files:
    try:
        onnx.checker.check_model(onnx.load(str(f)), full_check=True)
    except Exception as e:  # every checker error is reported, none is fatal to the run
        failed.append([f.name, str(e)[:500]])
print(json.dumps({"checked": len(files), "failed": failed}))
