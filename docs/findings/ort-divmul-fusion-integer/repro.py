#!/usr/bin/env python3
"""ORT DivMulFusion rewrites y * (1 / x) into y / x on int32, where 1 / x truncates to 0.

Div(1, x) -> Mul(y, .) on int32, x = [2, 3, -4], y = [10, 9, 8]. ORT_DISABLE_ALL gives
[0 0 0] (integer 1 / x truncates to 0, as ONNX specifies); ORT_ENABLE_BASIC gives [5 3 -2].
Bisected culprit: the DivMulFusion rewrite rule (disabling it alone fixes the result).
Exits 1 when the bug is present, 0 when not. Needs onnx, onnxruntime and numpy."""
import sys

import numpy as np
import onnx
import onnx.helper as h
import onnxruntime as ort
from onnx import TensorProto as T

x = h.make_tensor_value_info('x', T.INT32, [3])
y = h.make_tensor_value_info('y', T.INT32, [3])
z = h.make_tensor_value_info('z', T.INT32, [3])
one = h.make_tensor('one', T.INT32, [], [1])
g = h.make_graph([h.make_node('Div', ['one', 'x'], ['d']), h.make_node('Mul', ['y', 'd'], ['z'])], 'g', [x, y], [z], [one])
m = h.make_model(g, opset_imports=[h.make_opsetid('', 19)], ir_version=9)
onnx.checker.check_model(m, full_check=True)
feeds = {'x': np.array([2, 3, -4], np.int32), 'y': np.array([10, 9, 8], np.int32)}
expected = feeds['y'] * np.trunc(1 / feeds['x']).astype(np.int32)  # [0 0 0]


def run(level, disabled=()):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=['CPUExecutionProvider'], disabled_optimizers=list(disabled))
    return sess.run(None, feeds)[0]


print('onnxruntime', ort.__version__)
print('expected', expected)
L = ort.GraphOptimizationLevel
results = {name: run(level, dis) for name, level, dis in [
    ('ORT_DISABLE_ALL', L.ORT_DISABLE_ALL, ()),
    ('ORT_ENABLE_BASIC', L.ORT_ENABLE_BASIC, ()),
    ('BASIC - DivMulFusion', L.ORT_ENABLE_BASIC, ('DivMulFusion',)),
]}
for name, r in results.items():
    print(f'{name:22} {r}  {"ok" if np.array_equal(r, expected) else "WRONG"}')
if not np.array_equal(results['ORT_ENABLE_BASIC'], expected):
    print('BUG present: DivMulFusion turns y * (1 / x) into y / x on int32')
    sys.exit(1)
print('not reproduced: ORT_ENABLE_BASIC gives the integer result')
