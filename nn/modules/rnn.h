// Recurrent layers as libtorch's torch/nn/modules/rnn.h: RNN, LSTM and GRU over whole
// sequences (stacked layers, both directions, batch_first, dropout between layers, LSTM
// projections, unbatched 2-D input as PyTorch's Python modules) and the one-step cells
// RNNCell, LSTMCell, GRUCell. Parameter names (weight_ih_l0, bias_hh_l1_reverse, ...), gate
// order (LSTM i, f, g, o; GRU r, z, n) and init U(-1/sqrt(hidden), 1/sqrt(hidden)) are
// PyTorch's, so state_dicts load both ways. PackedSequence is not supported.
#pragma once

#include <optional>
#include <tuple>
#include <variant>
#include <vector>

#include "nn/enum.h"
#include "nn/module.h"
#include "nn/module_holder.h"
#include "nn/options.h"

namespace gr::nn {

struct RNNOptions {
  typedef std::variant<enumtype::kTanh, enumtype::kReLU> nonlinearity_t;
  RNNOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  GR_ARG(int64_t, input_size);
  GR_ARG(int64_t, hidden_size);
  GR_ARG(int64_t, num_layers) = 1;
  GR_ARG(nonlinearity_t, nonlinearity) = kTanh;
  GR_ARG(bool, bias) = true;
  GR_ARG(bool, batch_first) = false;  // input and output [batch, seq, feature] instead of [seq, batch, feature]
  GR_ARG(double, dropout) = 0.0;      // applied to the outputs of every layer but the last, in training
  GR_ARG(bool, bidirectional) = false;
};

struct LSTMOptions {
  LSTMOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  GR_ARG(int64_t, input_size);
  GR_ARG(int64_t, hidden_size);
  GR_ARG(int64_t, num_layers) = 1;
  GR_ARG(bool, bias) = true;
  GR_ARG(bool, batch_first) = false;
  GR_ARG(double, dropout) = 0.0;
  GR_ARG(bool, bidirectional) = false;
  GR_ARG(int64_t, proj_size) = 0;  // > 0: h = W_hr (o * tanh(c)), of proj_size features
};

struct GRUOptions {
  GRUOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  GR_ARG(int64_t, input_size);
  GR_ARG(int64_t, hidden_size);
  GR_ARG(int64_t, num_layers) = 1;
  GR_ARG(bool, bias) = true;
  GR_ARG(bool, batch_first) = false;
  GR_ARG(double, dropout) = 0.0;
  GR_ARG(bool, bidirectional) = false;
};

namespace detail {

enum class RNNMode { RNN_TANH, RNN_RELU, LSTM, GRU };

// What RNN, LSTM and GRU have in common (libtorch's detail::RNNOptionsBase).
struct RNNOptionsBase {
  RNNOptionsBase(RNNMode mode, int64_t input_size, int64_t hidden_size)
      : mode_(mode), input_size_(input_size), hidden_size_(hidden_size) {}
  GR_ARG(RNNMode, mode);
  GR_ARG(int64_t, input_size);
  GR_ARG(int64_t, hidden_size);
  GR_ARG(int64_t, num_layers) = 1;
  GR_ARG(bool, bias) = true;
  GR_ARG(bool, batch_first) = false;
  GR_ARG(double, dropout) = 0.0;
  GR_ARG(bool, bidirectional) = false;
  GR_ARG(int64_t, proj_size) = 0;
};

// One layer's weights in one direction; undefined where the options leave them out.
struct RNNLayerWeights {
  Tensor w_ih, w_hh, b_ih, b_hh, w_hr;
};

class RNNImplBase : public Module {
 public:
  RNNImplBase(const RNNOptionsBase& options_base, std::string name);
  // Every parameter ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), in registration order.
  void reset_parameters();
  // cuDNN's packed weight layout; gradring keeps no such copy, so this does nothing.
  void flatten_parameters() {}
  // The parameters per layer and direction: w_ih, w_hh[, b_ih, b_hh][, w_hr].
  std::vector<Tensor> all_weights() const;
  void pretty_print(std::ostream& out) const override;

  RNNOptionsBase options_base;

