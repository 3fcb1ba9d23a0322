#!/work/venv/bin/python
"""Reference values for gradring's normalisation, embedding and activation layers (issue 16,
branch norm), made with PyTorch in float64.

Each case builds a torch layer, gives its parameters random values (so the affine parts are
exercised), runs forward on a fixed input and backward with a fixed upstream gradient, and
records parameters, input, output, input gradient and parameter gradients (and buffers after
the step). Embedding cases record integer indices (and offsets) instead of a float input.
The C++ test (tests/nn/test_norm_reference.cpp) loads the same parameters into the gradring
layer and compares everything.

Run with current PyTorch (nn.RMSNorm needs torch >= 2.4; Debian's python3-torch 1.13 lacks it):
  /work/venv/bin/python tests/data/make_norm_reference.py   (writes norm_reference.json)
"""
import json
import os

import torch

torch.manual_seed(1616)
torch.set_default_dtype(torch.float64)
nn = torch.nn


def flat(t):
    return {"shape": list(t.shape), "values": t.detach().reshape(-1).tolist()}


def randomize(layer):
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.randn_like(p))


def case(name, layer, input_shape, train=True, scale=1.0, random_params=True, steps=1):
    if random_params:
        randomize(layer)
    layer.train(train)
    record = {"name": name, "train": train, "state": {k: flat(v) for k, v in layer.state_dict().items()},
              "steps": []}
    for _ in range(steps):
        x = (torch.randn(*input_shape) * scale).requires_grad_(True)
        y = layer(x)
        g = torch.randn(*y.shape)
        layer.zero_grad()
        y.backward(g)
        record["steps"].append({
            "input": flat(x),
            "output": flat(y),
            "upstream": flat(g),
            "input_grad": flat(x.grad),
            "param_grads": {k: flat(p.grad) for k, p in layer.named_parameters()},
            "state_after": {k: flat(v) for k, v in layer.state_dict().items()},
        })
    return record


def index_case(name, layer, indices, offsets=None):
    randomize(layer)
    record = {"name": name, "train": True, "state": {k: flat(v) for k, v in layer.state_dict().items()}}
    y = layer(indices) if offsets is None else layer(indices, offsets)
    g = torch.randn(*y.shape)
    layer.zero_grad()
    y.backward(g)
    step = {"indices": flat(indices), "output": flat(y), "upstream": flat(g),
            "param_grads": {k: flat(p.grad) for k, p in layer.named_parameters()}}
    if offsets is not None:
        step["offsets"] = flat(offsets)
    record["steps"] = [step]
    return record


cases = [
    case("layernorm_1d", nn.LayerNorm(6), (4, 6)),
    case("layernorm_2d", nn.LayerNorm([3, 4]), (2, 5, 3, 4)),
    case("layernorm_no_affine_eps", nn.LayerNorm(5, eps=1e-3, elementwise_affine=False), (3, 5)),
    case("layernorm_wide_offset", nn.LayerNorm(300), (3, 300), scale=1e-3),
    index_case("embedding", nn.Embedding(10, 4), torch.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])),
    index_case("embedding_padding_idx", nn.Embedding(10, 3, padding_idx=2), torch.tensor([[0, 2, 2, 7], [2, 9, 1, 7]])),
    index_case("embedding_bag_sum", nn.EmbeddingBag(10, 3, mode="sum"), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]),
               torch.tensor([0, 4])),
    index_case("embedding_bag_mean", nn.EmbeddingBag(10, 3, mode="mean"), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0]),
               torch.tensor([0, 3, 3, 5])),
    case("gelu", nn.GELU(), (3, 5), scale=2.0),
    case("gelu_tanh", nn.GELU(approximate="tanh"), (3, 5), scale=2.0),
    case("silu", nn.SiLU(), (3, 5), scale=2.0),
    case("mish", nn.Mish(), (3, 5), scale=2.0),
    case("tanh", nn.Tanh(), (3, 5)),
    case("sigmoid", nn.Sigmoid(), (3, 5)),
    case("leaky_relu", nn.LeakyReLU(0.2), (3, 5)),
    case("elu", nn.ELU(alpha=0.7), (3, 5), scale=2.0),
    case("selu", nn.SELU(), (3, 5), scale=2.0),
    case("prelu", nn.PReLU(), (2, 3, 4)),
    case("prelu_channels", nn.PReLU(3), (2, 3, 4)),
    case("softplus", nn.Softplus(beta=2, threshold=5), (3, 5), scale=3.0),
    case("hardtanh", nn.Hardtanh(-0.5, 1.5), (3, 5), scale=2.0),
    case("relu6", nn.ReLU6(), (3, 5), scale=5.0),
    case("softmax", nn.Softmax(dim=1), (2, 3, 4)),
    case("log_softmax", nn.LogSoftmax(dim=-1), (2, 3, 4)),
    case("identity", nn.Identity(), (2, 3)),
    case("unflatten", nn.Unflatten(1, (2, 3)), (4, 6, 2)),
    case("rmsnorm", nn.RMSNorm([4]), (3, 4)),
    case("rmsnorm_eps_2d", nn.RMSNorm([2, 3], eps=1e-2), (2, 2, 3)),
    case("rmsnorm_no_affine", nn.RMSNorm(5, elementwise_affine=False), (3, 5)),
    case("groupnorm", nn.GroupNorm(2, 4), (3, 4, 5)),
    case("groupnorm_2d_no_affine", nn.GroupNorm(3, 6, eps=1e-3, affine=False), (2, 6, 2, 3)),
    case("instancenorm2d", nn.InstanceNorm2d(3), (2, 3, 4, 5)),
    case("instancenorm2d_affine_track", nn.InstanceNorm2d(3, affine=True, track_running_stats=True), (2, 3, 4, 5),
         steps=2),
    case("batchnorm1d_2d", nn.BatchNorm1d(4), (5, 4), steps=2),
    case("batchnorm1d_3d", nn.BatchNorm1d(3), (4, 3, 5)),
    case("batchnorm1d_eval", nn.BatchNorm1d(3), (4, 3, 5), train=False),
    case("batchnorm3d", nn.BatchNorm3d(2), (2, 2, 3, 2, 2)),
    index_case("embedding_bag_max", nn.EmbeddingBag(10, 3, mode="max"), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 0]),
               torch.tensor([0, 3, 5])),
]

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "norm_reference.json")
with open(out, "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": cases}, f)
print("wrote", out, len(cases), "cases")
