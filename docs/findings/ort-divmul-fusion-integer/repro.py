#!/usr/bin/env python3
"""ORT DivMulFusion rewrites y * (1 / x) into y / x on int32, where 1 / x truncates to 0."""
import onnx, onnx.helper as h, numpy as np, onnxruntime as ort
from onnx import TensorProto as T
x=h.make_tensor_value_info('x',T.INT32,[3]); y=h.make_tensor_value_info('y',T.INT32,[3]); z=h.make_tensor_value_info('z',T.INT32,None)
one=h.make_tensor('one',T.INT32,[],[1])
g=h.make_graph([h.make_node('Div',['one','x'],['d']),h.make_node('Mul',['y','d'],['z'])],'g',[x,y],[z],[one])
m=h.make_model(g,opset_imports=[h.make_opsetid('',19)],ir_version=9); onnx.save(m,'divmul.onnx')
feeds={'x':np.array([2,3,-4],np.int32),'y':np.array([10,9,8],np.int32)}
for lvl in [ort.GraphOptimizationLevel.ORT_DISABLE_ALL, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC]:
    so=ort.SessionOptions(); so.graph_optimization_level=lvl
    print(lvl, ort.InferenceSession('divmul.onnx',so,providers=['CPUExecutionProvider']).run(None,feeds)[0])
