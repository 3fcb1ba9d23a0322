#!/work/venv/bin/python
"""Reference values for gradring's padding (F.pad: constant, reflect, replicate, circular),
interpolation (F.interpolate: nearest, nearest-exact, linear, bilinear, trilinear, area) and
nn.Transformer / nn.TransformerDecoder, made with current PyTorch (/work/venv, torch 2.x):
Debian's torch 1.13 lacks the output-size-equals-input short cut of today's linear
interpolation and torch 2.x is what libtorch users run. Padding and interpolation: float64
outputs and input gradients for a fixed upstream gradient, plus float32 outputs (the
coordinate rules round in float). Transformers: float64, eval mode, dropout 0, the
state_dict, inputs, masks, outputs and input gradients.

Run: /work/venv/bin/python tests/data/make_shape_reference.py  (writes shape_reference.json)
"""
import json
import os

import torch
import torch.nn.functional as F
from transformer_cases import flat, perturb, record

torch.manual_seed(2030)


def with_grad(fn, x):
    x = x.detach().clone().requires_grad_(True)
    out = fn(x)
    g = torch.randn_like(out)
    (gx,) = torch.autograd.grad(out, [x], g)
    return out, g, gx


pads = []


def pad_case(shape, pad, mode, value=None):
    x = torch.randn(*shape, dtype=torch.float64)
    kw = {} if value is None else {"value": value}
    out, g, gx = with_grad(lambda t: F.pad(t, pad, mode=mode, **kw), x)
    pads.append({"input": flat(x), "pad": list(pad), "mode": mode, "value": 0.0 if value is None else value,
                 "out": flat(out), "grad": flat(g), "grad_input": flat(gx)})


pad_case((2, 3, 4), (1, 2), "constant", 0.5)
pad_case((2, 3, 4, 5), (1, 2, 0, 1), "constant", -1.25)
pad_case((2, 3, 4), (-1, 2, 1, -2), "constant", 0.0)
pad_case((2, 3, 4), (1, 1, 2, 0, 0, 1), "constant", 2.0)
pad_case((2, 3, 5), (2, 3), "reflect")
pad_case((3, 5), (4, 1), "reflect")
pad_case((1, 2, 4, 5), (1, 2, 3, 0), "reflect")
pad_case((2, 4, 5), (3, 3, 2, 2), "reflect")
pad_case((2, 3, 5), (-1, 2), "reflect")
pad_case((2, 3, 3, 4, 4), (1, 1, 2, 0, 1, 2), "reflect")
pad_case((2, 3, 4), (5, 2), "replicate")
pad_case((1, 2, 3, 4), (2, 1, 0, 4), "replicate")
pad_case((2, 3, 4), (-2, 1), "replicate")
pad_case((1, 2, 3, 4), (1, 2, 2, 1), "circular")
pad_case((2, 3, 4), (4, 4), "circular")
pad_case((3, 4), (2, -1), "circular")

interps = []


def interp_case(shape, mode, size=None, scale_factor=None, align_corners=None, recompute_scale_factor=None):
    x = torch.randn(*shape, dtype=torch.float64)

    def fn(t):
        return F.interpolate(t, size=size, scale_factor=scale_factor, mode=mode, align_corners=align_corners,
                             recompute_scale_factor=recompute_scale_factor)

    out, g, gx = with_grad(fn, x)
    out32 = fn(x.float())
    # The derivative of the forward, <f(e_j), g> for each basis input e_j (f is linear): torch's
    # 1-D and 3-D nearest backward short-cut out == in and out == 2 * in where their forward
    # does not, so with a scale factor torch's gradient is not its forward's derivative.
    basis = torch.eye(x.numel(), dtype=torch.float64).view(x.numel(), *x.shape)
    derivative = torch.stack([(fn(e) * g).sum() for e in basis]).view(x.shape)
    interps.append({"input": flat(x), "mode": mode, "size": size, "scale_factor": scale_factor,
                    "align_corners": align_corners, "recompute_scale_factor": recompute_scale_factor,
                    "out": flat(out), "grad": flat(g), "grad_input": flat(gx), "out_float32": flat(out32),
                    "torch_grad_is_derivative": bool(torch.allclose(gx, derivative, rtol=1e-12, atol=1e-12)),
                    "derivative": flat(derivative)})


