#!/usr/bin/env python3
"""ORT SimplifiedLayerNormFusion fuses an RMS norm whose scale broadcasts the normalized input
to a larger shape; the fused SimplifiedLayerNormalization then rejects its own inputs.

x: float[1] -> Pow 2 -> ReduceMean(axes=[-1]) -> Add eps -> Sqrt -> Div(x, .) -> Mul(scale:
float[7]) = y: float[7]. Valid ONNX (Mul broadcasts [1] against [7]). With ORT_DISABLE_ALL
ORT returns x / sqrt(x^2 + eps) * scale; at ORT_ENABLE_EXTENDED SimplifiedLayerNormFusion
replaces the subgraph by SimplifiedLayerNormalization(X[1], scale[7]), which fails at run
time: "Scale and (optional) bias must match X.shape[axis:] or be NumPy-broadcastable to it".
The same missing shape check as LayerNormFusion (row 33), in the RMS-norm fusion. Bisected
culprit: SimplifiedLayerNormFusion. Exits 1 when the bug is present, 0 when not. Needs onnx,
onnxruntime and numpy."""
import sys

import numpy as np
import onnx
import onnx.helper as h
import onnxruntime as ort
from onnx import TensorProto as T

x = h.make_tensor_value_info('x', T.FLOAT, [1])
y = h.make_tensor_value_info('y', T.FLOAT, [7])
scale = np.array([-0.4375, -1.375, -0.671875, 0.5, 1.0, 0.25, 2.0], np.float32)
inits = [
    h.make_tensor('two', T.FLOAT, [], [2.0]),
    h.make_tensor('axes', T.INT64, [1], [-1]),
    h.make_tensor('eps', T.FLOAT, [], [1e-5]),
    h.make_tensor('scale', T.FLOAT, [7], scale.tolist()),
]
nodes = [
    h.make_node('Pow', ['x', 'two'], ['sq']),
    h.make_node('ReduceMean', ['sq', 'axes'], ['ms']),
    h.make_node('Add', ['ms', 'eps'], ['mse']),
    h.make_node('Sqrt', ['mse'], ['rms']),
    h.make_node('Div', ['x', 'rms'], ['n']),
    h.make_node('Mul', ['n', 'scale'], ['y']),
]
m = h.make_model(h.make_graph(nodes, 'g', [x], [y], inits),
                 opset_imports=[h.make_opsetid('', 19)], ir_version=9)
onnx.checker.check_model(m, full_check=True)
feeds = {'x': np.array([0.3], np.float32)}
v = np.float64(feeds['x'][0])
expected = (v / np.sqrt(v * v + 1e-5) * scale.astype(np.float64)).astype(np.float32)


def run(level, disabled=()):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=['CPUExecutionProvider'],
                                disabled_optimizers=list(disabled))
    return sess.run(None, feeds)[0]


print('onnxruntime', ort.__version__)
L = ort.GraphOptimizationLevel
ok = lambda r: np.allclose(r, expected, rtol=1e-5, atol=1e-6)
print('ORT_DISABLE_ALL', run(L.ORT_DISABLE_ALL), 'expected', expected)
without = run(L.ORT_ENABLE_EXTENDED, ('SimplifiedLayerNormFusion',))
print('extended without SimplifiedLayerNormFusion:', 'ok' if ok(without) else 'WRONG')
try:
    got = run(L.ORT_ENABLE_EXTENDED)
    failure = None if ok(got) else f'WRONG {got}'
except Exception as e:  # the optimized session fails where the unoptimized one runs
    failure = f'FAILURE: {str(e)[:200]}'
if failure:
    print('ORT_ENABLE_EXTENDED', failure)
    print('BUG present: SimplifiedLayerNormFusion fuses a scale that broadcasts X to a larger shape')
    sys.exit(1)
print('not reproduced')
