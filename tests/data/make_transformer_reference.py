#!/work/venv/bin/python
"""Reference values for gradring's TransformerEncoderLayer, TransformerEncoder and
TransformerDecoderLayer, made with torch.nn's (float64, eval mode: no dropout): the
state_dict, inputs, masks, outputs and the input gradients for a fixed upstream gradient.

Run: /work/venv/bin/python tests/data/make_transformer_reference.py  (writes transformer_reference.json)
"""
import json
import os

import torch
from transformer_cases import flat, perturb, record

torch.manual_seed(2028)
E, H, FF, S, T, N = 8, 2, 16, 5, 4, 3


cases = []
causal = torch.ones(S, S, dtype=torch.bool).triu(1)
for norm_first in (False, True):
    for act in ("relu", "gelu"):
        opts = {"norm_first": norm_first, "activation": act, "batch_first": False}
        m = perturb(torch.nn.TransformerEncoderLayer(E, H, FF, activation=act, norm_first=norm_first,
                                                     dtype=torch.float64))
        src = torch.randn(S, N, E, dtype=torch.float64)
        cases.append(record(f"encoder layer norm_first={norm_first} {act}", "encoder_layer", m, [src, causal.double()],
                            lambda m, xs: m(xs[0], src_mask=xs[1].bool()), opts))
opts = {"norm_first": False, "activation": "gelu", "batch_first": True, "num_layers": 2}
layer = torch.nn.TransformerEncoderLayer(E, H, FF, activation="gelu", batch_first=True, dtype=torch.float64)
enc = perturb(torch.nn.TransformerEncoder(layer, 2, norm=torch.nn.LayerNorm(E, dtype=torch.float64),
                                          enable_nested_tensor=False))
src = torch.randn(N, S, E, dtype=torch.float64)
kpm = torch.zeros(N, S)
kpm[:, -1] = 1
cases.append(record("encoder 2 layers + norm, batch_first, key padding", "encoder", enc, [src, kpm],
                    lambda m, xs: m(xs[0], src_key_padding_mask=xs[1].bool()), opts))
for norm_first in (False, True):
    opts = {"norm_first": norm_first, "activation": "relu", "batch_first": False}
    m = perturb(torch.nn.TransformerDecoderLayer(E, H, FF, norm_first=norm_first, dtype=torch.float64))
    tgt, mem = torch.randn(T, N, E, dtype=torch.float64), torch.randn(S, N, E, dtype=torch.float64)
    tmask = torch.ones(T, T, dtype=torch.bool).triu(1)
    cases.append(record(f"decoder layer norm_first={norm_first}", "decoder_layer", m, [tgt, mem, tmask.double()],
                        lambda m, xs: m(xs[0], xs[1], tgt_mask=xs[2].bool()), opts, 2))
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "transformer_reference.json")
with open(path, "w") as f:
    json.dump({"torch": torch.__version__, "E": E, "H": H, "FF": FF, "cases": cases}, f)
print("wrote", path, len(cases), "cases")
