#!/usr/bin/env python3
"""ORT DoubleQDQPairsRemover drops the coarser quantization step of Q1 -> DQ1 -> Q2 -> DQ2.

x -> QuantizeLinear(0.5, 128) -> DequantizeLinear(0.5, 128) -> QuantizeLinear(0.25, 128)
-> DequantizeLinear(0.25, 128), uint8, per tensor. By the ONNX operator definitions the first
pair rounds x to a multiple of 0.5 (round half to even) and the second pair keeps it, so
x = 0.1875 gives 0.0 and x = 0.3 gives 0.5. DoubleQDQPairsRemover removes DQ1 and Q2 and
gives the outer pair a "recomputed" scale and zero point (the intersection of both ranges:
scale 0.25), although its header says the recomputation preserves equality to the original
sequence: the result is then x rounded to a multiple of 0.25 (0.25 for 0.1875, 0.25 for 0.3).
Bisected culprit: DoubleQDQPairsRemover (disabling it alone fixes the result); level basic.
Exits 1 when the bug is present, 0 when not. Needs onnx, onnxruntime and numpy."""
import sys

import numpy as np
import onnx
import onnx.helper as h
import onnxruntime as ort
from onnx import TensorProto as T

x = h.make_tensor_value_info('x', T.FLOAT, [6])
y = h.make_tensor_value_info('y', T.FLOAT, [6])
consts = [
    h.make_tensor('s1', T.FLOAT, [], [0.5]),
    h.make_tensor('s2', T.FLOAT, [], [0.25]),
    h.make_tensor('zp', T.UINT8, [], [128]),
]
nodes = [
    h.make_node('QuantizeLinear', ['x', 's1', 'zp'], ['q1']),
    h.make_node('DequantizeLinear', ['q1', 's1', 'zp'], ['d1']),
    h.make_node('QuantizeLinear', ['d1', 's2', 'zp'], ['q2']),
    h.make_node('DequantizeLinear', ['q2', 's2', 'zp'], ['y']),
]
m = h.make_model(h.make_graph(nodes, 'g', [x], [y], consts),
                 opset_imports=[h.make_opsetid('', 19)], ir_version=9)
onnx.checker.check_model(m, full_check=True)
feeds = {'x': np.array([0.1875, 0.3, -0.7, 1.1, 10.0, -20.0], np.float32)}


def qdq(v, scale, zp):
    """QuantizeLinear then DequantizeLinear, uint8, as ONNX defines them."""
    q = np.clip(np.rint(v / scale) + zp, 0, 255)
    return ((q - zp) * scale).astype(np.float32)


expected = qdq(qdq(feeds['x'], 0.5, 128), 0.25, 128)


def run(level, disabled=()):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=['CPUExecutionProvider'],
                                disabled_optimizers=list(disabled))
    return sess.run(None, feeds)[0]


print('onnxruntime', ort.__version__)
print('expected', expected)
L = ort.GraphOptimizationLevel
results = {name: run(level, dis) for name, level, dis in [
    ('ORT_DISABLE_ALL', L.ORT_DISABLE_ALL, ()),
    ('ORT_ENABLE_BASIC', L.ORT_ENABLE_BASIC, ()),
    ('BASIC - DoubleQDQPairsRemover', L.ORT_ENABLE_BASIC, ('DoubleQDQPairsRemover',)),
]}
for name, r in results.items():
    print(f'{name:30} {r}  {"ok" if np.array_equal(r, expected) else "WRONG"}')
if not np.array_equal(results['ORT_ENABLE_BASIC'], expected):
    print('BUG present: DoubleQDQPairsRemover changes the result when the two pairs differ in scale')
    sys.exit(1)
print('not reproduced: ORT_ENABLE_BASIC keeps both quantization steps')
