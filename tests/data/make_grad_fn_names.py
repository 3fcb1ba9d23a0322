#!/work/venv/bin/python
"""PyTorch's grad_fn names (with the overload digit) for the ops gradring records, made with
PyTorch 2.15 (/work/venv/bin/python).

Each case's key is the gradring (= libtorch C++) expression, spelled exactly as
tests/autograd/test_grad_fn_names.cpp writes it (GR_NAME_CASE stringifies it); the value is the
PyTorch call that dispatches the SAME ATen overload the C++ call does, and the file records
type(out.grad_fn).__name__. Python wraps numbers into tensors (x * 2.0 is mul.Tensor, MulBackward0)
while C++ calls the Scalar overload (x.mul(2.0) is mul.Scalar, MulBackward1), so Scalar overloads
are called through torch.ops.aten.<op>.<overload>. The C++ names of a libtorch 1.13 program (g++
against /usr/include/torch) agree with these for the Scalar overloads (x * 2.0 MulBackward1,
x.sum(1) SumBackward1, max(x) MaxBackward1, clamp(x, 0.2, 0.7) ClampBackward1, ...). Hand-written
nodes differ only in spelling there: C++ prints "torch::autograd::CopyBackwards" for Python's
"CopyBackwards" (gradring keeps Python's spelling, as for "AccumulateGrad").

Run: /work/venv/bin/python tests/data/make_grad_fn_names.py  (writes grad_fn_names.json)
"""
import json
import os

import torch
import torch.nn.functional as F

aten = torch.ops.aten
torch.manual_seed(15)


def leaf(*shape):
    return (torch.rand(*shape, dtype=torch.float64) * 0.8 + 0.1).requires_grad_()


# The same variables as the C++ test (shapes only matter).
x, y = leaf(3, 4), leaf(3, 4)
v, u = leaf(4), leaf(4)
m = leaf(4, 5)
b1, b2 = leaf(2, 3, 4), leaf(2, 4, 5)
img, wt, cb = leaf(1, 2, 5, 5), leaf(3, 2, 3, 3), leaf(3)
seq, wt1 = leaf(1, 2, 6), leaf(3, 2, 3)
vol = leaf(1, 1, 3, 4, 4)
lw, lb = leaf(5, 4), leaf(5)
q, k, val = leaf(1, 2, 3, 4), leaf(1, 2, 3, 4), leaf(1, 2, 3, 4)
gamma, beta = leaf(4), leaf(4)
ch_w, ch_b = leaf(2), leaf(2)
emb = leaf(6, 4)
idx = torch.tensor([2, 0])
idx2 = torch.tensor([[0, 1, 2, 0], [1, 2, 0, 1], [2, 0, 1, 2]])
target = torch.tensor([1, 0, 3])
mask = torch.tensor([[True, False, True, False]] * 3)
zeros = torch.zeros(3, 4, dtype=torch.float64)
running_mean, running_var = torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)

