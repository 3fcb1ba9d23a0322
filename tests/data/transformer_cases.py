"""Helpers shared by the transformer reference scripts (make_transformer_reference.py,
make_shape_reference.py): tensors as {shape, values}, perturbed eval-mode modules, and one
recorded case (state_dict, inputs, output, upstream gradient, input gradients)."""
import torch


def flat(t):
    return {"shape": list(t.shape), "values": t.detach().to(torch.float64).reshape(-1).tolist()}


def perturb(m):
    with torch.no_grad():  # non-trivial norms and biases, so the test sees them
        for n, p in m.named_parameters():
            if "norm" in n or "bias" in n:
                p.add_(0.3 * torch.randn_like(p))
    return m.eval()


def record(name, kind, m, inputs, outputs_of, opts, differentiable=1):
    xs = [x.detach().clone().requires_grad_(i < differentiable) for i, x in enumerate(inputs)]
    out = outputs_of(m, xs)
    g = torch.randn_like(out)
    grads = torch.autograd.grad(out, [x for x in xs if x.requires_grad], g)
    return {"name": name, "kind": kind, "options": opts, "state": {n: flat(t) for n, t in m.state_dict().items()},
            "inputs": [flat(x) for x in xs], "out": flat(out), "grad": flat(g), "grads": [flat(t) for t in grads]}
