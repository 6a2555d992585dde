#!/usr/bin/env python3
"""OpenVINO CPU (2026.4.1): a failed synchronous infer() is swallowed and left queued in the
shared streams executor; the next model's infer() runs it again after its request was freed
(use after free, SIGSEGV).

Needs only `openvino`, `onnx` (to build the models inline) and `numpy`.

    python3 repro.py              # reduced: model A = Slice -> Slice (dynamic input), model B = Relu
    python3 repro.py --original   # the fuzzer's two models (9 and 10 nodes), all levels, as dlcfuzz runs them
    python3 repro.py --reshape    # model A = a Reshape whose infer *must* raise (input of 5 elements
                                  # for the pattern [2, 2]): the executor bug without the Slice bug

What happens (mode "reduced"):
1. One ov.Core with INFERENCE_NUM_THREADS=1 (with NUM_STREAMS=1 this puts the CPU plugin's
   AsyncInferRequest::infer on its "optimized single stream" path: the request's infer is
   run through CPUStreamsExecutor::execute on the calling thread).
2. Model A, its input made dynamic: Slice(x, 1000:-1000:-1) -> Slice(-40:39:2). The shape
   inference of the second Slice gives its output the static dimension [0] (its input has
   the interval [0, 1001] and the start is negative; the output is 3 for an input of 6), so
   the CPU plugin throws at infer time ("Can not clone with new dims. Descriptor's shape:
   {0} is incompatible with provided dimensions: {3}").
3. That exception never reaches the caller: CPUStreamsExecutor::Impl::Defer runs its queue
   inside `try { ... } catch (...) {}`, and the failed task is not popped. infer() returns
   normally with an empty output (A's silently wrong result), and the task, which holds A's
   AsyncInferRequest `this`, stays at the front of the thread's queue.
4. A's request and compiled model are freed; B (any model) is compiled with the same
   properties and gets the same cached executor: its infer() runs A's stale task first,
   which reads the freed request -> SIGSEGV (or "pure virtual method called" / abort).

Exit status: killed by SIGSEGV/SIGABRT while the bug is present; 1 when it does not crash but
A's infer still returned a wrong result without raising; 0 when A's infer either computes
the right output or raises, and B runs.
"""
import faulthandler
import sys

import numpy as np
import openvino as ov
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

faulthandler.enable()

# The dlcfuzz OpenVINO backend's properties (src/backend/openvino.rs), set one by one on the
# core before every compile, COMMON first. Only INFERENCE_NUM_THREADS=1 is needed.
COMMON = [("INFERENCE_PRECISION_HINT", "f32"), ("NUM_STREAMS", "1"),
          ("INFERENCE_NUM_THREADS", "1"), ("ENABLE_CPU_PINNING", "NO")]
PERFORMANCE = [("EXECUTION_MODE_HINT", "PERFORMANCE"), ("SNIPPETS_MODE", "ENABLE"), ("LP_TRANSFORMS_MODE", "YES")]
ACCURACY = [("EXECUTION_MODE_HINT", "ACCURACY"), ("SNIPPETS_MODE", "DISABLE"), ("LP_TRANSFORMS_MODE", "NO")]
LEVELS = {"accuracy": ACCURACY, "performance": PERFORMANCE, "dynamic": PERFORMANCE}


def const(name, values, dtype=np.int64):
    return nh.from_array(np.array(values, dtype=dtype), name)


def vi(name, elem, shape):
    return oh.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, inits):
    m = oh.make_model(oh.make_graph(nodes, "dlcfuzz", inputs, outputs, inits),
                      opset_imports=[oh.make_opsetid("", 19)])
    m.ir_version = 9
    return m.SerializeToString()


def reduced_a():
    nodes = [oh.make_node("Slice", ["x", "s0", "e0", "a0", "p0"], ["t0"]),
             oh.make_node("Slice", ["t0", "s1", "e1", "", "p1"], ["y"])]
    inits = [const("s0", [1000]), const("e0", [-1000]), const("a0", [0]), const("p0", [-1]),
             const("s1", [-40]), const("e1", [39]), const("p1", [2])]
    x = ((7 * np.arange(6)) % 11 - 3).astype(np.int32)
    return model(nodes, [vi("x", TP.INT32, [6])], [vi("y", TP.INT32, [3])], inits), [x], [x[::-1][-40:39:2]]


