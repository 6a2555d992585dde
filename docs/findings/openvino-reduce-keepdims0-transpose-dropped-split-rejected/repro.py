#!/usr/bin/env python3
"""OpenVINO (2026.4.1): a Transpose after a keepdims=0 reduction is dropped, so a Split of
its result fails to compile.

    x = float16 [2,8,6,1]
    r = ReduceMean(x, axes=[-4,-3], keepdims=0)   # [6,1]
    t = Transpose(r)                              # [1,6]  (default perm reverses the dims)
    a, b = Split(t, split=[2,4], axis=-1)         # [1,2], [1,4]

compile_model fails: "Total length of splits: 6 must match the length of the chosen axis: 1"
(the VariadicSplit now reads the ReduceMean's [6,1] directly). Without the Split the model
compiles and returns shape [6,1] where ONNX says [1,6] (openvinotoolkit/openvino#37959's form).

Localization: the converted model (core.read_model) still has the Transpose; the MOC
transformations with constant folding (apply_moc_transformations(cf=True)) remove it.
TransposeToReshape turns the Transpose of [6,1] (only a unit dim moves) into a Reshape to
[1,6], and
EliminateReduceReshape then drops a Reshape after a keep_dims=false Reduce because it
compares the Reshape's target dims with the reduction axes, which do not index the
keepdims=0 output (pattern [1,6], axes {0,1}: dim 0 counts as "reduced, 1", only dim 1
is left open, so the Reshape is taken for a no-op). An explicit ONNX Reshape([1,6])
in place of the Transpose fails the same way. That is docs/findings/README.md row 45,
fixed upstream by PR #38096 (merged after 2026.4; fixes #37962, also #37959).

Needs onnx, numpy and openvino (onnxruntime optional). Exit status 1 while the bug shows."""
import sys
import numpy as np
import onnx
from onnx import helper as h, TensorProto as T
import openvino as ov

COMMON = {"INFERENCE_PRECISION_HINT": "f32", "NUM_STREAMS": "1", "INFERENCE_NUM_THREADS": "1", "ENABLE_CPU_PINNING": "NO"}
LEVELS = {
    "default": {},
    "accuracy": {**COMMON, "EXECUTION_MODE_HINT": "ACCURACY", "SNIPPETS_MODE": "DISABLE", "LP_TRANSFORMS_MODE": "NO"},
    "performance": {**COMMON, "EXECUTION_MODE_HINT": "PERFORMANCE", "SNIPPETS_MODE": "ENABLE", "LP_TRANSFORMS_MODE": "YES"},
}
NP = {T.FLOAT16: np.float16, T.FLOAT: np.float32}


def model(shape, axes, mid="Transpose", split=None, dtype=T.FLOAT16):
    nodes = [h.make_node("ReduceMean", ["x", "axes"], ["r"], keepdims=0)]
    inits = [h.make_tensor("axes", T.INT64, [len(axes)], list(axes))]
    if mid == "Transpose":
        nodes.append(h.make_node("Transpose", ["r"], ["t"]))
    else:  # an explicit Reshape to the given shape
        nodes.append(h.make_node("Reshape", ["r", "shape"], ["t"]))
        inits.append(h.make_tensor("shape", T.INT64, [len(mid)], list(mid)))
    outs = ["t"]
    if split:
        nodes.append(h.make_node("Split", ["t", "split"], ["a", "b"], axis=-1))
        inits.append(h.make_tensor("split", T.INT64, [len(split)], list(split)))
        outs = ["a", "b"]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", dtype, list(shape))],
                     [h.make_tensor_value_info(o, dtype, None) for o in outs], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
    m.ir_version = 9
    m = onnx.shape_inference.infer_shapes(m, strict_mode=True)
    onnx.checker.check_model(m, full_check=True)
    return m


def expected(x, axes, split):
    r = x.astype(np.float64).mean(axis=tuple(axes)).T  # ReduceMean keepdims=0, Transpose
    if not split:
        return [r]
    return np.split(r, np.cumsum(split)[:-1], axis=-1)


def run_ov(m, x, props):
    core = ov.Core()
    compiled = core.compile_model(core.read_model(m.SerializeToString()), "CPU", props)
    req = compiled.create_infer_request()
    req.start_async({0: x})
    req.wait()
    return [np.array(req.get_output_tensor(i).data) for i in range(len(compiled.outputs))]


