#!/usr/bin/env python3
"""ONNX Runtime CPU (1.31.1 and 1.32.0): FastGeluFusion removes the Mul(x, 0.5) of the
tanh-approximation Gelu pattern although that Mul's output has a second consumer.

x: float32[4]
  h     = Mul(x, 0.5)
  x3    = Pow(x, 3)
  inner = Add(x, Mul(x3, 0.044715))
  t     = Tanh(Mul(inner, 0.7978845608))
  g     = Mul(h, Add(t, 1.0))              # Gelu(x), tanh approximation
  y     = Add(g, h)                        # h is used a second time here
ORT_DISABLE_ALL and ORT_ENABLE_BASIC run it and agree with numpy. At ORT_ENABLE_EXTENDED and
ORT_ENABLE_ALL session creation fails with "Invalid model. Node input 'h' is not a graph input,
initializer, or output of a previous node": the fusion replaced the pattern by FastGelu and
deleted the node producing h, which the final Add still reads. Disabling only FastGeluFusion
fixes it. Control: the same pattern followed by Neg(g) (h used once) is fused into FastGelu
correctly. (With Mul(Mul(x, x), x) instead of Pow(x, 3) the matcher does not fire at all.)
Exits 1 when the bug is present, 0 when not. Needs onnx, onnxruntime and numpy."""
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

L = ort.GraphOptimizationLevel
SQRT_2_OVER_PI = 0.7978845608


def build(shared_half=True):
    scalar = lambda name, v: helper.make_tensor(name, TensorProto.FLOAT, [], [v])  # noqa: E731
    inits = [scalar("half", 0.5), scalar("three", 3.0), scalar("k", 0.044715),
             scalar("s2p", SQRT_2_OVER_PI), scalar("one", 1.0)]
    nodes = [
        helper.make_node("Mul", ["x", "half"], ["h"]),
        helper.make_node("Pow", ["x", "three"], ["x3"]),
        helper.make_node("Mul", ["x3", "k"], ["kx3"]),
        helper.make_node("Add", ["x", "kx3"], ["inner"]),
        helper.make_node("Mul", ["inner", "s2p"], ["z"]),
        helper.make_node("Tanh", ["z"], ["t"]),
        helper.make_node("Add", ["t", "one"], ["t1"]),
        helper.make_node("Mul", ["h", "t1"], ["g"]),
        helper.make_node("Add", ["g", "h"], ["y"]) if shared_half else helper.make_node("Neg", ["g"], ["y"]),
    ]
    graph = helper.make_graph(nodes, "fast_gelu_shared_half",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.checker.check_model(model, full_check=True)
    return model.SerializeToString()


def run(model, level, disabled=()):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.log_severity_level = 4
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"], disabled_optimizers=list(disabled))
    return sess.run(None, {"x": x})[0]


x = np.array([-2, -0.5, 0.25, 1.5], np.float32)
xd = x.astype(np.float64)
half = 0.5 * xd
gelu = half * (1 + np.tanh(SQRT_2_OVER_PI * (xd + 0.044715 * xd ** 3)))
expected = {True: gelu + half, False: -gelu}

print("onnxruntime", ort.__version__)
bug = False
for shared in [True, False]:
    model = build(shared)
    print(f"{'y = Add(g, h): h has two consumers' if shared else 'control, y = Neg(g): h used once'};"
          f" numpy: {np.round(expected[shared], 6).tolist()}")
    for name, level, disabled in [("ORT_DISABLE_ALL", L.ORT_DISABLE_ALL, ()),
                                  ("ORT_ENABLE_BASIC", L.ORT_ENABLE_BASIC, ()),
                                  ("ORT_ENABLE_EXTENDED", L.ORT_ENABLE_EXTENDED, ()),
                                  ("ORT_ENABLE_ALL", L.ORT_ENABLE_ALL, ()),
                                  ("EXTENDED - FastGeluFusion", L.ORT_ENABLE_EXTENDED, ("FastGeluFusion",)),
                                  ("ALL - FastGeluFusion", L.ORT_ENABLE_ALL, ("FastGeluFusion",))]:
        try:
            y = run(model, level, disabled)
            ok = np.allclose(y, expected[shared], rtol=1e-5, atol=1e-5)
            print(f"  {name:26} {np.round(y.astype(np.float64), 6).tolist()} {'ok' if ok else 'MISMATCH'}")
        except Exception as e:
            ok = False
            print(f"  {name:26} FAILS: {str(e).splitlines()[0].split(' : ')[-1]}")
        if shared and not disabled and not ok:
            bug = True

# The control is really fused: the optimized graph holds a com.microsoft FastGelu.
with tempfile.TemporaryDirectory() as tmp:
    so = ort.SessionOptions()
    so.graph_optimization_level = L.ORT_ENABLE_EXTENDED
    so.log_severity_level = 4
    so.optimized_model_filepath = os.path.join(tmp, "opt.onnx")
    ort.InferenceSession(build(False), so, providers=["CPUExecutionProvider"])
    print("control graph at ORT_ENABLE_EXTENDED:", [n.op_type for n in onnx.load(so.optimized_model_filepath).graph.node])

if bug:
    print("BUG present: FastGeluFusion deletes Mul(x, 0.5) although its output has another consumer")
    sys.exit(1)
print("not reproduced: every level runs the model and agrees with numpy")
