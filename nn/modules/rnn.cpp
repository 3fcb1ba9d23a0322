// RNN, LSTM, GRU and their cells, composed of differentiable ops (addmm, sigmoid, tanh, chunk,
// stack, cat), so autograd, double backward and CUDA come with the ops. See Note [RNN time loop].
#include "nn/modules/rnn.h"

#include <cmath>

#include "autograd/ops.h"
#include "core/factory.h"
#include "nn/init.h"

namespace gr::nn {

using detail::RNNLayerWeights;
using detail::RNNMode;

namespace {

// Note [RNN time loop]
// The recurrence only needs h_{t-1} @ W_hh^T step by step; the input's contribution does not
// depend on earlier steps. So each layer (and direction) first projects its whole input in ONE
// matrix product, x[T*B, in] @ W_ih^T + biases -> [T, B, gates*H], unbinds that into T steps
// (a single autograd node, Note [One node per split] in autograd/functions/splits.cpp), and
// then loops over time doing one addmm with W_hh^T (transposed once, outside the loop) plus
// the gate math. The steps' outputs are stacked once at the end. Both biases of RNN and LSTM
// are folded into the projection (they are only ever summed); GRU's b_hh stays in the loop,
// since its n part is scaled by the reset gate: n = tanh(W_in x + b_in + r * (W_hn h + b_hn)).

int64_t gates_of(RNNMode mode) { return mode == RNNMode::LSTM ? 4 : mode == RNNMode::GRU ? 3 : 1; }

const char* name_of(RNNMode mode) { return mode == RNNMode::LSTM ? "LSTM" : mode == RNNMode::GRU ? "GRU" : "RNN"; }

void check_dtype(const std::string& name, const Tensor& input, const Tensor& weight) {
  GR_CHECK(input.scalar_type() == weight.scalar_type(), name, ": input must have the type of the weights (",
           weight.scalar_type(), "), got ", input.scalar_type());
}

// x [N, in] @ W_ih^T plus the biases that can be added before the recurrence (see Note [RNN time loop]).
Tensor project_input(RNNMode mode, const Tensor& x, const RNNLayerWeights& w) {
  Tensor bias = w.b_ih;
  if (bias.defined() && mode != RNNMode::GRU) bias = w.b_ih + w.b_hh;
  return bias.defined() ? addmm(bias, x, w.w_ih.t()) : mm(x, w.w_ih.t());
}

struct State {
  Tensor h, c;  // c: LSTM only
};

// One time step from the step's input projection xw [B, gates * H]; w_hh_t = W_hh^T and
// w_hr_t = W_hr^T (LSTM projections, else undefined). Gate order as PyTorch's.
State cell_step(RNNMode mode, const Tensor& xw, const State& s, const RNNLayerWeights& w, const Tensor& w_hh_t,
                const Tensor& w_hr_t) {
  switch (mode) {
    case RNNMode::LSTM: {
      const std::vector<Tensor> g = addmm(xw, s.h, w_hh_t).chunk(4, 1);  // i, f, g, o
      Tensor c = sigmoid(g[1]) * s.c + sigmoid(g[0]) * tanh(g[2]);
      Tensor h = sigmoid(g[3]) * tanh(c);
      return {w_hr_t.defined() ? mm(h, w_hr_t) : h, c};
    }
    case RNNMode::GRU: {
      const Tensor hw = w.b_hh.defined() ? addmm(w.b_hh, s.h, w_hh_t) : mm(s.h, w_hh_t);
      const std::vector<Tensor> x = xw.chunk(3, 1), hh = hw.chunk(3, 1);  // r, z, n
      Tensor r = sigmoid(x[0] + hh[0]), z = sigmoid(x[1] + hh[1]);
      Tensor n = tanh(x[2] + r * hh[2]);
      return {n + z * (s.h - n), {}};  // (1 - z) * n + z * h
    }
    case RNNMode::RNN_TANH: return {tanh(addmm(xw, s.h, w_hh_t)), {}};
    case RNNMode::RNN_RELU: return {relu(addmm(xw, s.h, w_hh_t)), {}};
  }
  GR_ERROR("RNN: unknown mode");
}

// One direction of one layer over x [T, B, in] from state s: outputs [T, B, H_out] and the last state.
std::pair<Tensor, State> run_direction(RNNMode mode, const Tensor& x, const RNNLayerWeights& w, State s,
                                       bool reverse) {
  const int64_t T = x.size(0), B = x.size(1);
  const std::vector<Tensor> xw = project_input(mode, x.reshape({T * B, x.size(2)}), w).view({T, B, -1}).unbind(0);
  const Tensor w_hh_t = w.w_hh.t(), w_hr_t = w.w_hr.defined() ? w.w_hr.t() : Tensor();
  std::vector<Tensor> out(static_cast<size_t>(T));
  for (int64_t i = 0; i < T; ++i) {
    const int64_t t = reverse ? T - 1 - i : i;
    s = cell_step(mode, xw[t], s, w, w_hh_t, w_hr_t);
    out[t] = s.h;
  }
  return {stack(out, 0), s};
}

}  // namespace

// ---- RNN, LSTM, GRU ----

namespace detail {

RNNImplBase::RNNImplBase(const RNNOptionsBase& o, std::string name) : Module(std::move(name)), options_base(o) {
  const char* what = name_of(o.mode());
  GR_CHECK(o.dropout() >= 0 && o.dropout() <= 1, what, ": dropout should be a number in range [0, 1] representing the "
           "probability of an element being zeroed, got ", o.dropout());
  GR_CHECK(o.input_size() > 0, what, ": input_size must be greater than zero, got ", o.input_size());
  GR_CHECK(o.hidden_size() > 0, what, ": hidden_size must be greater than zero, got ", o.hidden_size());
  GR_CHECK(o.num_layers() > 0, what, ": num_layers must be greater than zero, got ", o.num_layers());
  GR_CHECK(o.proj_size() >= 0 && o.proj_size() < o.hidden_size(), what, ": proj_size has to be a positive integer, "
           "smaller than hidden_size or zero to disable projections, got ", o.proj_size());
  GR_CHECK(o.proj_size() == 0 || o.mode() == RNNMode::LSTM, what,
           ": proj_size argument is only supported for LSTM, not RNN or GRU");
  const int64_t gate_size = gates_of(o.mode()) * o.hidden_size(), directions = o.bidirectional() ? 2 : 1;
  const int64_t h_size = o.proj_size() > 0 ? o.proj_size() : o.hidden_size();
  for (int64_t layer = 0; layer < o.num_layers(); ++layer) {
    for (int64_t direction = 0; direction < directions; ++direction) {
      const int64_t in = layer == 0 ? o.input_size() : h_size * directions;
      const std::string suffix = "_l" + std::to_string(layer) + (direction == 1 ? "_reverse" : "");
      RNNLayerWeights w;
      w.w_ih = register_parameter("weight_ih" + suffix, empty({gate_size, in}));
      w.w_hh = register_parameter("weight_hh" + suffix, empty({gate_size, h_size}));
      if (o.bias()) {
        w.b_ih = register_parameter("bias_ih" + suffix, empty({gate_size}));
        w.b_hh = register_parameter("bias_hh" + suffix, empty({gate_size}));
      }
      if (o.proj_size() > 0) w.w_hr = register_parameter("weight_hr" + suffix, empty({o.proj_size(), o.hidden_size()}));
      weights_.push_back(w);
    }
  }
  reset_parameters();
}

void RNNImplBase::reset_parameters() {
  const double bound = 1.0 / std::sqrt(static_cast<double>(options_base.hidden_size()));
  for (Tensor& p : parameters()) init::uniform_(p, -bound, bound);
}

std::vector<Tensor> RNNImplBase::all_weights() const {
  std::vector<Tensor> all;
  for (const RNNLayerWeights& w : weights_)
    for (const Tensor& t : {w.w_ih, w.w_hh, w.b_ih, w.b_hh, w.w_hr})
      if (t.defined()) all.push_back(t);
  return all;
}

void RNNImplBase::pretty_print(std::ostream& out) const {
  const RNNOptionsBase& o = options_base;
  auto flag = [](bool b) { return b ? "true" : "false"; };
  out << name() << "(input_size=" << o.input_size() << ", hidden_size=" << o.hidden_size()
      << ", num_layers=" << o.num_layers() << ", bias=" << flag(o.bias()) << ", batch_first=" << flag(o.batch_first())
      << ", dropout=" << o.dropout() << ", bidirectional=" << flag(o.bidirectional());
  if (o.proj_size() > 0) out << ", proj_size=" << o.proj_size();
  out << ")";
}

std::tuple<Tensor, Tensor, Tensor> RNNImplBase::run(const Tensor& input, const Tensor& hx, const Tensor& cx) {
  const RNNOptionsBase& o = options_base;
  const RNNMode mode = o.mode();
  const std::string name = name_of(mode);
  GR_CHECK(input.dim() == 2 || input.dim() == 3, name, ": Expected input to be 2D or 3D, got ", input.dim(),
           "D instead");
  GR_CHECK(input.size(-1) == o.input_size(), name, ": input.size(-1) must be equal to input_size. Expected ",
           o.input_size(), ", got ", input.size(-1));
  check_dtype(name, input, weights_[0].w_ih);
  const bool batched = input.dim() == 3;
  // Time-major [T, B, in] from here on.
  Tensor x = !batched ? input.unsqueeze(1) : o.batch_first() ? input.transpose(0, 1) : input;
  GR_CHECK(x.size(0) > 0, name, ": Expected a sequence of at least one step, got input of shape ", input.sizes());
  const int64_t directions = o.bidirectional() ? 2 : 1, layers = o.num_layers(), B = x.size(1);
  const int64_t h_size = o.proj_size() > 0 ? o.proj_size() : o.hidden_size();

  // The initial states per layer and direction, [B, size] each (zeros when not given).
  auto initial = [&](const Tensor& s, int64_t size, const char* what) {
    if (!s.defined()) return std::vector<Tensor>(layers * directions, zeros({B, size}, x.options()));
    GR_CHECK(s.dim() == input.dim(), name, ": For ", batched ? "batched 3-D" : "unbatched 2-D", " input, ", what,
             " should also be ", batched ? "3-D" : "2-D", " but got ", s.dim(), "-D tensor");
    const std::vector<int64_t> expected =
        batched ? std::vector<int64_t>{layers * directions, B, size} : std::vector<int64_t>{layers * directions, size};
    GR_CHECK(s.sizes() == IntArrayRef(expected), name, ": Expected ", what, " size ", IntArrayRef(expected), ", got ",
             s.sizes());
    check_dtype(name, s, weights_[0].w_ih);
    return (batched ? s : s.unsqueeze(1)).unbind(0);
  };
  const bool lstm = mode == RNNMode::LSTM;
  const std::vector<Tensor> h0 = initial(hx, h_size, lstm ? "hidden[0]" : "hidden");
  const std::vector<Tensor> c0 = lstm ? initial(cx, o.hidden_size(), "hidden[1]") : std::vector<Tensor>{};

  std::vector<Tensor> h_n, c_n;
  for (int64_t layer = 0; layer < layers; ++layer) {
    std::vector<Tensor> outs;
    for (int64_t direction = 0; direction < directions; ++direction) {
      const size_t i = static_cast<size_t>(layer * directions + direction);
      auto [out, last] = run_direction(mode, x, weights_[i], {h0[i], lstm ? c0[i] : Tensor()}, direction == 1);
      outs.push_back(out);
      h_n.push_back(last.h);
      if (lstm) c_n.push_back(last.c);
    }
    x = directions == 1 ? outs[0] : cat(outs, 2);
    if (o.dropout() > 0 && is_training() && layer + 1 < layers) x = dropout(x, o.dropout(), true);
  }
  auto states = [batched](const std::vector<Tensor>& s) {
    if (s.empty()) return Tensor();
    Tensor all = stack(s, 0);
    return batched ? all : all.squeeze(1);
  };
  Tensor output = !batched ? x.squeeze(1) : o.batch_first() ? x.transpose(0, 1) : x;
  return {output, states(h_n), states(c_n)};
}

}  // namespace detail

namespace {
// The options RNN, LSTM and GRU share.
template <class Options>
detail::RNNOptionsBase base_options(RNNMode mode, const Options& o) {
  return detail::RNNOptionsBase(mode, o.input_size(), o.hidden_size())
      .num_layers(o.num_layers())
      .bias(o.bias())
      .batch_first(o.batch_first())
      .dropout(o.dropout())
      .bidirectional(o.bidirectional());
}
}  // namespace

RNNImpl::RNNImpl(const RNNOptions& o)
    : RNNImplBase(base_options(std::holds_alternative<enumtype::kReLU>(o.nonlinearity()) ? RNNMode::RNN_RELU
                                                                                         : RNNMode::RNN_TANH,
                               o),
                  "gr::nn::RNN"),
      options(o) {}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, Tensor hx) {
  auto [output, h_n, c_n] = run(input, hx, {});
  return {output, h_n};
}

