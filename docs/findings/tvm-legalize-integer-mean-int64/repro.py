#!/usr/bin/env python3
"""TVM 0.27.0.post1 (Relax, llvm): LegalizeOps turns an integer R.mean into int64.

ONNX (opset 18, passes onnx.checker full check):
  x: int32[2, 3]; m = ReduceMean(x, axes=[0], keepdims=0)   # int32[3]
  y = Add(m, z)                                              # z: int32[3]
ReduceMean's output has its input's type T (int32). from_onnx imports it as
R.mean(x) : R.Tensor((3,), "int32"), but LegalizeOps lowers that mean to a TIR function
whose output buffer is int64 (the sum is cast to int64 and divided by an int64 count) and
re-types the call as int64. Alone, the compiled function returns int64 instead of int32;
followed by Add, tvm.compile fails: "Binary operators must have the same datatype for both
operands. However, R.add(lv, z) uses datatype T.int64 on the LHS ... and datatype T.int32 on
the RHS". uint32 behaves the same; float32 is right.
Exits 1 when the bug is present, 0 when not. Needs tvm (apache-tvm), onnx and numpy."""
import sys

import numpy as np
import onnx
import tvm
from onnx import TensorProto, helper
from tvm import relax
from tvm.relax.frontend.onnx import from_onnx


def model(with_add):
    axes = helper.make_tensor("axes", TensorProto.INT64, [1], [0])
    nodes = [helper.make_node("ReduceMean", ["x", "axes"], ["m"], keepdims=0)]
    inputs = [helper.make_tensor_value_info("x", TensorProto.INT32, [2, 3])]
    out = "m"
    if with_add:
        nodes.append(helper.make_node("Add", ["m", "z"], ["y"]))
        inputs.append(helper.make_tensor_value_info("z", TensorProto.INT32, [3]))
        out = "y"
    graph = helper.make_graph(
        nodes, "g", inputs, [helper.make_tensor_value_info(out, TensorProto.INT32, [3])], [axes]
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(m, full_check=True)
    return m


def run(with_add):
    shapes = {"x": [2, 3], "z": [3]} if with_add else {"x": [2, 3]}
    mod = from_onnx(model(with_add), shape_dict=shapes)
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    x = np.array([[1, 2, 3], [4, 6, 9]], dtype=np.int32)
    args = [tvm.runtime.tensor(x)]
    if with_add:
        args.append(tvm.runtime.tensor(np.ones(3, dtype=np.int32)))
    return vm["main"](*args).numpy()


def main():
    print("release: tvm", tvm.__version__)
    bug = False
    alone = run(False)
    print("ReduceMean alone:", alone, alone.dtype)
    if alone.dtype != np.int32:
        print("  wrong output dtype (ONNX: the input's type, int32)")
        bug = True
    try:
        print("ReduceMean -> Add:", run(True))
    except Exception as e:  # the build's type error is the bug
        print("ReduceMean -> Add fails to build:", str(e).strip().splitlines()[0][:300])
        bug = True
    print("reproduced" if bug else "not reproduced")
    return 1 if bug else 0


if __name__ == "__main__":
    sys.exit(main())
