#!/usr/bin/env python3
"""ORT FastGeluFusion fuses a tanh-Gelu on a scalar (rank-0) input into FastGelu, whose CPU
kernel rejects rank 0 at run time.

x: float[] (a scalar) -> the tanh Gelu as FastGeluFusion matches it (Pow 3, Mul 0.044715,
Add x, Mul 0.7978846, Tanh, Add 1, Mul(Mul(x, 0.5), .)). Valid ONNX: every op takes scalars.
With ORT_DISABLE_ALL ORT computes gelu(x); at ORT_ENABLE_EXTENDED FastGeluFusion replaces it
by com.microsoft.FastGelu, which fails: "Input 0 is expected to have 1 or more dimensions, got
0". The fusion does not check the rank its kernel needs. Bisected culprit: FastGeluFusion.
Exits 1 when the bug is present, 0 when not. Needs onnx, onnxruntime and numpy."""
import sys

import numpy as np
import onnx
import onnx.helper as h
import onnxruntime as ort
from onnx import TensorProto as T

x = h.make_tensor_value_info('x', T.FLOAT, [])
y = h.make_tensor_value_info('y', T.FLOAT, [])
inits = [h.make_tensor(n, T.FLOAT, [], [v]) for n, v in [
    ('three', 3.0), ('cubic', 0.044715), ('scale', 0.7978846), ('one', 1.0), ('half', 0.5)]]
nodes = [
    h.make_node('Pow', ['x', 'three'], ['cube']),
    h.make_node('Mul', ['cube', 'cubic'], ['c']),
    h.make_node('Add', ['x', 'c'], ['inner']),
    h.make_node('Mul', ['inner', 'scale'], ['arg']),
    h.make_node('Tanh', ['arg'], ['t']),
    h.make_node('Add', ['t', 'one'], ['a']),
    h.make_node('Mul', ['x', 'half'], ['hx']),
    h.make_node('Mul', ['hx', 'a'], ['g']),
    h.make_node('Neg', ['g'], ['y']),
]
m = h.make_model(h.make_graph(nodes, 'g', [x], [y], inits),
                 opset_imports=[h.make_opsetid('', 19)], ir_version=9)
onnx.checker.check_model(m, full_check=True)
feeds = {'x': np.array(0.75, np.float32)}
v = 0.75
expected = -(0.5 * v * (1 + np.tanh(0.7978846 * (v + 0.044715 * v ** 3))))


def run(level, disabled=()):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=['CPUExecutionProvider'],
                                disabled_optimizers=list(disabled))
    return sess.run(None, feeds)[0]


print('onnxruntime', ort.__version__)
L = ort.GraphOptimizationLevel
ok = lambda r: np.allclose(r, expected, rtol=1e-5)
print('ORT_DISABLE_ALL', run(L.ORT_DISABLE_ALL), 'expected', expected)
print('extended without FastGeluFusion:', 'ok' if ok(run(L.ORT_ENABLE_EXTENDED, ('FastGeluFusion',))) else 'WRONG')
try:
    got = run(L.ORT_ENABLE_EXTENDED)
    failure = None if ok(got) else f'WRONG {got}'
except Exception as e:  # the optimized session fails where the unoptimized one runs
    failure = f'FAILURE: {str(e)[:200]}'
if failure:
    print('ORT_ENABLE_EXTENDED', failure)
    print('BUG present: FastGeluFusion fuses a rank-0 Gelu its kernel rejects')
    sys.exit(1)
print('not reproduced')
