#!/usr/bin/env python3
"""tract-onnx 0.23.9: Mod (fmod=0) of a uniform dividend returns rem + divisor after FoldUniformMask. Usage and helpers: ../tract_repro.py."""
import os, sys  # noqa: E401
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tract_repro import T, h, i64, nh, np, pattern, save_and_reference  # noqa: E402,F401

graph = h.make_graph(
    [
        # Where(True, 0, x) is always 0: tract knows it as a "uniform" value (uniform_tdim 0)
        # without folding it to a constant, because x is a graph input.
        h.make_node("Where", ["t", "zero", "x"], ["w"]),
        h.make_node("Mod", ["w", "d"], ["y"], fmod=0),
    ],
    "uniform_mod",
    [h.make_tensor_value_info("x", T.INT32, [])],
    [h.make_tensor_value_info("y", T.INT32, [])],
    [
        nh.from_array(np.array(True), "t"),
        nh.from_array(np.array(0, dtype=np.int32), "zero"),
        nh.from_array(np.array(5, dtype=np.int32), "d"),
    ],
)
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 19)], ir_version=9)
save_and_reference(model, {"x": pattern([], np.int32)}, __file__)
# 0 mod 5 = 0 (typed agrees); decluttered and optimized give 5. tract-onnx expands Mod(fmod=0)
# into rem = a % b; Iff((0 > rem && 0 < b) || (0 < rem && 0 > b), rem + b, rem). tract-core
# encodes `a > b` on uniform values as Ge(a + 1, b), i.e. a >= b - 1 (should be Ge(a, b + 1)),
# so `0 > rem` is "true" for rem = 0 and 1; FoldUniformMask then injects that constant into the
# And, and the Iff picks rem + b. Any dividend with rem in {0, 1} and a positive divisor is
# off by the divisor (1 mod 5 -> 6, 5 mod 5 -> 5, 7 mod 1 -> 1); a bare Greater(w, c) on such
# a value is true when w = c or w = c - 1.
