#!/usr/bin/python3
"""Reference values for gradring's nn layers, made with PyTorch (Debian's python3-torch).

Each case builds a torch layer in float64, runs forward on a fixed input and backward with
a fixed upstream gradient, and records parameters, input, output, input gradient and
parameter gradients (plus running statistics for BatchNorm2d). The C++ test loads the same
parameters into the gradring layer and compares everything.

Run: /usr/bin/python3 tests/data/make_layer_reference.py  (writes layer_reference.json)
"""
import json
import os

import torch

torch.manual_seed(1234)
torch.set_default_dtype(torch.float64)


def flat(t):
    return {"shape": list(t.shape), "values": t.detach().reshape(-1).tolist()}


def case(name, layer, input_shape, train=True, steps=1):
    layer.train(train)
    params = {k: flat(v) for k, v in layer.state_dict().items()}
    record = {"name": name, "train": train, "state": params, "steps": []}
    for _ in range(steps):
        x = torch.randn(*input_shape, requires_grad=True)
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


nn = torch.nn
cases = [
    case("linear", nn.Linear(5, 3), (4, 5)),
    case("linear_nobias_3d", nn.Linear(4, 2, bias=False), (2, 3, 4)),
    case("conv2d", nn.Conv2d(2, 3, 3), (2, 2, 6, 5)),
    case("conv2d_strided_padded_grouped", nn.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                                                    groups=2), (2, 4, 7, 6)),
    case("batchnorm2d_train", nn.BatchNorm2d(3), (4, 3, 2, 3), train=True, steps=2),
    case("batchnorm2d_eval", nn.BatchNorm2d(3), (2, 3, 2, 2), train=False),
    case("batchnorm2d_cumulative", nn.BatchNorm2d(2, momentum=None), (3, 2, 2, 2), train=True, steps=3),
    case("batchnorm2d_no_affine", nn.BatchNorm2d(2, affine=False), (3, 2, 2, 2), train=True),
    case("maxpool2d", nn.MaxPool2d(2), (2, 2, 5, 4)),
    case("maxpool2d_padded_ceil", nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), (1, 2, 6, 6)),
    case("avgpool2d", nn.AvgPool2d(2, stride=1), (1, 2, 4, 3)),
    case("adaptiveavgpool2d", nn.AdaptiveAvgPool2d((2, 3)), (2, 2, 5, 7)),
    case("relu", nn.ReLU(), (3, 4)),
    case("flatten", nn.Flatten(), (2, 3, 2, 2)),
    case("logsoftmax", nn.LogSoftmax(dim=1), (3, 5)),
    case("sequential_reference_cnn_head", nn.Sequential(
        nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 3 * 3, 5),
        nn.LogSoftmax(dim=1)), (3, 1, 8, 8)),
]

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layer_reference.json")
with open(out, "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": cases}, f)
print(f"wrote {len(cases)} cases to {out}")
