#!/usr/bin/env python3
"""OpenVINO CPU (2026.4.1): an int32 ReduceL1 followed by Neg computes only the first
"outer" slice of its output; the rest comes back 0 (or left-over memory).

    x = int32 [2,1,1] = [[[1]], [[2]]]
    y = Neg(ReduceL1(x, axes=[1], keepdims=0))      # ONNX: [[-1], [-2]]
    OpenVINO CPU:                                     [[-1], [ 0]]

The plugin fuses the Neg into its Reduce node as a post-op (the runtime model shows one
`Reduce` layer whose originalLayersNames are "r,y"); the same model without the Neg, in
float32, or followed by Abs is right, and so is OpenVINO's own reference
(`ov.Model.evaluate`). It is row 50 of docs/findings/README.md
(openvino-int32-reduce-fused-eltwise-first-element-only) with ReduceL1 as the reduction.

Also runs the campaign's reduced model (x int32[7,7,3], |x| <= 8, so every sum is <= 56:
no overflow, exact in float32 too). Needs onnx, numpy and openvino (onnxruntime optional, as
a second reference). Exit status 1 while the bug shows, 0 when it is gone."""
import base64, sys
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T
import openvino as ov

# The backend's CPU properties (src/backend/openvino.rs); the bug shows with the defaults too.
COMMON = {"INFERENCE_PRECISION_HINT": "f32", "NUM_STREAMS": "1", "INFERENCE_NUM_THREADS": "1", "ENABLE_CPU_PINNING": "NO"}
LEVELS = {
    "default": {},
    "accuracy": {**COMMON, "EXECUTION_MODE_HINT": "ACCURACY", "SNIPPETS_MODE": "DISABLE", "LP_TRANSFORMS_MODE": "NO"},
    "performance": {**COMMON, "EXECUTION_MODE_HINT": "PERFORMANCE", "SNIPPETS_MODE": "ENABLE", "LP_TRANSFORMS_MODE": "YES"},
}


def model(shape, axes, post="Neg", dtype=T.INT32, reduce="ReduceL1"):
    nodes = [h.make_node(reduce, ["x", "axes"], ["r"], keepdims=0)]
    if post:
        nodes.append(h.make_node(post, ["r"], ["y"]))
    else:
        nodes[0].output[0] = "y"
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", dtype, list(shape))],
                     [h.make_tensor_value_info("y", dtype, None)],
                     [h.make_tensor("axes", T.INT64, [len(axes)], list(axes))])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
    m.ir_version = 9
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m, full_check=True)
    return m


def expected(x, axes, post):
    r = np.abs(x.astype(np.int64)).sum(axis=tuple(axes))  # ReduceL1-18: sum of |x|, keepdims=0
    return -r if post == "Neg" else r


def run_ov(m, x, props, dynamic=False):
    core = ov.Core()
    read = core.read_model(m.SerializeToString())
    if dynamic:
        read.reshape({0: ov.PartialShape([-1] * x.ndim)})
    compiled = core.compile_model(read, "CPU", props)
    req = compiled.create_infer_request()
    req.start_async({0: x})  # start_async + wait, as the backend does
    req.wait()
    return np.array(req.get_output_tensor(0).data), compiled


def run_ort(m, x):
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return s.run(None, {"x": x})[0]


