// A sequence classifier written against libtorch's C++ API only, as its users write one:
// token + learned positional embeddings, a TransformerEncoder, mean pooling over positions and
// a Linear head, trained with cross_entropy, AdamW and a StepLR schedule, evaluated under
// NoGradGuard. tests/port/port.sh renames it for gradring. With PORT_COMPARE=1 it runs without
// library randomness and prints every step's loss (port_compare.h).
// Data: tokens.bin (little-endian uint16) from make_port_data; each example is a window of
// kLength tokens and its label the quarter of the vocabulary its first token lies in (the
// stream mostly repeats, so the window's tokens tell its start). The program fails unless the
// held-out loss falls well below chance and the training loss falls.
// Usage: transformer_classifier <folder holding tokens.bin> [steps]
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "port_compare.h"

namespace {

constexpr int64_t kVocab = 64, kLength = 16, kModel = 32, kClasses = 4;

struct ClassifierImpl : torch::nn::Module {
  ClassifierImpl() {
    tok = register_module("tok", torch::nn::Embedding(kVocab, kModel));
    pos = register_module("pos", torch::nn::Embedding(kLength, kModel));
    encoder = register_module(
        "encoder", torch::nn::TransformerEncoder(torch::nn::TransformerEncoderOptions(
                       torch::nn::TransformerEncoderLayerOptions(kModel, 4).dim_feedforward(64).dropout(port_compare::enabled() ? 0.0 : 0.1), 2)));
    head = register_module("head", torch::nn::Linear(kModel, kClasses));
  }

  // x [N, kLength] int64 -> logits [N, kClasses].
  torch::Tensor forward(torch::Tensor x) {
    auto positions = torch::arange(x.size(1), torch::TensorOptions().dtype(torch::kLong));
    auto h = tok->forward(x) + pos->forward(positions);  // [N, L, E]
    h = encoder->forward(h.transpose(0, 1));              // libtorch's layers take [L, N, E]
    return head->forward(h.mean(0));
  }

  torch::nn::Embedding tok{nullptr}, pos{nullptr};
  torch::nn::TransformerEncoder encoder{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(Classifier);

std::vector<int64_t> read_tokens(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  TORCH_CHECK(in.good(), "cannot open ", path);
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<int64_t> tokens;
  for (size_t i = 0; i + 1 < bytes.size(); i += 2) tokens.push_back(bytes[i] | (bytes[i + 1] << 8));
  return tokens;
}

// Windows starting at first, first + stride, ...: inputs [count, kLength] and labels [count].
std::pair<torch::Tensor, torch::Tensor> windows(const std::vector<int64_t>& tokens, int64_t first, int64_t stride,
                                                int64_t count) {
  std::vector<int64_t> x, y;
  for (int64_t k = 0; k < count; ++k) {
    const int64_t s = first + k * stride;
    TORCH_CHECK(s + kLength <= static_cast<int64_t>(tokens.size()), "tokens.bin is too short");
    x.insert(x.end(), tokens.begin() + s, tokens.begin() + s + kLength);
    y.push_back(tokens[s] * kClasses / kVocab);
  }
  return {torch::tensor(x).view({count, kLength}), torch::tensor(y)};
}

// Mean loss and accuracy on held-out windows, in eval mode without a graph.
std::pair<double, double> evaluate(Classifier& model, const torch::Tensor& x, const torch::Tensor& y) {
  torch::NoGradGuard no_grad;
  model->eval();
  auto logits = model->forward(x);
  const double loss = torch::nn::functional::cross_entropy(logits, y).item<double>();
  const double accuracy = logits.argmax(1).eq(y).to(torch::kFloat64).mean().item<double>();
  model->train();
  return {loss, accuracy};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <folder holding tokens.bin> [steps]\n", argv[0]);
    return 2;
  }
  const int steps = argc > 2 ? std::atoi(argv[2]) : 60;
  torch::manual_seed(0);
  const std::vector<int64_t> tokens = read_tokens(std::string(argv[1]) + "/tokens.bin");
  auto [train_x, train_y] = windows(tokens, 0, 13, 1024);
  auto [test_x, test_y] = windows(tokens, 13 * 1024 + 7, 11, 256);

  Classifier model;
  if (port_compare::enabled()) port_compare::fix_parameters(*model);
  torch::optim::AdamW optimizer(model->parameters(), torch::optim::AdamWOptions(3e-3).weight_decay(0.01));
  torch::optim::StepLR scheduler(optimizer, /*step_size=*/steps / 2, /*gamma=*/0.5);
  if (port_compare::enabled() && port_compare::step_lr_decays_late()) scheduler.step();

  const auto [loss0, accuracy0] = evaluate(model, test_x, test_y);
  std::printf("before: held-out loss %.4f accuracy %.3f\n", loss0, accuracy0);
  const int64_t batch = 64, batches = train_x.size(0) / batch;
  double first = 0, last = 0;
  const int window = std::max(1, steps / 5);
  for (int step = 0; step < steps; ++step) {
    const int64_t b = step % batches;
    auto x = train_x.narrow(0, b * batch, batch), y = train_y.narrow(0, b * batch, batch);
    optimizer.zero_grad();
    auto loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    TORCH_CHECK(std::isfinite(loss.item<double>()), "the loss is not finite at step ", step);
    loss.backward();
    optimizer.step();
    scheduler.step();
    if (step < window) first += loss.item<double>() / window;
    if (step >= steps - window) last += loss.item<double>() / window;
    port_compare::print_loss(std::to_string(step), loss.item<double>());
    if (step % 10 == 0) std::printf("step %3d loss %.4f\n", step, loss.item<double>());
  }
  const auto [loss1, accuracy1] = evaluate(model, test_x, test_y);
  port_compare::print_loss("heldout", loss1);
  if (port_compare::enabled()) return 0;
  std::printf("after %d steps: held-out loss %.4f accuracy %.3f; training loss %.4f -> %.4f\n", steps, loss1,
              accuracy1, first, last);
  TORCH_CHECK(last < 0.7 * first, "the training loss did not fall: ", first, " -> ", last);
  TORCH_CHECK(loss1 < 0.7 * std::log(static_cast<double>(kClasses)), "the held-out loss ", loss1,
              " is not well below chance (", std::log(static_cast<double>(kClasses)), ")");
  std::printf("ok\n");
  return 0;
}
