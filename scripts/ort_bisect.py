#!/usr/bin/env python3
"""Culprit-pass bisection for a dlcfuzz ONNX Runtime finding (written beside repro.py).

Finds the lowest optimization level at which the finding reproduces, then delta-debugs
(ddmin) the set of graph transformers and rewrite rules left enabled, through
InferenceSession's `disabled_optimizers`, down to a 1-minimal set that still triggers it.
"Reproduces" means the same kind of failure as at the finding's level: an error where the
unoptimized run succeeds, or outputs that differ from the unoptimized run.
Prints one JSON object. Needs only onnxruntime and numpy.

usage: bisect.py LEVEL      (LEVEL: basic | extended | all)
"""
import importlib.util
import json
import os
import sys

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "model.onnx")
L = ort.GraphOptimizationLevel
LEVELS = [("basic", L.ORT_ENABLE_BASIC), ("extended", L.ORT_ENABLE_EXTENDED), ("all", L.ORT_ENABLE_ALL)]
# Graph transformers ONNX Runtime 1.31 registers for the CPU provider, and the level-1 rewrite
# rules (disabled_optimizers takes both kinds of names).
TRANSFORMERS = """AttentionFusion BiasDropoutFusion BiasGeluFusion BiasSkipLayerNormFusion
BiasSoftmaxFusion CastFloat16Transformer CommonSubexpressionElimination ConstantFolding
ConstantSharing ConvActivationFusion ConvAddActivationFusion DoubleQDQPairsRemover
DynamicQuantizeMatMulFusion EmbedLayerNormFusion EnsureUniqueDQForNodeUnit FastGeluFusion
FreeDimensionOverrideTransformer FuseFp16InitializerToFp32NodeTransformer
GatherSliceToSplitFusion GatherToSliceFusion GeluFusionL1 GeluFusionL2 GemmActivationFusion
GroupQueryAttentionFusion GroupQueryAttentionPreNormFusion LayerNormFusionL1 LayerNormFusionL2
MatMulActivationFusion MatMulAddFusion MatMulIntegerToFloatFusion MatMulNBitsFusion
MatMulScaleFusion MatmulTransposeFusion NchwcTransformer NhwcTransformer
QDQFinalCleanupTransformer QDQPropagationTransformer QDQS8ToU8Transformer
QDQSelectorActionTransformer QuickGeluFusion RemoveDuplicateCastTransformer ReshapeFusion
SimplifiedLayerNormFusion SkipLayerNormFusion SliceConcatToSpaceToDepthFusion
TransposeOptimizer TransposeOptimizer_CPUExecutionProvider WeightBiasQuantization
WhereDummyDq""".split()
RULES = """EliminateIdentity EliminateSlice UnsqueezeElimination EliminateDropout
ExpandElimination CastElimination PreShapeNodeElimination NoopElimination DivMulFusion
FuseReluClip GemmSumFusion GemmTransposeFusion NotWhereFusion ConvAddFusion ConvMulFusion
ConvBNFusion Pad_Fusion MatMul_BatchNormalization_Fusion LabelEncoderFusion
CastChainElimination ClipQuantFusion ReluQuantFusion""".split()
CANDIDATES = TRANSFORMERS + RULES
# The transformers that run the rewrite rules: disabled last, when no named rule is at fault.
RULE_CONTAINERS = ["Level1_RuleBasedTransformer", "Level2_RuleBasedTransformer"]


def load_feeds():
    spec = importlib.util.spec_from_file_location("repro", os.path.join(HERE, "repro.py"))
    repro = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(repro)
    return repro.FEEDS


FEEDS = load_feeds()
RUNS = 0


def run(level, disabled):
    global RUNS
    RUNS += 1
    so = ort.SessionOptions()
    so.graph_optimization_level = level
    so.intra_op_num_threads = 1
    so.log_severity_level = 4
    try:
        sess = ort.InferenceSession(MODEL, so, providers=["CPUExecutionProvider"],
                                    disabled_optimizers=list(disabled))
        return "ok", sess.run(None, FEEDS)
    except Exception as e:  # noqa: BLE001 - any ORT failure is an outcome
        return "error", str(e).splitlines()[0][:200]


def differs(a, b):
    if a.shape != b.shape:
        return True
    a, b = a.astype(np.float64), b.astype(np.float64)
    return not np.allclose(a, b, rtol=1e-3, atol=1e-3, equal_nan=True)


BASE = run(L.ORT_DISABLE_ALL, [])


def kind(outcome):
    if outcome[0] == "error":
        return "error"
    if any(differs(r, g) for r, g in zip(BASE[1], outcome[1])):
        return "mismatch"
    return None


def ddmin(items, test):
    n = 2
    while len(items) >= 2:
        size = -(-len(items) // n)
        subsets = [items[i:i + size] for i in range(0, len(items), size)]
        for s in subsets:
            if test(s):
                items, n = s, 2
                break
        else:
            for s in subsets:
                rest = [x for x in items if x not in s]
                if test(rest):
                    items, n = rest, max(n - 1, 2)
                    break
            else:
                if n >= len(items):
                    break
                n = min(len(items), 2 * n)
    return items


def main():
    if BASE[0] != "ok":
        print(json.dumps({"error": "the unoptimized run fails: " + BASE[1], "runs": RUNS}))
        return
    top = [name for name, _ in LEVELS].index(sys.argv[1]) if len(sys.argv) > 1 else 2
    want, level_name, level = None, None, None
    for name, lvl in LEVELS[: top + 1]:
        want = kind(run(lvl, []))
        if want:
            level_name, level = name, lvl
            break
    if want is None:
        print(json.dumps({"error": "does not reproduce at any level", "runs": RUNS}))
        return

    def reproduces(enabled):
        disabled = [c for c in CANDIDATES if c not in enabled]
        return kind(run(level, disabled)) == want

    if reproduces([]):
        # A rewrite rule this list does not name yet: the container that runs it.
        for container in RULE_CONTAINERS:
            if kind(run(level, CANDIDATES + [container])) != want:
                print(json.dumps({"level": level_name, "kind": want, "culprits": [container],
                                  "runs": RUNS, "note": "a rewrite rule this script does not name"}))
                return
        print(json.dumps({"level": level_name, "kind": want, "culprits": [], "runs": RUNS,
                          "note": "reproduces with every known transformer disabled"}))
        return
    culprits = ddmin(list(CANDIDATES), reproduces)
    print(json.dumps({"level": level_name, "kind": want, "culprits": culprits, "runs": RUNS}))


main()