CASES = {
    # ---- arithmetic (Tensor and Scalar overloads) ----
    "x + y": lambda: x + y,
    "x + 2.0": lambda: aten.add.Scalar(x, 2.0),
    "x.add(y, 2.0)": lambda: x.add(y, alpha=2.0),
    "x - y": lambda: x - y,
    "x - 2.0": lambda: aten.sub.Scalar(x, 2.0),
    "x * y": lambda: x * y,
    "x * 2.0": lambda: aten.mul.Scalar(x, 2.0),
    "2.0 * x": lambda: aten.mul.Scalar(x, 2.0),
    "x / y": lambda: x / y,
    "x / 2.0": lambda: aten.div.Scalar(x, 2.0),
    "-x": lambda: -x,
    "x.clone().add_(y)": lambda: x.clone().add_(y),
    "x.clone().add_(2.0)": lambda: aten.add_.Scalar(x.clone(), 2.0),
    "x.clone().sub_(y)": lambda: x.clone().sub_(y),
    "x.clone().sub_(2.0)": lambda: aten.sub_.Scalar(x.clone(), 2.0),
    "x.clone().mul_(y)": lambda: x.clone().mul_(y),
    "x.clone().mul_(2.0)": lambda: aten.mul_.Scalar(x.clone(), 2.0),
    "x.clone().div_(y)": lambda: x.clone().div_(y),
    "x.clone().div_(2.0)": lambda: aten.div_.Scalar(x.clone(), 2.0),
    # ---- element-wise math ----
    "exp(x)": lambda: torch.exp(x),
    "log(x)": lambda: torch.log(x),
    "sqrt(x)": lambda: torch.sqrt(x),
    "abs(x)": lambda: torch.abs(x),
    "pow(x, 2.5)": lambda: aten.pow.Tensor_Scalar(x, 2.5),
    "pow(x, y)": lambda: torch.pow(x, y),
    "relu(x)": lambda: torch.relu(x),
    "sigmoid(x)": lambda: torch.sigmoid(x),
    "tanh(x)": lambda: torch.tanh(x),
    "sin(x)": lambda: torch.sin(x),
    "cos(x)": lambda: torch.cos(x),
    "tan(x)": lambda: torch.tan(x),
    "asin(x)": lambda: torch.asin(x),
    "acos(x)": lambda: torch.acos(x),
    "atan(x)": lambda: torch.atan(x),
    "sinh(x)": lambda: torch.sinh(x),
    "cosh(x)": lambda: torch.cosh(x),
    "erf(x)": lambda: torch.erf(x),
    "erfc(x)": lambda: torch.erfc(x),
    "erfinv(x)": lambda: torch.erfinv(x),
    "rsqrt(x)": lambda: torch.rsqrt(x),
    "reciprocal(x)": lambda: torch.reciprocal(x),
    "log1p(x)": lambda: torch.log1p(x),
    "expm1(x)": lambda: torch.expm1(x),
    "log2(x)": lambda: torch.log2(x),
    "log10(x)": lambda: torch.log10(x),
    "sign(x)": lambda: torch.sign(x),
    "floor(x)": lambda: torch.floor(x),
    "ceil(x)": lambda: torch.ceil(x),
    "round(x)": lambda: torch.round(x),
    "round(x, 2)": lambda: torch.round(x, decimals=2),
    "trunc(x)": lambda: torch.trunc(x),
    "frac(x)": lambda: torch.frac(x),
    "softplus(x)": lambda: aten.softplus.default(x, 1, 20),
    "x.clone().sin_()": lambda: x.clone().sin_(),
    "x.clone().exp_()": lambda: x.clone().exp_(),
    "x.clone().sigmoid_()": lambda: x.clone().sigmoid_(),
    "x.clone().neg_()": lambda: x.clone().neg_(),
    "x.clone().floor_()": lambda: x.clone().floor_(),
    "x.clone().relu_()": lambda: x.clone().relu_(),
    "atan2(x, y)": lambda: torch.atan2(x, y),
    "hypot(x, y)": lambda: torch.hypot(x, y),
    # logaddexp, xlogy, copysign: recorded with Debian's python3-torch 1.13 (the same names as 2.15).
    "logaddexp(x, y)": lambda: torch.logaddexp(x, y),
    "xlogy(x, y)": lambda: torch.xlogy(x, y),
    "xlogy(x, 0.3)": lambda: aten.xlogy.Scalar_Other(x, 0.3),
    "xlogy(0.3, y)": lambda: aten.xlogy.Scalar_Self(0.3, y),
    "x.clone().xlogy_(y)": lambda: x.clone().xlogy_(y),
    "copysign(x, y)": lambda: torch.copysign(x, y),
    "copysign(x, 0.3)": lambda: aten.copysign.Scalar(x, 0.3),
    "fmod(x, y)": lambda: torch.fmod(x, y),
    "fmod(x, 0.3)": lambda: aten.fmod.Scalar(x, 0.3),
    "remainder(x, y)": lambda: torch.remainder(x, y),
    "remainder(x, 0.3)": lambda: aten.remainder.Scalar(x, 0.3),
    "x.clone().fmod_(0.3)": lambda: aten.fmod_.Scalar(x.clone(), 0.3),
    "lerp(x, y, 0.5)": lambda: aten.lerp.Scalar(x, y, 0.5),
    "lerp(x, y, v)": lambda: torch.lerp(x, y, v),
    "x.clone().lerp_(y, 0.5)": lambda: aten.lerp_.Scalar(x.clone(), y, 0.5),
    "clamp(x, 0.2, 0.7)": lambda: aten.clamp.default(x, 0.2, 0.7),
    "clamp(x, y, std::nullopt)": lambda: aten.clamp.Tensor(x, y, None),
    "clamp_min(x, 0.2)": lambda: aten.clamp_min.default(x, 0.2),
    "clamp_min(x, y)": lambda: aten.clamp_min.Tensor(x, y),
    "clamp_max(x, 0.7)": lambda: aten.clamp_max.default(x, 0.7),
    "clamp_max(x, y)": lambda: aten.clamp_max.Tensor(x, y),
    "clip(x, 0.2, 0.7)": lambda: aten.clip.default(x, 0.2, 0.7),
    "x.clone().clamp_(0.2, 0.7)": lambda: aten.clamp_.default(x.clone(), 0.2, 0.7),
    "x.clone().clamp_min_(0.2)": lambda: aten.clamp_min_.default(x.clone(), 0.2),
    "maximum(x, y)": lambda: torch.maximum(x, y),
    "minimum(x, y)": lambda: torch.minimum(x, y),
    "where(mask, x, y)": lambda: torch.where(mask, x, y),
    "where(mask, x, 0.5)": lambda: aten.where.ScalarOther(mask, x, 0.5),
    # ---- reductions ----
    "sum(x)": lambda: aten.sum.default(x),
    "x.sum()": lambda: aten.sum.default(x),
    "sum(x, {1})": lambda: aten.sum.dim_IntList(x, [1]),
    "x.sum(1)": lambda: aten.sum.dim_IntList(x, [1]),
    "mean(x)": lambda: aten.mean.default(x),
    "mean(x, {1})": lambda: aten.mean.dim(x, [1]),
    "prod(x)": lambda: aten.prod.default(x),
    "prod(x, 1)": lambda: aten.prod.dim_int(x, 1),
    "var(x)": lambda: aten.var.default(x),
    "var(x, {1}, true)": lambda: aten.var.dim(x, [1], True),
    "gr::std(x)": lambda: aten.std.default(x),
    "gr::std(x, {1}, true)": lambda: aten.std.dim(x, [1], True),
    "var_mean(x, {1})": lambda: aten.var_mean.dim(x, [1])[0],
    "std_mean(x, {1})": lambda: aten.std_mean.dim(x, [1])[0],
    "norm(x)": lambda: aten.norm.Scalar(x, 2),
    "norm(x, 1, {1})": lambda: aten.norm.ScalarOpt_dim(x, 1, [1]),
    "norm(x, 2, kFloat64)": lambda: aten.norm.ScalarOpt_dtype(x, 2, dtype=torch.float64),
    "norm(x, 2, {1}, false, kFloat64)": lambda: aten.norm.ScalarOpt_dim_dtype(x, 2, [1], False, dtype=torch.float64),
    "frobenius_norm(x, {0, 1})": lambda: aten.frobenius_norm.dim(x, [0, 1]),
    "linalg::vector_norm(x)": lambda: aten.linalg_vector_norm.default(x),
    "linalg::matrix_norm(x)": lambda: aten.linalg_matrix_norm.str_ord(x, "fro"),
    "logsumexp(x, {1})": lambda: aten.logsumexp.default(x, [1]),
    "cumsum(x, 1)": lambda: aten.cumsum.default(x, 1),
    "cumprod(x, 1)": lambda: aten.cumprod.default(x, 1),
    "max(x)": lambda: aten.max.default(x),
    "min(x)": lambda: aten.min.default(x),
    "max(x, 1)": lambda: aten.max.dim(x, 1)[0],
    "min(x, 1)": lambda: aten.min.dim(x, 1)[0],
    "amax(x, {1})": lambda: aten.amax.default(x, [1]),
    "amin(x, {1})": lambda: aten.amin.default(x, [1]),
    "median(x)": lambda: aten.median.default(x),
    "median(x, 1)": lambda: aten.median.dim(x, 1)[0],
    "nanmedian(x)": lambda: aten.nanmedian.default(x),
    "nanmedian(x, 1)": lambda: aten.nanmedian.dim(x, 1)[0],
    "sort(x, 1)": lambda: aten.sort.default(x, 1)[0],
    "sort(x, std::optional<bool>(true), 1)": lambda: aten.sort.stable(x, stable=True, dim=1)[0],
    "topk(x, 2)": lambda: aten.topk.default(x, 2)[0],
    # ---- linear algebra ----
    "mm(x, m)": lambda: aten.mm.default(x, m),
    "x.mm(m)": lambda: aten.mm.default(x, m),
    "bmm(b1, b2)": lambda: aten.bmm.default(b1, b2),
    "addmm(lb, x, lw.t())": lambda: aten.addmm.default(lb, x, lw.t()),
    "baddbmm(x.narrow(1, 0, 3), b1, b1.transpose(1, 2))": lambda: aten.baddbmm.default(x.narrow(1, 0, 3), b1, b1.transpose(1, 2)),
    "addbmm(x, b1, b2.narrow(2, 0, 4))": lambda: aten.addbmm.default(x, b1, b2.narrow(2, 0, 4)),
    "dot(v, u)": lambda: aten.dot.default(v, u),
    "mv(x, v)": lambda: aten.mv.default(x, v),
    "matmul(x, m)": lambda: aten.matmul.default(x, m),
    "matmul(b1, b2)": lambda: aten.matmul.default(b1, b2),
    "matmul(x, v)": lambda: aten.matmul.default(x, v),
    "linear(x, lw, lb)": lambda: aten.linear.default(x, lw, lb),
    "outer(v, u)": lambda: aten.outer.default(v, u),
    # ---- shape and views ----
    "x.view({4, 3})": lambda: x.view(4, 3),
    "x.reshape({4, 3})": lambda: aten.reshape.default(x, [4, 3]),
    "x.permute({1, 0})": lambda: x.permute(1, 0),
    "x.transpose(0, 1)": lambda: x.transpose(0, 1),
    "x.t()": lambda: x.t(),
    "x.narrow(1, 1, 2)": lambda: aten.narrow.default(x, 1, 1, 2),
    "x.slice(1, 1, 3)": lambda: aten.slice.Tensor(x, 1, 1, 3),
    "x.select(1, 2)": lambda: aten.select.int(x, 1, 2),
    "x[1]": lambda: aten.select.int(x, 0, 1),
    "x.expand({2, 3, 4})": lambda: x.expand(2, 3, 4),
    "x.unsqueeze(0)": lambda: x.unsqueeze(0),
    "x.unsqueeze(0).squeeze()": lambda: aten.squeeze.default(x.unsqueeze(0)),
    "x.unsqueeze(0).squeeze(0)": lambda: aten.squeeze.dim(x.unsqueeze(0), 0),
    "x.flatten()": lambda: aten.flatten.using_ints(x),
    "x.t().contiguous()": lambda: x.t().contiguous(),
    "x.clone()": lambda: x.clone(),
    "x.to(kFloat32)": lambda: aten.to.dtype(x, torch.float32),
    "cat({x, y}, 0)": lambda: torch.cat([x, y], 0),
    "stack({x, y}, 0)": lambda: torch.stack([x, y], 0),
    "x.split(2, 1)[0]": lambda: aten.split.Tensor(x, 2, 1)[0],
    "x.split_with_sizes({1, 3}, 1)[0]": lambda: aten.split_with_sizes.default(x, [1, 3], 1)[0],
    "x.chunk(2, 1)[0]": lambda: aten.chunk.default(x, 2, 1)[0],
    "x.unbind(0)[0]": lambda: aten.unbind.int(x, 0)[0],
    "flip(x, {0})": lambda: aten.flip.default(x, [0]),
    "roll(x, {1}, {1})": lambda: aten.roll.default(x, [1], [1]),
    "x.repeat({2, 1})": lambda: aten.repeat.default(x, [2, 1]),
    "tril(x)": lambda: aten.tril.default(x),
    "triu(x)": lambda: aten.triu.default(x),
    "diagonal(x)": lambda: aten.diagonal.default(x),
    "movedim(b1, 0, 2)": lambda: aten.movedim.int(b1, 0, 2),
    "broadcast_to(v, {3, 4})": lambda: aten.broadcast_to.default(v, [3, 4]),
    "unflatten(x, 1, {2, 2})": lambda: aten.unflatten.int(x, 1, [2, 2]),
    # ---- indexing ----
    "index_select(x, 1, idx)": lambda: aten.index_select.default(x, 1, idx),
    "gather(x, 1, idx2)": lambda: aten.gather.default(x, 1, idx2),
    "scatter(x, 1, idx2, y)": lambda: aten.scatter.src(x, 1, idx2, y),
    "scatter(x, 1, idx2, 0.5)": lambda: aten.scatter.value(x, 1, idx2, 0.5),
    "scatter_add(x, 1, idx2, y)": lambda: aten.scatter_add.default(x, 1, idx2, y),
    "index_add(x, 0, idx, y.narrow(0, 0, 2))": lambda: aten.index_add.default(x, 0, idx, y.narrow(0, 0, 2)),
    "index_copy(x, 0, idx, y.narrow(0, 0, 2))": lambda: aten.index_copy.default(x, 0, idx, y.narrow(0, 0, 2)),
    "index_fill(x, 1, idx, 0.5)": lambda: aten.index_fill.int_Scalar(x, 1, idx, 0.5),
    "x.clone().index_fill_(1, idx, lb.sum())": lambda: aten.index_fill_.int_Tensor(x.clone(), 1, idx, lb.sum()),
    "masked_fill(x, mask, 0.5)": lambda: aten.masked_fill.Scalar(x, mask, 0.5),
    "masked_fill(x, mask, zeros.sum())": lambda: aten.masked_fill.Tensor(x, mask, zeros.sum()),
    "masked_fill(x, mask, lb.sum())": lambda: aten.masked_fill.Tensor(x, mask, lb.sum()),
    "x.clone().masked_fill_(mask, lb.sum())": lambda: aten.masked_fill_.Tensor(x.clone(), mask, lb.sum()),
    "masked_select(x, mask)": lambda: aten.masked_select.default(x, mask),
    "masked_scatter(x, mask, y)": lambda: aten.masked_scatter.default(x, mask, y),
    "x.clone().masked_fill_(mask, 0.5)": lambda: aten.masked_fill_.Scalar(x.clone(), mask, 0.5),
    "index(x, {idx})": lambda: aten.index.Tensor(x, [idx]),
    "index_put(x, {idx}, v)": lambda: aten.index_put.default(x, [idx], v),
    "x.clone().index_put_({idx}, v)": lambda: aten.index_put_.default(x.clone(), [idx], v),
    "zeros.clone().copy_(x)": lambda: zeros.clone().copy_(x),
    "x.clone().fill_(1.0)": lambda: aten.fill_.Scalar(x.clone(), 1.0),
    "x.clone().zero_()": lambda: x.clone().zero_(),
    "x.clone().normal_()": lambda: x.clone().normal_(),
    "x.clone().uniform_()": lambda: x.clone().uniform_(),
    "x.clone().bernoulli_(0.5)": lambda: aten.bernoulli_.float(x.clone(), 0.5),
    # ---- nn functional ----
    "softmax(x, 1)": lambda: aten.softmax.int(x, 1),
    "log_softmax(x, 1)": lambda: aten.log_softmax.int(x, 1),
    "nll_loss(x, target)": lambda: aten.nll_loss.default(x, target),
    "cross_entropy(x, target)": lambda: aten.cross_entropy_loss.default(x, target),
    "mse_loss(x, y)": lambda: aten.mse_loss.default(x, y),
    "layer_norm(x, {4}, gamma, beta)": lambda: aten.layer_norm.default(x, [4], gamma, beta),
    "batch_norm(img, ch_w, ch_b, running_mean, running_var, true, 0.1, 1e-5)":
        lambda: aten.batch_norm.default(img, ch_w, ch_b, running_mean.clone(), running_var.clone(), True, 0.1, 1e-5, False),
    "embedding(emb, idx2)": lambda: aten.embedding.default(emb, idx2),
    "gelu(x)": lambda: aten.gelu.default(x),
    "silu(x)": lambda: aten.silu.default(x),
    "mish(x)": lambda: aten.mish.default(x),
    "leaky_relu(x)": lambda: aten.leaky_relu.default(x),
    "elu(x)": lambda: aten.elu.default(x),
    "selu(x)": lambda: aten.selu.default(x),
    "hardtanh(x)": lambda: aten.hardtanh.default(x),
    "relu6(x)": lambda: aten.relu6.default(x),
    "conv2d(img, wt, cb)": lambda: aten.conv2d.default(img, wt, cb),
    "conv1d(seq, wt1)": lambda: aten.conv1d.default(seq, wt1),
    "conv_transpose2d(img, wt.transpose(0, 1))": lambda: aten.conv_transpose2d.input(img, wt.transpose(0, 1)),
    "max_pool2d(img, 2)": lambda: aten.max_pool2d.default(img, [2]),
    "avg_pool2d(img, 2)": lambda: aten.avg_pool2d.default(img, [2]),
    "adaptive_avg_pool2d(img, {2, 2})": lambda: aten.adaptive_avg_pool2d.default(img, [2, 2]),
    "scaled_dot_product_attention(q, k, val)": lambda: aten.scaled_dot_product_attention.default(q, k, val),
    "constant_pad_nd(img, {1, 1})": lambda: aten.constant_pad_nd.default(img, [1, 1]),
    "reflection_pad1d(seq, {1, 1})": lambda: aten.reflection_pad1d.default(seq, [1, 1]),
    "reflection_pad2d(img, {1, 1, 1, 1})": lambda: aten.reflection_pad2d.default(img, [1, 1, 1, 1]),
    "reflection_pad3d(vol, {1, 1, 1, 1, 1, 1})": lambda: aten.reflection_pad3d.default(vol, [1, 1, 1, 1, 1, 1]),
    "replication_pad1d(seq, {1, 1})": lambda: aten.replication_pad1d.default(seq, [1, 1]),
    "replication_pad2d(img, {1, 1, 1, 1})": lambda: aten.replication_pad2d.default(img, [1, 1, 1, 1]),
    "replication_pad3d(vol, {1, 1, 1, 1, 1, 1})": lambda: aten.replication_pad3d.default(vol, [1, 1, 1, 1, 1, 1]),
    "_pad_circular(img, {1, 1, 1, 1})": lambda: aten._pad_circular.default(img, [1, 1, 1, 1]),
    "upsample_nearest1d(seq, {12})": lambda: aten.upsample_nearest1d.default(seq, [12]),
    "upsample_nearest3d(vol, {6, 8, 8})": lambda: aten.upsample_nearest3d.default(vol, [6, 8, 8]),
    "upsample_trilinear3d(vol, {6, 8, 8}, false)": lambda: aten.upsample_trilinear3d.default(vol, [6, 8, 8], False),
    "_upsample_nearest_exact1d(seq, {12})": lambda: aten._upsample_nearest_exact1d.default(seq, [12]),
    "_upsample_nearest_exact3d(vol, {6, 8, 8})": lambda: aten._upsample_nearest_exact3d.default(vol, [6, 8, 8]),
    "upsample_nearest2d(img, {10, 10})": lambda: aten.upsample_nearest2d.default(img, [10, 10]),
    "upsample_bilinear2d(img, {10, 10}, false)": lambda: aten.upsample_bilinear2d.default(img, [10, 10], False),
    "upsample_linear1d(seq, {12}, false)": lambda: aten.upsample_linear1d.default(seq, [12], False),
    "_upsample_nearest_exact2d(img, {10, 10})": lambda: aten._upsample_nearest_exact2d.default(img, [10, 10]),
    "pixel_shuffle(b1.reshape({1, 4, 3, 2}), 2)": lambda: aten.pixel_shuffle.default(b1.reshape(1, 4, 3, 2), 2),
    "pixel_unshuffle(img.narrow(2, 0, 4).narrow(3, 0, 4), 2)":
        lambda: aten.pixel_unshuffle.default(img.narrow(2, 0, 4).narrow(3, 0, 4), 2),
    "group_norm(img, 1)": lambda: aten.group_norm.default(img, 1),
    "rms_norm(x, {4}, gamma)": lambda: aten.rms_norm.default(x, [4], gamma),
    "dropout(x, 0.5, true)": lambda: aten.dropout.default(x, 0.5, True),
}


def main():
    names = {}
    for key, fn in CASES.items():
        out = fn()
        names[key] = type(out.grad_fn).__name__
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "grad_fn_names.json")
    with open(path, "w") as f:
        json.dump({"torch_version": torch.__version__.split("+")[0], "names": names}, f, indent=1)
        f.write("\n")
    print(f"wrote {len(names)} names to {path}")


if __name__ == "__main__":
    main()
