// An LSTM language model written against libtorch's C++ API only, as libtorch's users write
// one (after pytorch/examples word_language_model): Embedding -> 2-layer LSTM with dropout
// between the layers -> Linear decoder, trained with Adam and cross_entropy by truncated
// back-propagation through time, the hidden state carried (detached) from batch to batch.
// tests/port/port.sh renames it for gradring. With PORT_COMPARE=1 it runs without library
// randomness and prints every step's loss (port_compare.h).
// Usage: lstm_lm <folder holding tokens.bin> [steps]
#include <torch/torch.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "port_compare.h"

using State = std::tuple<torch::Tensor, torch::Tensor>;

struct LanguageModelImpl : torch::nn::Module {
  LanguageModelImpl(int64_t vocab, int64_t embed, int64_t hidden, int64_t layers, double dropout)
      : encoder(vocab, embed),
        rnn(torch::nn::LSTMOptions(embed, hidden).num_layers(layers).dropout(dropout)),
        decoder(hidden, vocab),
        drop(dropout) {
    register_module("encoder", encoder);
    register_module("rnn", rnn);
    register_module("decoder", decoder);
    register_module("drop", drop);
  }

  // tokens [seq, batch] -> logits [seq, batch, vocab] and the final state.
  std::tuple<torch::Tensor, State> forward(const torch::Tensor& tokens, std::optional<State> state = {}) {
    // The state passed as a tuple: LSTM's optional parameter is c10::optional in libtorch 1.x.
    auto x = drop->forward(encoder->forward(tokens));
    auto [output, next] = state ? rnn->forward(x, *state) : rnn->forward(x);
    return {decoder->forward(drop->forward(output)), next};
  }

  torch::nn::Embedding encoder;
  torch::nn::LSTM rnn;
  torch::nn::Linear decoder;
  torch::nn::Dropout drop;
};
TORCH_MODULE(LanguageModel);

// tokens.bin (little-endian uint16) as a [len, batch] int64 tensor: `batch` parallel streams.
torch::Tensor batchify(const std::string& path, int64_t batch) {
  std::ifstream in(path, std::ios::binary);
  TORCH_CHECK(in.good(), "cannot open ", path);
  std::vector<int64_t> tokens;
  unsigned char bytes[2];
  while (in.read(reinterpret_cast<char*>(bytes), 2)) tokens.push_back(bytes[0] | (bytes[1] << 8));
  const int64_t len = static_cast<int64_t>(tokens.size()) / batch;
  auto data = torch::from_blob(tokens.data(), {batch, len}, torch::kInt64).clone();
  return data.t().contiguous();
}

State detach(const State& s) { return {std::get<0>(s).detach(), std::get<1>(s).detach()}; }

// Mean cross-entropy of the model's next-token predictions over windows [begin, end) of data.
double evaluate(LanguageModel& model, const torch::Tensor& data, int64_t begin, int64_t end, int64_t bptt,
                int64_t vocab) {
  torch::NoGradGuard no_grad;
  model->eval();
  double total = 0;
  int64_t windows = 0;
  std::optional<State> state;
  for (int64_t i = begin; i + bptt + 1 <= end; i += bptt, ++windows) {
    auto [logits, next] = model->forward(data.narrow(0, i, bptt), state);
    total += torch::nn::functional::cross_entropy(logits.reshape({-1, vocab}), data.narrow(0, i + 1, bptt).reshape({-1}))
                 .item<double>();
    state = next;
  }
  model->train();
  return total / static_cast<double>(windows);
}

int main(int argc, char** argv) {
  TORCH_CHECK(argc >= 2, "usage: ", argv[0], " <folder holding tokens.bin> [steps]");
  const int64_t steps = argc > 2 ? std::stoll(argv[2]) : 100;
  const int64_t vocab = 64, batch = 16, bptt = 24;
  torch::manual_seed(1);

  const torch::Tensor data = batchify(std::string(argv[1]) + "/tokens.bin", batch);
  const int64_t valid_begin = data.size(0) * 9 / 10;  // the last tenth of every stream is held out
  std::printf("data: %lld steps of %lld streams, vocabulary %lld\n", static_cast<long long>(data.size(0)),
              static_cast<long long>(batch), static_cast<long long>(vocab));

  const double dropout = port_compare::enabled() ? 0.0 : 0.1;
  LanguageModel model(vocab, /*embed=*/32, /*hidden=*/64, /*layers=*/2, dropout);
  if (port_compare::enabled()) port_compare::fix_parameters(*model);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(3e-3));
  std::cout << *model << "\n";

  const double before = evaluate(model, data, valid_begin, data.size(0), bptt, vocab);
  std::printf("validation loss before training: %.4f (uniform guess: %.4f)\n", before, std::log(double(vocab)));
  std::optional<State> state;
  double first = 0, last = 0;
  int64_t at = 0;
  for (int64_t step = 1; step <= steps; ++step) {
    if (at + bptt + 1 > valid_begin) {  // back to the start, with a fresh state
      at = 0;
      state.reset();
    }
    auto input = data.narrow(0, at, bptt), target = data.narrow(0, at + 1, bptt);
    at += bptt;
    optimizer.zero_grad();
    auto [logits, next] = model->forward(input, state);
    state = detach(next);
    auto loss = torch::nn::functional::cross_entropy(logits.reshape({-1, vocab}), target.reshape({-1}));
    loss.backward();
    torch::nn::utils::clip_grad_norm_(model->parameters(), 0.5);
    optimizer.step();
    const double value = loss.item<double>();
    TORCH_CHECK(std::isfinite(value), "the loss is not finite at step ", step);
    port_compare::print_loss(std::to_string(step), value);
    if (step == 1) first = value;
    last = value;
    if (step == 1 || step % 20 == 0) std::printf("step %4lld  loss %.4f\n", static_cast<long long>(step), value);
  }
  const double after = evaluate(model, data, valid_begin, data.size(0), bptt, vocab);
  port_compare::print_loss("validation", after);
  if (port_compare::enabled()) return EXIT_SUCCESS;
  std::printf("validation loss after %lld steps: %.4f\n", static_cast<long long>(steps), after);
  TORCH_CHECK(last < 0.6 * first, "training did not lower the loss enough: ", first, " -> ", last);
  TORCH_CHECK(after < 0.6 * before, "the validation loss did not fall enough: ", before, " -> ", after);
  return EXIT_SUCCESS;
}