LSTMImpl::LSTMImpl(const LSTMOptions& o)
    : RNNImplBase(base_options(RNNMode::LSTM, o).proj_size(o.proj_size()), "gr::nn::LSTM"),
      options(o) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(const Tensor& input,
                                                                 std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  auto [output, h_n, c_n] =
      hx_opt ? run(input, std::get<0>(*hx_opt), std::get<1>(*hx_opt)) : run(input, Tensor(), Tensor());
  return {output, {h_n, c_n}};
}

GRUImpl::GRUImpl(const GRUOptions& o)
    : RNNImplBase(base_options(RNNMode::GRU, o), "gr::nn::GRU"),
      options(o) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, Tensor hx) {
  auto [output, h_n, c_n] = run(input, hx, {});
  return {output, h_n};
}

// ---- cells ----

namespace detail {

RNNCellImplBase::RNNCellImplBase(RNNMode mode, int64_t input_size, int64_t hidden_size, bool bias, std::string name)
    : Module(std::move(name)), mode_(mode), input_size_(input_size), hidden_size_(hidden_size) {
  GR_CHECK(input_size > 0 && hidden_size > 0, this->name(), ": input_size and hidden_size must be greater than zero, got ",
           input_size, " and ", hidden_size);
  const int64_t gate_size = gates_of(mode) * hidden_size;
  weight_ih = register_parameter("weight_ih", empty({gate_size, input_size}));
  weight_hh = register_parameter("weight_hh", empty({gate_size, hidden_size}));
  if (bias) {
    bias_ih = register_parameter("bias_ih", empty({gate_size}));
    bias_hh = register_parameter("bias_hh", empty({gate_size}));
  }
  reset_parameters();
}

void RNNCellImplBase::reset_parameters() {
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size_));
  for (Tensor& p : parameters()) init::uniform_(p, -bound, bound);
}

