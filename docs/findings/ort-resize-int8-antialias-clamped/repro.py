#!/usr/bin/env python3
"""ORT CPU Resize (opset 19) with antialias=1 on int8 input clamps results to [0,255]
(shared uint8 Pillow clip table), so every negative output becomes 0.
Run: python3 repro.py (needs onnx, onnxruntime, numpy); exits 1 when the bug shows."""
import sys
import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper as h, TensorProto as T
from onnx.reference import ReferenceEvaluator

NP2T = {np.int8: T.INT8, np.uint8: T.UINT8, np.int32: T.INT32, np.float32: T.FLOAT}


def build(dtype, in_shape, out_shape, mode, aa):
    tt = NP2T[dtype]
    node = h.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode=mode, antialias=aa)
    g = h.make_graph(
        [node], "g",
        [h.make_tensor_value_info("x", tt, in_shape)],
        [h.make_tensor_value_info("y", tt, out_shape)],
        initializer=[h.make_tensor("sizes", T.INT64, [len(out_shape)], out_shape)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
    m.ir_version = 9
    onnx.checker.check_model(m, full_check=True)
    return m


def run_ort(m, x, level):
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    so.log_severity_level = 4
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s.run(None, {"x": x})[0]


VALS = [-100, -50, -3, 20, 40, -128, 127, -1, 90, -70, 5, 127, 126, -128, 0, 60]


def case(dtype, in_shape, out_shape, mode, aa):
    n = int(np.prod(in_shape))
    base = np.array((VALS * (n // len(VALS) + 1))[:n], dtype=np.int64)
    if dtype == np.uint8:
        base = base + 128  # same pattern shifted into [0,255]
    x = base.astype(dtype).reshape(in_shape)
    m = build(dtype, in_shape, out_shape, mode, aa)
    ref = ReferenceEvaluator(m).run(None, {"x": x})[0].astype(np.int64)
    out = {}
    for name, lvl in [("disable", ort.GraphOptimizationLevel.ORT_DISABLE_ALL),
                      ("enable", ort.GraphOptimizationLevel.ORT_ENABLE_ALL)]:
        try:
            out[name] = run_ort(m, x, lvl).astype(np.int64)
        except Exception as e:  # noqa
            out[name] = "ERR " + str(e).splitlines()[0][:60]
    return x, ref, out


def summarize(ref, y):
    if isinstance(y, str):
        return y, False
    d = np.abs(y - ref)
    bad = bool(d.max() > 1)
    neg_ref = ref < 0
    info = "maxdiff=%d" % d.max()
    if neg_ref.any():
        info += " neg_ref=%d ->0:%d" % (neg_ref.sum(), int((y[neg_ref] == 0).sum()))
    info += " min=%d max=%d" % (y.min(), y.max())
    return info, bad


def main():
    cases = []
    for mode in ["linear", "cubic"]:
        for aa in [1, 0]:
            for dtype in [np.int8, np.uint8, np.int32]:
                cases += [
                    (dtype, [1, 8], [1, 5], mode, aa),            # 2-D down
                    (dtype, [1, 2], [1, 4], mode, aa),            # 2-D up
                    (dtype, [1, 1, 4, 4], [1, 1, 2, 3], mode, aa),  # NCHW down
                    (dtype, [1, 1, 4, 4], [1, 1, 6, 7], mode, aa),  # NCHW up
                    (dtype, [1, 4, 4, 1], [1, 2, 3, 1], mode, aa),  # NHWC down
                    (dtype, [1, 4, 4, 1], [1, 6, 7, 1], mode, aa),  # NHWC up
                    (dtype, [1, 1, 2, 2, 4], [1, 1, 2, 2, 2], mode, aa) if mode == "linear" else None,  # 5-D trilinear
                ]
    cases = [c for c in cases if c is not None]
    bug = False
    print("%-6s %-6s aa %-16s %-16s | %-45s | %s" % ("dtype", "mode", "in", "out", "ORT_DISABLE_ALL vs reference", "ENABLE_ALL"))
    for dtype, i, o, mode, aa in cases:
        x, ref, out = case(dtype, i, o, mode, aa)
        s1, b1 = summarize(ref, out["disable"])
        s2, b2 = summarize(ref, out["enable"])
        flag = "BUG" if (b1 or b2) else ("ERR" if isinstance(out["disable"], str) else "ok")
        if dtype == np.int8 and (b1 or b2):
            bug = True
        print("%-6s %-6s %d  %-16s %-16s | %-45s | %s  %s" % (
            dtype.__name__, mode, aa, str(i), str(o), s1, "same" if s1 == s2 else s2, flag))

    # does 127 survive? (all-127 input, and all -128/-1)
    print("\nconstant-input checks (int8, linear, aa=1, [1,8]->[1,5]):")
    for v in [127, 100, 1, 0, -1, -128]:
        x = np.full([1, 8], v, np.int8)
        m = build(np.int8, [1, 8], [1, 5], "linear", 1)
        y = run_ort(m, x, ort.GraphOptimizationLevel.ORT_DISABLE_ALL)
        print("  x=%4d -> ort %s  (ref %s)" % (v, y.ravel().tolist(), ReferenceEvaluator(m).run(None, {"x": x})[0].ravel().tolist()))

    # cubic overshoot above 127: clip table gives 128..255, static_cast<int8_t> wraps negative
    print("\ncubic overshoot (int8, aa=1):")
    for xi, o in [([0, 0, 0, 120, 120, 120, 0, 0], 5), ([0, 120, 120, 120], 9)]:
        x = np.array([xi], np.int8)
        m = build(np.int8, [1, len(xi)], [1, o], "cubic", 1)
        mf = build(np.float32, [1, len(xi)], [1, o], "cubic", 1)
        print("  x=%s -> ort %s ref %s float-ORT %s" % (xi,
              run_ort(m, x, ort.GraphOptimizationLevel.ORT_DISABLE_ALL).ravel().tolist(),
              ReferenceEvaluator(m).run(None, {"x": x})[0].ravel().tolist(),
              np.round(run_ort(mf, x.astype(np.float32), ort.GraphOptimizationLevel.ORT_DISABLE_ALL).ravel(), 1).tolist()))

    # headline example
    x = np.array([[-100, -50, -3, 20, 40, -128, 127, -1]], np.int8)
    m = build(np.int8, [1, 8], [1, 5], "linear", 1)
    print("\nheadline: x=%s\n  ORT=%s\n  ref=%s" % (x.ravel().tolist(),
          run_ort(m, x, ort.GraphOptimizationLevel.ORT_DISABLE_ALL).ravel().tolist(),
          ReferenceEvaluator(m).run(None, {"x": x})[0].ravel().tolist()))
    print("\nBUG REPRODUCED" if bug else "\nno bug")
    sys.exit(1 if bug else 0)


if __name__ == "__main__":
    main()
