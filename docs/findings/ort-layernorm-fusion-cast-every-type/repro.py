#!/usr/bin/env python3
"""ORT LayerNormFusion fuses through a leading Cast(T -> float) and feeds the Cast's input to
the fused LayerNormalization, for every source type T other than float32.

x (int8, uint8, int32, uint32, int64, uint64, float16 or double) -> Cast(to=float) -> the
decomposed layer norm (ReduceMean(axes=[-1]), Sub, Pow 2, ReduceMean, Add eps, Sqrt, Div, Mul
scale, Add bias). The model is valid and runs with ORT_DISABLE_ALL; at ORT_ENABLE_BASIC,
LayerNormFusionL1 builds a LayerNormalization whose X is the Cast's input: "Type
'tensor(int8)' ... of operator (LayerNormalization) is invalid" for integers, "Type parameter
(T) ... bound to different types" for float16 and double against the float32 scale. Row 11's
own (larger) uint64 model no longer reproduces on 1.32.0; this minimal one does, for every
type. Bisected culprit: LayerNormFusionL1. Exits 1 when the bug is present for any type, 0
when not. Needs onnx, onnxruntime and numpy."""
import sys

import numpy as np
import onnx
import onnx.helper as h
import onnxruntime as ort
from onnx import TensorProto as T


def model(elem):
    x = h.make_tensor_value_info('x', elem, [2, 4])
    y = h.make_tensor_value_info('y', T.FLOAT, [2, 4])
    inits = [
        h.make_tensor('axes', T.INT64, [1], [-1]),
        h.make_tensor('two', T.FLOAT, [], [2.0]),
        h.make_tensor('eps', T.FLOAT, [], [1e-5]),
        h.make_tensor('scale', T.FLOAT, [4], [1.0, 0.5, -1.0, 2.0]),
        h.make_tensor('bias', T.FLOAT, [4], [0.0, 1.0, 0.5, -0.5]),
    ]
    nodes = [
        h.make_node('Cast', ['x'], ['xf'], to=T.FLOAT),
        h.make_node('ReduceMean', ['xf', 'axes'], ['mean']),
        h.make_node('Sub', ['xf', 'mean'], ['d']),
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
    return m


def run(m, feeds, level, disabled=()):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=['CPUExecutionProvider'],
                                disabled_optimizers=list(disabled))
    return sess.run(None, feeds)[0]


print('onnxruntime', ort.__version__)
L = ort.GraphOptimizationLevel
present = []
for elem, dtype in [(T.INT8, np.int8), (T.FLOAT16, np.float16), (T.UINT32, np.uint32), (T.INT32, np.int32), (T.UINT8, np.uint8), (T.INT64, np.int64), (T.UINT64, np.uint64), (T.DOUBLE, np.float64)]:
    m = model(elem)
    feeds = {'x': np.array([[1, 2, 3, 5], [4, 0, 7, 2]], dtype)}
    ref = run(m, feeds, L.ORT_DISABLE_ALL)
    try:
        got = run(m, feeds, L.ORT_ENABLE_BASIC)
        outcome = 'ok' if np.allclose(got, ref, atol=1e-4) else f'WRONG {got}'
    except Exception as e:  # the optimized session fails where the unoptimized one runs
        outcome = f'FAILURE: {str(e)[:160]}'
    fixed = run(m, feeds, L.ORT_ENABLE_BASIC, ('LayerNormFusionL1',))
    print(f'{T.DataType.Name(elem):8} basic: {outcome}')
    print(f'{"":8} basic without LayerNormFusionL1: {"ok" if np.allclose(fixed, ref, atol=1e-4) else "WRONG"}')
    if outcome != 'ok':
        present.append(T.DataType.Name(elem))
if present:
    print('BUG present: LayerNormFusion fuses through Cast from', ', '.join(present))
    sys.exit(1)
print('not reproduced')