 protected:
  // Checks input and states, runs every layer and direction; returns (output, h_n, c_n) in
  // the caller's layout (c_n only for LSTM). hx/cx undefined mean zeros.
  std::tuple<Tensor, Tensor, Tensor> run(const Tensor& input, const Tensor& hx, const Tensor& cx);

 private:
  std::vector<RNNLayerWeights> weights_;  // layer * num_directions + direction
};

}  // namespace detail

class RNNImpl : public detail::RNNImplBase {
 public:
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  explicit RNNImpl(const RNNOptions& options);
  // input [seq, batch, input_size] ([batch, seq, ...] with batch_first, or unbatched
  // [seq, input_size]); hx [num_layers * num_directions, batch, hidden_size] or zeros.
  // Returns (output [seq, batch, num_directions * hidden_size], h_n).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});

  RNNOptions options;
};
GR_MODULE(RNN);

class LSTMImpl : public detail::RNNImplBase {
 public:
  LSTMImpl(int64_t input_size, int64_t hidden_size) : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  explicit LSTMImpl(const LSTMOptions& options);
  // As RNN's, with the state (h_0, c_0); h has proj_size features when proj_size > 0.
  // Returns (output, (h_n, c_n)).
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& input,
                                                         std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});

  LSTMOptions options;
};
GR_MODULE(LSTM);

class GRUImpl : public detail::RNNImplBase {
 public:
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  explicit GRUImpl(const GRUOptions& options);
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});

  GRUOptions options;
};
GR_MODULE(GRU);

// ---- cells: one time step, input [batch, input_size] or unbatched [input_size] ----

struct RNNCellOptions {
  typedef std::variant<enumtype::kTanh, enumtype::kReLU> nonlinearity_t;
  RNNCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  GR_ARG(int64_t, input_size);
  GR_ARG(int64_t, hidden_size);
  GR_ARG(bool, bias) = true;
  GR_ARG(nonlinearity_t, nonlinearity) = kTanh;
};

struct LSTMCellOptions {
  LSTMCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  GR_ARG(int64_t, input_size);
  GR_ARG(int64_t, hidden_size);
  GR_ARG(bool, bias) = true;
};

struct GRUCellOptions {
  GRUCellOptions(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  GR_ARG(int64_t, input_size);
  GR_ARG(int64_t, hidden_size);
  GR_ARG(bool, bias) = true;
};

namespace detail {

class RNNCellImplBase : public Module {
 public:
  RNNCellImplBase(RNNMode mode, int64_t input_size, int64_t hidden_size, bool bias, std::string name);
  void reset_parameters();
  void pretty_print(std::ostream& out) const override;

  // weight_ih [gates * hidden, input_size], weight_hh [gates * hidden, hidden]; biases [gates * hidden].
  Tensor weight_ih, weight_hh, bias_ih, bias_hh;

 protected:
  // One step from the states (each undefined = zeros); returns (h', c') (c' only for LSTM).
  std::tuple<Tensor, Tensor> step(const Tensor& input, const Tensor& hx, const Tensor& cx) const;

  RNNMode mode_;
  int64_t input_size_, hidden_size_;
};

}  // namespace detail

class RNNCellImpl : public detail::RNNCellImplBase {
 public:
  RNNCellImpl(int64_t input_size, int64_t hidden_size) : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  explicit RNNCellImpl(const RNNCellOptions& options);
  Tensor forward(const Tensor& input, const Tensor& hx = {});

  RNNCellOptions options;
};
GR_MODULE(RNNCell);

class LSTMCellImpl : public detail::RNNCellImplBase {
 public:
  LSTMCellImpl(int64_t input_size, int64_t hidden_size) : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  explicit LSTMCellImpl(const LSTMCellOptions& options);
  // Returns (h', c').
  std::tuple<Tensor, Tensor> forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});

  LSTMCellOptions options;
};
GR_MODULE(LSTMCell);

class GRUCellImpl : public detail::RNNCellImplBase {
 public:
  GRUCellImpl(int64_t input_size, int64_t hidden_size) : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  explicit GRUCellImpl(const GRUCellOptions& options);
  Tensor forward(const Tensor& input, const Tensor& hx = {});

  GRUCellOptions options;
};
GR_MODULE(GRUCell);

}  // namespace gr::nn