void RNNCellImplBase::pretty_print(std::ostream& out) const {
  out << name() << "(" << input_size_ << ", " << hidden_size_;
  if (!bias_ih.defined()) out << ", bias=false";
  if (mode_ == RNNMode::RNN_RELU) out << ", nonlinearity=kReLU";
  out << ")";
}

std::tuple<Tensor, Tensor> RNNCellImplBase::step(const Tensor& input, const Tensor& hx, const Tensor& cx) const {
  const std::string op = std::string(name_of(mode_)) + "Cell";
  GR_CHECK(input.dim() == 1 || input.dim() == 2, op, ": Expected input to be 1D or 2D, got ", input.dim(), "D instead");
  GR_CHECK(input.size(-1) == input_size_, op, ": input has inconsistent input_size: got ", input.size(-1),
           " expected ", input_size_);
  check_dtype(op, input, weight_ih);
  const bool batched = input.dim() == 2;
  const Tensor x = batched ? input : input.unsqueeze(0);
  auto state = [&](const Tensor& s, const char* what) {
    if (!s.defined()) return zeros({x.size(0), hidden_size_}, x.options());
    const std::vector<int64_t> expected =
        batched ? std::vector<int64_t>{x.size(0), hidden_size_} : std::vector<int64_t>{hidden_size_};
    GR_CHECK(s.sizes() == IntArrayRef(expected), op, ": Expected ", what, " size ", IntArrayRef(expected),
             " (batch and hidden_size of the input's), got ", s.sizes());
    check_dtype(op, s, weight_ih);
    return batched ? s : s.unsqueeze(0);
  };
  const bool lstm = mode_ == RNNMode::LSTM;
  const RNNLayerWeights w{weight_ih, weight_hh, bias_ih, bias_hh, {}};
  const State s = cell_step(mode_, project_input(mode_, x, w),
                            {state(hx, lstm ? "hx[0]" : "hidden"), lstm ? state(cx, "hx[1]") : Tensor()}, w,
                            weight_hh.t(), {});
  if (batched) return {s.h, s.c};
  return {s.h.squeeze(0), lstm ? s.c.squeeze(0) : Tensor()};
}

}  // namespace detail

RNNCellImpl::RNNCellImpl(const RNNCellOptions& o)
    : RNNCellImplBase(std::holds_alternative<enumtype::kReLU>(o.nonlinearity()) ? RNNMode::RNN_RELU : RNNMode::RNN_TANH,
                      o.input_size(), o.hidden_size(), o.bias(), "gr::nn::RNNCell"),
      options(o) {}

Tensor RNNCellImpl::forward(const Tensor& input, const Tensor& hx) { return std::get<0>(step(input, hx, {})); }

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& o)
    : RNNCellImplBase(RNNMode::LSTM, o.input_size(), o.hidden_size(), o.bias(), "gr::nn::LSTMCell"), options(o) {}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  return hx_opt ? step(input, std::get<0>(*hx_opt), std::get<1>(*hx_opt)) : step(input, {}, {});
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& o)
    : RNNCellImplBase(RNNMode::GRU, o.input_size(), o.hidden_size(), o.bias(), "gr::nn::GRUCell"), options(o) {}

Tensor GRUCellImpl::forward(const Tensor& input, const Tensor& hx) { return std::get<0>(step(input, hx, {})); }

}  // namespace gr::nn
