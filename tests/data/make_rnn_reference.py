#!/usr/bin/python3
"""Reference values for gradring's recurrent layers (RNN, LSTM, GRU and their cells), made with
Debian's python3-torch 1.13 (/usr/bin/python3).

Each case builds a torch module in float64 (eval mode, so dropout is off), runs it on a fixed
input (and initial state, when the case gives one), and back-propagates fixed upstream
gradients into every output (output, h_n[, c_n]; h'[, c'] for the cells). It records the
module's options, its state_dict (PyTorch's parameter names, which the C++ test loads by name),
the inputs, the outputs, and the gradients of the input, the initial states and every parameter.

Run: /usr/bin/python3 tests/data/make_rnn_reference.py  (writes rnn_reference.json)
"""
import json
import os

import torch

torch.manual_seed(2024)
torch.set_default_dtype(torch.float64)
nn = torch.nn


def flat(t):
    return {"shape": list(t.shape), "values": t.detach().reshape(-1).tolist()}


def case(name, kind, module, options, input_shape, state_shapes=None):
    """state_shapes: None (states omitted) or the shapes of the initial states."""
    module.eval()
    x = torch.randn(*input_shape, requires_grad=True)
    states = [torch.randn(*s, requires_grad=True) for s in state_shapes or []]
    if kind == "lstm" or kind == "lstm_cell":
        out = module(x, tuple(states)) if states else module(x)
    else:
        out = module(x, states[0]) if states else module(x)
    if kind == "lstm":
        outputs = [out[0], out[1][0], out[1][1]]
    elif kind == "lstm_cell":
        outputs = list(out)
    elif kind in ("rnn", "gru"):
        outputs = [out[0], out[1]]
    else:
        outputs = [out]
    upstream = [torch.randn(*o.shape) for o in outputs]
    module.zero_grad()
    sum((o * g).sum() for o, g in zip(outputs, upstream)).backward()
    return {
        "name": name,
        "kind": kind,
        "options": options,
        "state": {k: flat(v) for k, v in module.state_dict().items()},
        "input": flat(x),
        "states": [flat(s) for s in states],
        "outputs": [flat(o) for o in outputs],
        "upstream": [flat(g) for g in upstream],
        "input_grad": flat(x.grad),
        "state_grads": [flat(s.grad) for s in states],
        "param_grads": {k: flat(p.grad) for k, p in module.named_parameters()},
    }


def seq(kind, name, input_size, hidden_size, input_shape, state_shapes=None, **kw):
    cls = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn": nn.RNN}[kind]
    module = cls(input_size, hidden_size, **kw)
    options = dict(input_size=input_size, hidden_size=hidden_size, num_layers=kw.get("num_layers", 1),
                   bias=kw.get("bias", True), batch_first=kw.get("batch_first", False),
                   bidirectional=kw.get("bidirectional", False), proj_size=kw.get("proj_size", 0),
                   nonlinearity=kw.get("nonlinearity", "tanh"))
    return case(name, kind, module, options, input_shape, state_shapes)


def cell(kind, name, input_size, hidden_size, input_shape, state_shapes=None, **kw):
    cls = {"lstm_cell": nn.LSTMCell, "gru_cell": nn.GRUCell, "rnn_cell": nn.RNNCell}[kind]
    module = cls(input_size, hidden_size, **kw)
    options = dict(input_size=input_size, hidden_size=hidden_size, bias=kw.get("bias", True),
                   nonlinearity=kw.get("nonlinearity", "tanh"))
    return case(name, kind, module, options, input_shape, state_shapes)


# T = 4 steps, B = 2, input 3, hidden 4 unless said otherwise.
cases = [
    seq("lstm", "lstm_1layer_given_state", 3, 4, (4, 2, 3), [(1, 2, 4), (1, 2, 4)]),
    seq("lstm", "lstm_1layer_zero_state", 3, 4, (4, 2, 3)),
    seq("lstm", "lstm_2layer_bidirectional_batch_first", 3, 4, (2, 4, 3), [(4, 2, 4), (4, 2, 4)], num_layers=2,
        bidirectional=True, batch_first=True),
    seq("lstm", "lstm_2layer_no_bias", 3, 4, (4, 2, 3), num_layers=2, bias=False),
    seq("lstm", "lstm_unbatched_bidirectional", 3, 4, (4, 3), [(2, 4), (2, 4)], bidirectional=True),
    seq("lstm", "lstm_proj_2layer", 3, 4, (4, 2, 3), [(2, 2, 3), (2, 2, 4)], num_layers=2, proj_size=3),
    seq("lstm", "lstm_proj_bidirectional", 3, 4, (4, 2, 3), proj_size=2, bidirectional=True),
    seq("gru", "gru_1layer_given_state", 3, 4, (4, 2, 3), [(1, 2, 4)]),
    seq("gru", "gru_2layer_bidirectional_zero_state", 3, 4, (4, 2, 3), num_layers=2, bidirectional=True),
    seq("gru", "gru_batch_first_given_state", 3, 4, (2, 4, 3), [(1, 2, 4)], batch_first=True),
    seq("gru", "gru_unbatched_batch_first", 3, 4, (4, 3), [(2, 4)], num_layers=2, batch_first=True),
    seq("gru", "gru_no_bias", 3, 4, (4, 2, 3), [(1, 2, 4)], bias=False),
    seq("rnn", "rnn_tanh_2layer_given_state", 3, 4, (4, 2, 3), [(2, 2, 4)], num_layers=2),
    seq("rnn", "rnn_relu_bidirectional_batch_first", 3, 4, (2, 4, 3), batch_first=True, bidirectional=True,
        nonlinearity="relu"),
    seq("rnn", "rnn_unbatched", 3, 4, (4, 3)),
    cell("lstm_cell", "lstm_cell_given_state", 3, 4, (2, 3), [(2, 4), (2, 4)]),
    cell("lstm_cell", "lstm_cell_zero_state_unbatched", 3, 4, (3,)),
    cell("gru_cell", "gru_cell_given_state", 3, 4, (2, 3), [(2, 4)]),
    cell("gru_cell", "gru_cell_no_bias_unbatched", 3, 4, (3,), [(4,)], bias=False),
    cell("rnn_cell", "rnn_cell_tanh", 3, 4, (2, 3), [(2, 4)]),
    cell("rnn_cell", "rnn_cell_relu_zero_state", 3, 4, (2, 3), nonlinearity="relu"),
]

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rnn_reference.json")
with open(out, "w") as f:
    json.dump({"torch_version": torch.__version__, "cases": cases}, f)
print(f"wrote {len(cases)} cases to {out}")