def reshape_a():
    nodes = [oh.make_node("Reshape", ["x", "s"], ["y"])]
    # Compiled with a dynamic input, fed 5 elements: infer() must raise (5 is not 2 x 2).
    return model(nodes, [vi("x", TP.FLOAT, [4])], [vi("y", TP.FLOAT, [2, 2])], [const("s", [2, 2])]), \
        [np.ones(5, np.float32)], None


def reduced_b():
    nodes = [oh.make_node("Relu", ["x"], ["y"])]
    x = np.array([-1, 2, -3], np.float32)
    return model(nodes, [vi("x", TP.FLOAT, [3])], [vi("y", TP.FLOAT, [3])], []), [x], [np.maximum(x, 0)]


def original_a():
    """history/01468.bin's model (9 nodes), with the fuzzer's input values."""
    nodes = [
        oh.make_node("Slice", ["x3", "c0_0", "c0_1", "c0_2", "c0_3"], ["t0_0"]),
        oh.make_node("Unsqueeze", ["t0_0", "c7_0"], ["t7_0"]),
        oh.make_node("Slice", ["t0_0", "c6_0", "c6_1", "", "c6_3"], ["t6_0"]),
        oh.make_node("CumSum", ["t6_0", "c9_0"], ["t9_0"]),
        oh.make_node("BitwiseOr", ["t9_0", "w10"], ["t11_0"]),
        oh.make_node("Relu", ["t6_0"], ["t8_0"]),
        oh.make_node("Greater", ["t0_0", "w1"], ["t2_0"]),
        oh.make_node("Flatten", ["t2_0"], ["t5_0"], axis=-1),
        oh.make_node("Unsqueeze", ["t2_0", "c4_0"], ["t4_0"]),
    ]
    i32 = np.int32
    inits = [
        const("w10", [[-8, -7], [4, -2], [-3, -1], [-7, -5]], i32),
        const("w1", [[[-2, -4], [3, 0], [-4, -3], [-5, -5]], [[3, 2], [-5, 2], [1, 2], [7, -3]],
                     [[-3, 1], [7, -5], [-2, 6], [-5, 0]], [[7, 7], [3, -1], [-4, -4], [0, -2]],
                     [[4, 1], [-8, 3], [3, -7], [8, -7]], [[4, 8], [-2, 4], [8, -7], [-1, -5]]], i32),
        const("c0_0", [1000, -37]), const("c0_1", [-1000, 44]), const("c0_2", [-3, -1]), const("c0_3", [-1, 2]),
        const("c7_0", [-2]), const("c6_0", [-40]), const("c6_1", [39]), const("c6_3", [2]),
        const("c9_0", 0), const("c4_0", [-4]),
    ]
    outputs = [vi("t7_0", TP.INT32, [6, 4, 1, 2]), vi("t11_0", TP.INT32, [3, 4, 2]), vi("t8_0", TP.INT32, [3, 4, 2]),
               vi("t5_0", TP.BOOL, [24, 2]), vi("t4_0", TP.BOOL, [1, 6, 4, 2])]
    x3 = np.array([-6, -1, -8, -1, 8, -3, 1, -6, -4, 2, 2, 6, -5, 5, 0, 6, -8, -5, 1, 0, -7, -2, -1, -8,
                   -6, 5, 6, 0, -3, 5, -7, 6, 5, -3, 4, -4, -3, 3, -3, 0, -5, -5, 6, 4, -5, -5, -1, -5,
                   7, -7, 5, 5, -7, 3, -4, 6, -6, -5, 7, 0, 7, 1, 3, -7, -5, 8, -3, 3, -1, -5, -6, 8],
                  dtype=i32).reshape(6, 4, 3)
    t0 = x3[::-1, :, 0::2]
    want = [t0[:, :, None, :], None, np.maximum(t0[-40:39:2], 0), None, None]
    return model(nodes, [vi("x3", TP.INT32, [6, 4, 3])], outputs, inits), [x3], want


