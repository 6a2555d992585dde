import torch

DT_BOOL = torch.bool
DT_U8 = torch.uint8
DT_I8 = torch.int8
DT_I16 = torch.int16
DT_I32 = torch.int32
DT_I64 = torch.int64
DT_F16 = torch.float16
DT_BF16 = torch.bfloat16
DT_F32 = torch.float32
DT_F64 = torch.float64

def main(p1, p3, p9, p10, p17, p18, p21, p22, p29, p30, p31, p36, p37, p38, p41, p42, p47, p48, p52):
    def fn57():
        v13 = torch.add(v12, v5)
        v14 = v12.contiguous().view(-1).view(v12.shape)
        v15 = torch.pow((v7.abs() + 0.5), 0.125)
        v16 = torch.var(v12, [-4, 2], correction=1, keepdim=True)
        return (v13, v14, v15, v16)
    def fn59():
        v40 = torch.nn.functional.adaptive_max_pool2d(v39, [2, 1])
        v43 = torch.nn.functional.layer_norm(v40, [2, 1], p41, p42, eps=0.376)
        v44 = torch.log((p38.abs() + 0.5))
        return (v40, v43, v44)
    def fn58():
        v49 = torch.scatter(v43, -4, p47, p48)
        v50 = torch.ceil(v40)
        v51 = torch.reshape(p37, [16, 3])
        v53 = torch.mm(v51, (p52.abs() * 8).clamp(max=255).to(torch.uint8).to(v51.dtype))
        return (v49, v50, v53)
    v2 = torch.reshape(p1, [1, 3, 3])
    v4 = torch.bmm(p3.transpose(1, 2), v2.transpose(1, 2)).transpose(1, 2)
    v5 = torch.max(v4, 2, keepdim=True).values
    v6 = torch.nn.functional.celu(v2, 1.5)
    v7 = v5.clone().clamp_(-2.0, 1.5)
    v8 = torch.reshape(v7, [1, 1, 3, 1])
    v11 = torch.tanh(torch.nn.functional.conv_transpose2d(v8, p9, p10, stride=1, padding=1, output_padding=0, groups=1, dilation=2))
    v12 = torch.hypot(v11, v7)
    v13, v14, v15, v16 = fn57()
    v19 = torch.acosh((p17.abs() + 1.25))
    v20 = torch.reshape(p18, [1, 1, 2, 3])
    v23 = torch.matmul(torch.softmax(torch.matmul(v20, p21.transpose(-2, -1)) / 2.125, dim=-1), p22)
    v24 = torch.var(v20, [3], correction=0, keepdim=False)
    v25 = torch.clamp_min(v24, 1)
    v26 = torch.softmax(v25, 2)
    v27 = torch.digamma((v24.abs() + 0.5))
    v28 = torch.reshape(v24, [1, 1, 1, 2])
    v32 = (torch.matmul(v28.transpose(1, 2).contiguous().permute(0, 2, 1, 3), p29.transpose(1, 2).contiguous().permute(0, 2, 1, 3).transpose(-2, -1)).div(0.5) + p31).softmax(dim=-1).matmul(p30.transpose(1, 2).contiguous().permute(0, 2, 1, 3))
    v33 = torch.nn.functional.gelu(v27, approximate='none')
    v34 = torch.stack([v33, v25, v27], -4)
    v35 = torch.clamp(v28 * 0.9375 + 1.0, 0.0, 1.0)
    v39 = torch.reshape(p37, [1, 4, 4, 3])
    v40, v43, v44 = fn59()
    v45 = torch.softmax(v43 / 2.0, -2)
    v46 = torch.exp(v45)
    if len(p47.shape) >= 4:
        v49, v50, v53 = fn58()
    else:
        v49 = torch.zeros([1, 4, 2, 1], dtype=DT_F32, device=p47.device)
        v50 = torch.zeros([1, 4, 2, 1], dtype=DT_F32, device=p47.device)
        v53 = torch.zeros([16, 5], dtype=DT_F32, device=p47.device)
    v54 = torch.nan_to_num(v50, nan=-0.5)
    v56 = v54.clone().clamp_(-0.875, 1.25)
    return (v6, v13, v14, v15, v16, v19, v23, v26, v32, v34, v35, v44, v46, v49, v53, v56)