def check(label, m, x, axes, split, dtype):
    """True when OpenVINO is wrong (fails to compile, or wrong shape or values)."""
    want = expected(x, axes, split)
    tol = 2e-2 if dtype == T.FLOAT16 else 1e-5
    try:
        import onnxruntime as ort
        ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
        assert all(r.shape == w.shape and np.allclose(r, w, atol=tol) for r, w in zip(ref, want)), "onnxruntime disagrees"
    except ImportError:
        pass
    print(f"\n{label}\n  numpy / onnxruntime: shapes {[w.shape for w in want]}")
    wrong = False
    for level, props in LEVELS.items():
        try:
            got = run_ov(m, x, props)
        except RuntimeError as e:
            msg = [l for l in str(e).splitlines() if "Total length" in l] or str(e).splitlines()[-1:]
            print(f"  openvino {level:11s}: COMPILE FAILS: {msg[0]}")
            wrong = True
            continue
        ok = all(g.shape == w.shape and np.allclose(g.astype(np.float64), w, atol=tol) for g, w in zip(got, want))
        print(f"  openvino {level:11s}: shapes {[g.shape for g in got]}  {'right' if ok else 'WRONG'}")
        wrong |= not ok
    return wrong


def main():
    print("release: openvino", ov.__version__)
    rng = np.random.default_rng(0)
    bug = False
    x = rng.standard_normal((2, 8, 6, 1)).astype(np.float16)
    bug |= check("campaign: Split(Transpose(ReduceMean(f16[2,8,6,1], axes=[-4,-3], keepdims=0)), [2,4])",
                 model((2, 8, 6, 1), [-4, -3], split=[2, 4]), x, [-4, -3], [2, 4], T.FLOAT16)
    x = np.array([1, 2], np.float32).reshape(1, 2, 1)
    bug |= check("minimal: Split(Transpose(ReduceMean(f32[1,2,1], axes=[0], keepdims=0)), [1,1])",
                 model((1, 2, 1), [0], split=[1, 1], dtype=T.FLOAT), x, [0], [1, 1], T.FLOAT)
    bug |= check("no Split: Transpose(ReduceMean(f32[1,2,1], axes=[0], keepdims=0)) (#37959's form)",
                 model((1, 2, 1), [0], dtype=T.FLOAT), x, [0], None, T.FLOAT)
    # Control (not counted): with the reduced axis not in front, EliminateReduceReshape's
    # check leaves two open dims and keeps the Reshape.
    check("control: Split(Transpose(ReduceMean(f32[6,2,1], axes=[1])), [2,4])",
          model((6, 2, 1), [1], split=[2, 4], dtype=T.FLOAT), rng.standard_normal((6, 2, 1)).astype(np.float32),
          [1], [2, 4], T.FLOAT)

    # Localization.
    from openvino._offline_transformations import apply_moc_transformations
    m = model((1, 2, 1), [0], dtype=T.FLOAT)
    core = ov.Core()
    def ops(mod):
        return [(o.get_type_name(), str(o.get_output_partial_shape(0))) for o in mod.get_ordered_ops()
                if o.get_type_name() not in ("Constant", "Parameter")]
    read = core.read_model(m.SerializeToString())
    print("\nread_model (converted):           ", ops(read))
    apply_moc_transformations(read, cf=False)
    print("after MOC transformations, cf=False:", ops(read))
    read = core.read_model(m.SerializeToString())
    apply_moc_transformations(read, cf=True)
    print("after MOC transformations, cf=True: ", ops(read))
    compiled = core.compile_model(core.read_model(m.SerializeToString()), "CPU")
    print("compiled runtime model:            ",
          [(o.get_rt_info()["layerType"].astype(str), str(o.get_output_partial_shape(0)))
           for o in compiled.get_runtime_model().get_ordered_ops() if o.get_output_size()])
    check("same with an explicit Reshape([1,2]) for the Transpose",
                        model((1, 2, 1), [0], mid=[1, 2], split=[1, 1], dtype=T.FLOAT),
                        np.array([1, 2], np.float32).reshape(1, 2, 1), [0], [1, 1], T.FLOAT)
    print("\nBUG PRESENT" if bug else "\nnot reproduced")
    return 1 if bug else 0


if __name__ == "__main__":
    sys.exit(main())
