#!/usr/bin/env python3
"""ORT LayerNormFusion fuses a layer norm whose scale and bias broadcast the normalized input
to a larger shape; the fused LayerNormalization then rejects its own inputs at run time.

x: float[1] -> ReduceMean(axes=[-1]) -> Sub -> Pow 2 -> ReduceMean -> Add eps -> Sqrt -> Div
-> Mul(scale: float[4]) -> Add(bias: float[4]) = y: float[4]. Valid ONNX (Mul and Add
broadcast [1] against [4]); by the operator definitions x - mean(x) = 0, so y = bias. With
ORT_DISABLE_ALL ORT returns the bias; at ORT_ENABLE_BASIC LayerNormFusionL1 replaces the
subgraph by LayerNormalization(X[1], scale[4], bias[4]), which fails: "Scale and (optional)
bias must match X.shape[axis:] or be NumPy-broadcastable to it". The fusion checks the scale's
rank, not that its shape is the normalized shape of X. Bisected culprit: LayerNormFusionL1.
Exits 1 when the bug is present, 0 when not. Needs onnx, onnxruntime and numpy."""
import sys

import numpy as np
import onnx
import onnx.helper as h
import onnxruntime as ort
from onnx import TensorProto as T

x = h.make_tensor_value_info('x', T.FLOAT, [1])
y = h.make_tensor_value_info('y', T.FLOAT, [4])
bias = [1.75, 1.0, -0.625, -1.25]
inits = [
    h.make_tensor('axes', T.INT64, [1], [-1]),
    h.make_tensor('two', T.FLOAT, [], [2.0]),
    h.make_tensor('eps', T.FLOAT, [], [1e-5]),
    h.make_tensor('scale', T.FLOAT, [4], [-0.5, 0.75, -0.75, 1.75]),
    h.make_tensor('bias', T.FLOAT, [4], bias),
]
nodes = [
    h.make_node('ReduceMean', ['x', 'axes'], ['mean']),
    h.make_node('Sub', ['x', 'mean'], ['d']),
    h.make_node('Pow', ['d', 'two'], ['sq']),
    h.make_node('ReduceMean', ['sq', 'axes'], ['var']),
    h.make_node('Add', ['var', 'eps'], ['ve']),
    h.make_node('Sqrt', ['ve'], ['std']),
    h.make_node('Div', ['d', 'std'], ['n']),
    h.make_node('Mul', ['n', 'scale'], ['s']),
    h.make_node('Add', ['s', 'bias'], ['y']),
]
m = h.make_model(h.make_graph(nodes, 'g', [x], [y], inits),
                 opset_imports=[h.make_opsetid('', 19)], ir_version=9)
onnx.checker.check_model(m, full_check=True)
feeds = {'x': np.array([0.3], np.float32)}
expected = np.array(bias, np.float32)


def run(level, disabled=()):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=['CPUExecutionProvider'],
                                disabled_optimizers=list(disabled))
    return sess.run(None, feeds)[0]


print('onnxruntime', ort.__version__)
L = ort.GraphOptimizationLevel
ok = lambda r: np.allclose(r, expected)
print('ORT_DISABLE_ALL', run(L.ORT_DISABLE_ALL), 'expected', expected)
print('basic without LayerNormFusionL1:', 'ok' if ok(run(L.ORT_ENABLE_BASIC, ('LayerNormFusionL1',))) else 'WRONG')
try:
    got = run(L.ORT_ENABLE_BASIC)
    failure = None if ok(got) else f'WRONG {got}'
except Exception as e:  # the optimized session fails where the unoptimized one runs
    failure = f'FAILURE: {str(e)[:200]}'
if failure:
    print('ORT_ENABLE_BASIC', failure)
    print('BUG present: LayerNormFusion fuses a scale that broadcasts X to a larger shape')
    sys.exit(1)
print('not reproduced')
