#!/usr/bin/env python3
"""ONNX Runtime CPU Resize (opset 19), int32, mode=linear|cubic: values within 64 of
INT32_MAX (v >= 2**31-64, i.e. where float32(v) rounds up to 2**31).

 (a) antialias=1 -> RUNTIME_EXCEPTION "narrowing_error"
     (narrow<int32_t>(std::round(float_acc)) in upsample_antialias.h)
 (b) antialias=0, linear -> every output is INT32_MIN for a constant INT32_MAX input
     (static_cast<int32_t>(float) of 2**31: C++ UB, x86 cvttss2si gives 0x80000000)

The input is a constant tensor, so every ONNX-valid interpolation (weights sum to 1) must
give back the constant; onnx.reference gives INT32_MAX.  Exit 1 when (a) or (b) shows.
Usage: python3 repro.py   (needs onnx, onnxruntime, numpy)
"""
import sys
import warnings

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

warnings.filterwarnings("ignore")
ort.set_default_logger_severity(4)
I32_MAX, I32_MIN = 2**31 - 1, -(2**31)
ETYPE = {np.int32: TensorProto.INT32, np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8,
         np.int64: TensorProto.INT64}


def make_model(dtype, in_shape, out_shape, mode, antialias, ctm="half_pixel"):
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode=mode,
                            antialias=antialias, coordinate_transformation_mode=ctm)
    graph = helper.make_graph(
        [node], "resize",
        [helper.make_tensor_value_info("x", ETYPE[dtype], in_shape)],
        [helper.make_tensor_value_info("y", ETYPE[dtype], out_shape)],
        initializer=[helper.make_tensor("sizes", TensorProto.INT64, [len(out_shape)], out_shape)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    onnx.checker.check_model(m, full_check=True)
    return m


def run_ort(m, x):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.intra_op_num_threads = 1
    try:
        s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        return s.run(None, {"x": x})[0]
    except Exception as e:  # noqa: BLE001
        msg = str(e)
        if "Status Message:" in msg:
            msg = msg.split("Status Message:")[-1].strip()
        if "Tensor type mismatch" in msg:
            msg = "Tensor type mismatch"
        if "NOT_IMPLEMENTED" in str(e):
            msg = "NOT_IMPLEMENTED (no kernel)"
        return "EXC " + msg[:40]


def run_ref(m, x):
    from onnx.reference import ReferenceEvaluator
    try:
        return ReferenceEvaluator(m).run(None, {"x": x})[0]
    except Exception as e:  # noqa: BLE001
        return "EXC " + str(e)[:40]


def show(y):
    if isinstance(y, str):
        return y
    u = np.unique(y)
    return f"const {u[0]}" if u.size == 1 else f"{u.size} distinct, min {u.min()} max {u.max()}"


# (label, dtype, in_len, out_len, mode, antialias, value, is_main_bug_case)
CASES = [
    ("a: int32 linear aa=1 down 8->5", np.int32, 8, 5, "linear", 1, I32_MAX, True),
    ("b: int32 linear aa=0 down 8->5", np.int32, 8, 5, "linear", 0, I32_MAX, True),
    ("   int32 linear aa=0 up   2->4", np.int32, 2, 4, "linear", 0, I32_MAX, True),
    ("   int32 linear aa=1 up   2->4", np.int32, 2, 4, "linear", 1, I32_MAX, True),
    ("   int32 cubic  aa=1 down 8->5", np.int32, 8, 5, "cubic", 1, I32_MAX, True),
    ("   int32 cubic  aa=1 down 8->5 MIN", np.int32, 8, 5, "cubic", 1, I32_MIN, True),
    ("   int32 linear aa=1 8->5 v=2^31-64", np.int32, 8, 5, "linear", 1, 2**31 - 64, True),
    ("   int32 linear aa=0 8->5 v=2^31-64", np.int32, 8, 5, "linear", 0, 2**31 - 64, True),
    ("   int32 linear aa=1 8->5 v=2^31-65 (ok)", np.int32, 8, 5, "linear", 1, 2**31 - 65, True),
    ("   int32 linear aa=0 8->5 v=2^31-65 (ok)", np.int32, 8, 5, "linear", 0, 2**31 - 65, True),
    ("   int32 linear aa=1 8->5 MIN (ok)", np.int32, 8, 5, "linear", 1, I32_MIN, True),
    ("   int32 linear aa=0 8->5 2^24+1 (prec.)", np.int32, 8, 5, "linear", 0, 2**24 + 1, False),
    ("   uint8 linear aa=1 8->5 255", np.uint8, 8, 5, "linear", 1, 255, False),
    ("   int8  linear aa=1 8->5 127", np.int8, 8, 5, "linear", 1, 127, False),
    ("   side: int8 linear aa=1 8->5 -100", np.int8, 8, 5, "linear", 1, -100, False),
    ("   side: int32 cubic aa=0 8->5 5", np.int32, 8, 5, "cubic", 0, 5, False),
    ("   int64 linear aa=1 8->5 2^62", np.int64, 8, 5, "linear", 1, 2**62, False),
]


def main():
    print(f"onnxruntime {ort.__version__}, onnx {onnx.__version__}; constant [1,N] input, "
          "sizes input, ORT_DISABLE_ALL")
    print(f"{'case':42} | {'ORT':38} | onnx.reference")
    bug = False
    for label, dt, n_in, n_out, mode, aa, v, main_case in CASES:
        m = make_model(dt, [1, n_in], [1, n_out], mode, aa)
        x = np.full([1, n_in], v, dtype=dt)
        got, ref = run_ort(m, x), run_ref(m, x)
        print(f"{label:42} | {show(got):38} | {show(ref)}")
        if main_case and dt is np.int32:
            if isinstance(got, str) and "narrowing_error" in got:
                bug = True
            elif not isinstance(got, str) and abs(int(v)) > 2**30 and \
                    (np.sign(got.astype(np.int64)) != np.sign(v)).any():
                bug = True  # constant of one sign came back with the other sign (INT32_MIN)
    print("BUG SHOWS (exit 1)" if bug else "bug not shown (exit 0)")
    return 1 if bug else 0


if __name__ == "__main__":
    sys.exit(main())