CAMPAIGN_X = np.frombuffer(base64.b64decode(
    '/v///wUAAAAIAAAA+v///wYAAAD7////AwAAAAQAAAD+////BwAAAAgAAAD4/////f////3///8IAAAABwAAAPz///8EAAAA/////wEAAAD7/////v///wEAAAAGAAAABgAAAAQAAAABAAAACAAAAPj////8////AQAAAAIAAAAFAAAABAAAAAEAAAD4////BgAAAPz///8FAAAA/P///wMAAAD9/////v///wYAAAAGAAAA+f///wMAAAD6////AgAAAAEAAAACAAAABgAAAAMAAAD9////BgAAAP3///8CAAAA/v////3////7/////P///wcAAAD8/////f////3/////////AAAAAAgAAAD4////AwAAAP/////8////+f////7//////////P///wIAAAAHAAAA+////wEAAAD+////BgAAAAUAAAD5////AAAAAP////8GAAAAAQAAAPz///8HAAAA+f////3///8DAAAABQAAAPn///8BAAAABQAAAAMAAAD4////CAAAAAQAAAD6////BgAAAPr///8GAAAAAwAAAAcAAAAHAAAABgAAAPz///8CAAAAAAAAAAAAAAD+////BwAAAAEAAAAIAAAA+////wIAAAD7////AgAAAAcAAAAEAAAA+v///wcAAAADAAAABgAAAAAAAAD9////BQAAAP//////////AgAAAAQAAAABAAAABQAAAAMAAAD9////CAAAAAYAAAD5////+P///wcAAAD6////+f////n///8DAAAA'),
    dtype=np.int32).reshape(7, 7, 3)


def main():
    print("release: openvino", ov.__version__)
    bug = False
    cases = [
        # (label, shape, axes, post, dtype, x, is_control)
        ("minimal: Neg(ReduceL1(int32[2,1,1], axes=[1]))", (2, 1, 1), [1], "Neg", T.INT32,
         np.array([1, 2], np.int32).reshape(2, 1, 1), False),
        ("campaign: Neg(ReduceL1(int32[7,7,3], axes=[1]))", (7, 7, 3), [1], "Neg", T.INT32, CAMPAIGN_X, False),
        ("control, no Neg: ReduceL1(int32[2,1,1])", (2, 1, 1), [1], None, T.INT32,
         np.array([1, 2], np.int32).reshape(2, 1, 1), True),
        ("control, float32: Neg(ReduceL1(f32[2,1,1]))", (2, 1, 1), [1], "Neg", T.FLOAT,
         np.array([1, 2], np.float32).reshape(2, 1, 1), True),
        ("control, Abs after: Abs(ReduceL1(int32[2,1,1]))", (2, 1, 1), [1], "Abs", T.INT32,
         np.array([1, 2], np.int32).reshape(2, 1, 1), True),
    ]
    for label, shape, axes, post, dt, x, control in cases:
        m = model(shape, axes, post, dt)
        want = expected(x, axes, post)
        ref = run_ort(m, x)
        if ref is not None:
            assert np.array_equal(ref, want), ("onnxruntime disagrees with numpy", ref, want)
        print(f"\n{label}\n  numpy / onnxruntime: {want.ravel().tolist()}")
        for level, props in LEVELS.items():
            got, compiled = run_ov(m, x, props)
            ok = np.array_equal(got.astype(np.int64), want)
            print(f"  openvino {level:11s}: {got.ravel().tolist()}  {'right' if ok else 'WRONG'}")
            bug |= (not ok) and not control
        got, _ = run_ov(m, x, LEVELS["performance"], dynamic=True)
        ok = np.array_equal(got.astype(np.int64), want)
        print(f"  openvino dynamic    : {got.ravel().tolist()}  {'right' if ok else 'WRONG'}")
        bug |= (not ok) and not control

    # Localization: OpenVINO's own reference on the converted model, and the runtime graph.
    m = model((2, 1, 1), [1])
    x = np.array([1, 2], np.int32).reshape(2, 1, 1)
    read = ov.Core().read_model(m.SerializeToString())
    print("\nconverted model:", [o.get_type_name() for o in read.get_ordered_ops()])
    out = [ov.Tensor(np.zeros((2, 1), np.int32))]
    read.evaluate(out, [ov.Tensor(x)])
    print("ov.Model.evaluate:", out[0].data.ravel().tolist())
    _, compiled = run_ov(m, x, {})
    for op in compiled.get_runtime_model().get_ordered_ops():
        ri = op.get_rt_info()
        print("runtime layer", op.get_friendly_name(), ri["layerType"].astype(str),
              "originalLayersNames=" + ri["originalLayersNames"].astype(str),
              "impl=" + ri["primitiveType"].astype(str))
    print("\nBUG PRESENT" if bug else "\nnot reproduced")
    return 1 if bug else 0


if __name__ == "__main__":
    sys.exit(main())