interp_case((2, 3, 4), "nearest", size=[7])
interp_case((2, 3, 4), "nearest", scale_factor=[2.0])
interp_case((2, 3, 5), "nearest", scale_factor=[1.7])
interp_case((2, 3, 5), "nearest", size=[2])
interp_case((2, 3, 5), "nearest", scale_factor=[2.1])
interp_case((2, 2, 3, 4), "nearest", size=[5, 7])
interp_case((2, 2, 3, 4), "nearest", scale_factor=[2.0, 3.0])
interp_case((1, 2, 6, 5), "nearest", scale_factor=[0.5, 1.5])
interp_case((1, 2, 5, 6), "nearest-exact", size=[7, 4])
interp_case((1, 2, 5, 3), "nearest-exact", scale_factor=[1.3, 2.0])
interp_case((2, 3, 4), "linear", size=[9], align_corners=False)
interp_case((2, 3, 4), "linear", size=[9], align_corners=True)
interp_case((2, 3, 6), "linear", scale_factor=[1.5], align_corners=False)
interp_case((2, 3, 7), "linear", size=[3], align_corners=False)
interp_case((2, 3, 3), "linear", scale_factor=[1.2], align_corners=False)
interp_case((2, 3, 4), "linear", size=[1], align_corners=True)
interp_case((2, 2, 3, 4), "bilinear", size=[5, 7], align_corners=False)
interp_case((2, 2, 3, 4), "bilinear", size=[5, 7], align_corners=True)
interp_case((1, 3, 4, 5), "bilinear", scale_factor=[2.0, 1.5], align_corners=False)
interp_case((1, 3, 7, 6), "bilinear", scale_factor=[0.5, 0.75], align_corners=False)
interp_case((1, 3, 4, 5), "bilinear", scale_factor=[1.7, 2.3], align_corners=False, recompute_scale_factor=True)
interp_case((1, 3, 4, 5), "bilinear", scale_factor=[1.7, 2.3], align_corners=True)
interp_case((1, 2, 3, 4, 3), "trilinear", size=[4, 6, 5], align_corners=False)
interp_case((1, 2, 3, 2, 3), "nearest", scale_factor=[2.0, 1.5, 1.0])
interp_case((1, 2, 7, 5), "area", size=[3, 2])
# torch's 2-D nearest kernel short-cuts out == in and out == 2 * in; its 1-D and 3-D do not.
interp_case((1, 2, 2, 3), "nearest", scale_factor=[2.1, 1.2])
interp_case((1, 1, 2, 3, 3), "nearest", scale_factor=[2.1, 1.2, 2.0])
interp_case((2, 2, 3), "nearest", scale_factor=[1.2])

E, H, FF, S, T, N = 8, 2, 16, 5, 4, 3


transformers = []
for batch_first, norm_first, act in ((False, False, "relu"), (True, True, "gelu")):
    opts = {"batch_first": batch_first, "norm_first": norm_first, "activation": act, "num_encoder_layers": 2,
            "num_decoder_layers": 2}
    m = perturb(torch.nn.Transformer(E, H, 2, 2, FF, dropout=0.0, activation=act, batch_first=batch_first,
                                     norm_first=norm_first, dtype=torch.float64))
    m.encoder.enable_nested_tensor = False
    src = torch.randn(*((N, S, E) if batch_first else (S, N, E)), dtype=torch.float64)
    tgt = torch.randn(*((N, T, E) if batch_first else (T, N, E)), dtype=torch.float64)
    tgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64)
    src_kpm = torch.zeros(N, S)
    src_kpm[1, -2:] = 1
    tgt_kpm = torch.zeros(N, T)
    tgt_kpm[2, -1] = 1
    # The float tgt_mask as gradring's test passes it: -inf above the diagonal (JSON has no inf).
    transformers.append(record(
        f"transformer batch_first={batch_first} norm_first={norm_first} {act}", "transformer", m,
        [src, tgt, src_kpm, tgt_kpm],
        lambda m, xs: m(xs[0], xs[1], tgt_mask=tgt_mask, src_key_padding_mask=xs[2].bool(),
                        tgt_key_padding_mask=xs[3].bool(), memory_key_padding_mask=xs[2].bool()), opts, 2))
opts = {"batch_first": False, "norm_first": False, "activation": "relu", "num_layers": 2}
layer = torch.nn.TransformerDecoderLayer(E, H, FF, dropout=0.0, dtype=torch.float64)
dec = perturb(torch.nn.TransformerDecoder(layer, 2, norm=torch.nn.LayerNorm(E, dtype=torch.float64)))
tgt, mem = torch.randn(T, N, E, dtype=torch.float64), torch.randn(S, N, E, dtype=torch.float64)
mmask = torch.zeros(T, S, dtype=torch.bool)
mmask[0, -1] = True
transformers.append(record("decoder 2 layers + norm, memory mask", "decoder", dec, [tgt, mem, mmask.double()],
                           lambda m, xs: m(xs[0], xs[1], memory_mask=xs[2].bool()), opts, 2))

path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shape_reference.json")
with open(path, "w") as f:
    json.dump({"torch": torch.__version__, "E": E, "H": H, "FF": FF, "pad": pads, "interpolate": interps,
               "transformer": transformers}, f)
print("wrote", path, len(pads), "pad,", len(interps), "interpolate,", len(transformers), "transformer cases")