def original_b():
    """input.bin's model (10 nodes); its input values do not matter (it never computes)."""
    nodes = [
        oh.make_node("Clip", ["w12", "c9_0", "c9_1"], ["t9_0"]),
        oh.make_node("BitwiseOr", ["t9_0", "x10"], ["t7_0"]),
        oh.make_node("Clip", ["t7_0", "c5_0"], ["t5_0"]),
        oh.make_node("ArgMin", ["t5_0"], ["t6_0"], axis=-1, keepdims=1, select_last_index=0),
        oh.make_node("Unsqueeze", ["w8", "c4_0"], ["t4_0"]),
        oh.make_node("Gather", ["t4_0", "c11_0"], ["t11_0"], axis=-3),
        oh.make_node("LessOrEqual", ["t4_0", "t5_0"], ["t3_0"]),
        oh.make_node("Transpose", ["t3_0"], ["t2_0"], perm=[2, 0, 1, 3]),
        oh.make_node("Reshape", ["t2_0", "c0_0"], ["t0_0"]),
        oh.make_node("Reshape", ["t0_0", "c1_0"], ["t1_0"]),
    ]
    i32 = np.int32
    inits = [
        const("w12", np.array([-2, -3, -8, 7, -3, -1, -1, 3, 2, -4, 6, -7, -8, -5]).reshape(2, 7, 1, 1), i32),
        const("c9_0", -3, i32), const("c9_1", -2, i32),
        const("w8", np.array([-1, 7, 1, 4, 4, 6, 3, -2, -8, 8, -1, 0, 2, -4]).reshape(2, 7, 1), i32),
        const("c5_0", 0, i32), const("c4_0", [2]), const("c11_0", [-3, 5, 6]), const("c0_0", [7, -1]), const("c1_0", [14]),
    ]
    outputs = [vi("t6_0", TP.INT64, [2, 7, 1, 1]), vi("t11_0", TP.INT32, [2, 3, 1, 1]), vi("t1_0", TP.BOOL, [14])]
    x10 = ((7 * np.arange(7)) % 11 - 3).astype(i32).reshape(7, 1, 1)
    return model(nodes, [vi("x10", TP.INT32, [7, 1, 1])], outputs, inits), [x10], None


def run(core, buf, feeds, level):
    """One run as the dlcfuzz backend does it: properties on the core, read from memory,
    (every input dimension dynamic), compile, infer, read the outputs; all freed on return."""
    for key, value in COMMON + LEVELS[level]:
        core.set_property("CPU", {key: value})
    read = core.read_model(buf, b"")
    if level == "dynamic":
        read.reshape({i: ov.PartialShape([-1] * len(p.get_partial_shape())) for i, p in enumerate(read.inputs)})
    compiled = core.compile_model(read, "CPU")
    request = compiled.create_infer_request()
    for i, x in enumerate(feeds):
        request.set_input_tensor(i, ov.Tensor(x))
    request.infer()
    return [np.array(request.get_output_tensor(i).data) for i in range(len(compiled.outputs))]


def wrong(outs, want):
    for i, (o, w) in enumerate(zip(outs, want or [])):
        if w is not None and (o.shape != w.shape or not np.array_equal(o, w)):
            return f"output {i}: shape {o.shape} {o.ravel()[:8]}, expected shape {w.shape} {w.ravel()[:8]}"
    return None


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "--reduced"
    print("openvino", ov.__version__, "mode", mode, flush=True)
    if mode == "--original":
        a, b = original_a(), original_b()
        a_levels, b_levels = ["accuracy", "performance", "dynamic"], ["accuracy", "performance", "dynamic"]
    else:
        a, b = (reshape_a() if mode == "--reshape" else reduced_a()), reduced_b()
        a_levels, b_levels = ["dynamic"], ["accuracy"]
    core = ov.Core()
    silent = None
    for level in a_levels:
        try:
            outs = run(core, a[0], a[1], level)
        except RuntimeError as e:
            print(f"A at {level}: raised (as it should when it cannot compute):", str(e).strip().splitlines()[-1][:160])
            continue
        bad = wrong(outs, a[2]) if a[2] is not None else "infer() returned although it must raise"
        print(f"A at {level}:", bad or "right", flush=True)
        silent = silent or (bad and f"A at {level}: {bad}")
    for level in b_levels:
        print(f"B at {level}: running (segfaults here while the bug is present)", flush=True)
        outs = run(core, b[0], b[1], level)
        print(f"B at {level}:", wrong(outs, b[2]) or "right", flush=True)
    if silent:
        print("no crash, but A's infer failed silently:", silent)
        return 1
    print("not reproduced")
    return 0


if __name__ == "__main__":
    sys.exit(main())
