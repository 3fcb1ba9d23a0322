// bench_resnet_ops: where ResNet-18's training step (apps/common/resnet.h, batch 32, 3x32x32,
// SGD with momentum, as bench_ddp runs it) spends its time on the CPU, op by op and layer
// shape by layer shape: each convolution's forward, input gradient and weight gradient
// (native kernels, no autograd), batch norm, ReLU, the residual add, pooling, the classifier
// head, the optimizer step and zero_grad (through autograd, as the model calls them), then
// whole steps with the profiler's per-op table. Each row is the best of --repeat runs;
// "per step" multiplies by how often the step runs it. bench/compare_resnet_ops.py runs the
// same rows in PyTorch and prints both side by side.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <gradring/gradring.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/cli.h"
#include "common/resnet.h"

using namespace gr;

namespace {

struct Row {
  std::string section, name, shape;
  int count;  // times per training step
  double ms;  // best single run
};

// Best wall time of fn over at least `repeat` runs (and at least 0.2 s in all), after one warm-up.
double best_ms(int repeat, const std::function<void()>& fn) {
  fn();
  double best = 1e30, total = 0;
  for (int i = 0; i < repeat || (total < 200 && i < 50 * repeat); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, ms), total += ms;
  }
  return best;
}

// One convolution of ResNet-18 at batch N: its name, how often a step runs it, and its geometry.
struct ConvLayer {
  const char* name;
  int count;
  int64_t C_in, C_out, H, k, stride, pad;
  bool input_grad;  // false for the stem (the images need no gradient)
};

std::string conv_label(const ConvLayer& l, int64_t N) {
  const int64_t Ho = (l.H + 2 * l.pad - l.k) / l.stride + 1;
  return std::to_string(N) + "x" + std::to_string(l.C_in) + "x" + std::to_string(l.H) + "x" + std::to_string(l.H) +
         ",w" + std::to_string(l.C_out) + "x" + std::to_string(l.k) + "x" + std::to_string(l.k) + "/s" +
         std::to_string(l.stride) + "->" + std::to_string(Ho) + "x" + std::to_string(Ho);
}

// Rows for each convolution: forward, input gradient, weight gradient, and both gradients in
// one call (what the step's backward runs).
void conv_rows(std::vector<Row>& rows, const std::vector<ConvLayer>& layers, int64_t N, int repeat,
               const std::string& filter) {
  Generator gen(1);
  for (const ConvLayer& l : layers) {
    if (std::string(l.name).find(filter) == std::string::npos) continue;
    Tensor x = randn({N, l.C_in, l.H, l.H}, &gen), w = randn({l.C_out, l.C_in, l.k, l.k}, &gen);
    const int64_t Ho = (l.H + 2 * l.pad - l.k) / l.stride + 1;
    Tensor gy = randn({N, l.C_out, Ho, Ho}, &gen);
    const std::string s = conv_label(l, N);
    auto add = [&](const char* what, std::function<void()> fn) {
      rows.push_back({"conv", std::string(l.name) + " " + what, s, l.count, best_ms(repeat, fn)});
    };
    // The kernels themselves: no autograd (nothing requires grad), the gradients through ATen's
    // convolution_backward.
    auto backward = [&](bool input_grad, bool weight_grad) {
      convolution_backward(gy, x, w, std::nullopt, {l.stride}, {l.pad}, {1}, false, {0}, 1,
                           {input_grad, weight_grad, false});
    };
    add("fwd", [&] { conv2d(x, w, {}, {l.stride}, {l.pad}); });
    if (l.input_grad) add("grad_input", [&] { backward(true, false); });
    add("grad_weight", [&] { backward(false, true); });
    add("bwd", [&] { backward(l.input_grad, true); });
  }
}

// The other ops, through autograd as the model calls them: forward alone, and forward + backward.
void other_rows(std::vector<Row>& rows, int64_t N, int repeat) {
  Generator gen(2);
  auto add_pair = [&](const std::string& name, const std::string& shape, int count, std::function<Tensor()> fwd,
                      const Tensor& grad) {
    const double f = best_ms(repeat, [&] { fwd(); });
    const double fb = best_ms(repeat, [&] { fwd().backward(grad); });
    rows.push_back({"other", name + " fwd", shape, count, f});
    rows.push_back({"other", name + " bwd", shape, count, std::max(0.0, fb - f)});
  };
  auto dims = [](const Tensor& t) {
    std::string s;
    for (int64_t d : t.sizes()) s += (s.empty() ? "" : "x") + std::to_string(d);
    return s;
  };
  // (channels, spatial, batch norms / ReLUs / adds per step at that shape)
  struct Act {
    int64_t C, H;
    int bn, relu, add;
  };
  for (const Act& s : {Act{64, 16, 1, 1, 0}, Act{64, 8, 4, 4, 2}, Act{128, 4, 5, 4, 2}, Act{256, 2, 5, 4, 2},
                       Act{512, 1, 5, 4, 2}}) {
    Tensor x = randn({N, s.C, s.H, s.H}, &gen).requires_grad_(true), g = randn({N, s.C, s.H, s.H}, &gen);
    Tensor wt = ones({s.C}).requires_grad_(true), b = zeros({s.C}).requires_grad_(true);
    Tensor rm = zeros({s.C}), rv = ones({s.C});
    add_pair("batch_norm", dims(x), s.bn, [&] { return batch_norm(x, wt, b, rm, rv, true, 0.1, 1e-5); }, g);
    // relu_ on a fresh non-leaf, as the model applies it to batch norm's output (minus the "mul" row).
    add_pair("relu_", dims(x), s.relu, [&] { return (x * 1.0).relu_(); }, g);
    add_pair("mul (relu_'s input, subtract)", dims(x), 0, [&] { return x * 1.0; }, g);
    Tensor z = randn({N, s.C, s.H, s.H}, &gen).requires_grad_(true);
    add_pair("add", dims(x), s.add, [&] { return x + z; }, g);
  }
  {
    Tensor x = randn({N, 64, 16, 16}, &gen).requires_grad_(true), g = randn({N, 64, 8, 8}, &gen);
    add_pair("max_pool2d 3x3/2", dims(x), 1, [&] { return max_pool2d(x, {3, 3}, {2, 2}, {1, 1}); }, g);
  }
  {
    Tensor x = randn({N, 512, 1, 1}, &gen).requires_grad_(true), g = randn({N, 512, 1, 1}, &gen);
    add_pair("adaptive_avg_pool2d", dims(x), 1, [&] { return adaptive_avg_pool2d(x, {1, 1}); }, g);
  }
  {
    Tensor x = randn({N, 512}, &gen).requires_grad_(true), w = randn({10, 512}, &gen).requires_grad_(true);
    Tensor b = randn({10}, &gen).requires_grad_(true), y = randint(0, 10, {N}, kInt64, &gen);
    add_pair("linear+log_softmax+nll_loss", dims(x), 1, [&] { return nll_loss(log_softmax(linear(x, w, b), 1), y); },
             Tensor());
  }
}

// The optimizer step, zero_grad and whole steps of the model itself.
void model_rows(std::vector<Row>& rows, int64_t N, int repeat, int steps, bool show_profile) {
  Generator gen(3);
  manual_seed(1);
  apps::ResNet18 model(3, 10);
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.01).momentum(0.9));
  Tensor x = randn({N, 3, 32, 32}, &gen), y = randint(0, 10, {N}, kInt64, &gen);
  auto step = [&] {
    opt.zero_grad();
    nll_loss(model(x), y).backward();
    opt.step();
  };
  step();
  rows.push_back({"model", "SGD step (momentum 0.9)", "11.2M params", 1, best_ms(repeat, [&] { opt.step(); })});
  rows.push_back({"model", "zero_grad", "62 tensors", 1, best_ms(repeat, [&] { opt.zero_grad(); })});
  rows.push_back({"model", "forward", "", 1, best_ms(repeat, [&] { model(x); })});
  std::vector<double> times;
  for (int i = 0; i < steps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    step();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  rows.push_back({"model", "step (median)", "", 1, times[times.size() / 2]});
  rows.push_back({"model", "step (best)", "", 1, times.front()});
  if (show_profile) {
    profiler::reset();
    profiler::enable();
    for (int i = 0; i < 5; ++i) step();
    profiler::enable(false);
    std::printf("profile of 5 steps:\n%s\n", profiler::table(60).c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bench_resnet_ops: ResNet-18's training step on the CPU, op by op and shape by shape"};
  int repeat = 10, steps = 10, threads = 1;
  int64_t batch = 32;
  std::string conv_algorithm = "auto", only, layer;
  bool json = false, profile = false;
  app.add_option("--repeat", repeat, "timed runs per row (the best is kept)")->capture_default_str()->check(apps::positive());
  app.add_option("--steps", steps, "timed whole training steps")->capture_default_str()->check(apps::positive());
  app.add_option("--threads", threads, "CPU threads")->capture_default_str()->check(apps::positive());
  app.add_option("--batch", batch, "batch size")->capture_default_str()->check(apps::positive());
  app.add_option("--conv-algorithm", conv_algorithm, "CPU conv2d algorithm: auto, im2col, winograd, direct or dense")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "im2col", "winograd", "direct", "dense"}));
  app.add_option("--only", only, "sections to run: conv, other, model (comma-separated; default all)");
  app.add_option("--layer", layer, "only the convolutions whose name contains this (e.g. 'layer3 3x3')");
  app.add_flag("--profile", profile, "print the profiler's per-op table of 5 steps");
  app.add_flag("--json", json, "print the rows as one JSON array instead of a table");
  CLI11_PARSE(app, argc, argv);
  set_num_threads(threads);
  using backends::cpu::Conv2dAlgorithm;
  backends::cpu::set_conv2d_algorithm(conv_algorithm == "im2col"     ? Conv2dAlgorithm::kIm2col
                                   : conv_algorithm == "winograd" ? Conv2dAlgorithm::kWinograd
                                   : conv_algorithm == "direct"   ? Conv2dAlgorithm::kDirect
                                   : conv_algorithm == "dense"    ? Conv2dAlgorithm::kDense
                                                                  : Conv2dAlgorithm::kAuto);
  auto wanted = [&](const char* s) { return only.empty() || only.find(s) != std::string::npos; };
  // ResNet-18 at 3x32x32: stem to 16x16, max-pool to 8x8, then 8x8, 4x4, 2x2, 1x1 stages.
  const std::vector<ConvLayer> layers = {
      {"stem 7x7/2", 1, 3, 64, 32, 7, 2, 3, false},     {"layer1 3x3", 4, 64, 64, 8, 3, 1, 1, true},
      {"layer2.0.conv1 3x3/2", 1, 64, 128, 8, 3, 2, 1, true}, {"layer2 3x3", 3, 128, 128, 4, 3, 1, 1, true},
      {"layer2 downsample 1x1/2", 1, 64, 128, 8, 1, 2, 0, true}, {"layer3.0.conv1 3x3/2", 1, 128, 256, 4, 3, 2, 1, true},
      {"layer3 3x3", 3, 256, 256, 2, 3, 1, 1, true},      {"layer3 downsample 1x1/2", 1, 128, 256, 4, 1, 2, 0, true},
      {"layer4.0.conv1 3x3/2", 1, 256, 512, 2, 3, 2, 1, true}, {"layer4 3x3", 3, 512, 512, 1, 3, 1, 1, true},
      {"layer4 downsample 1x1/2", 1, 256, 512, 2, 1, 2, 0, true}};
  std::vector<Row> rows;
  if (wanted("conv")) conv_rows(rows, layers, batch, repeat, layer);
  if (wanted("other")) other_rows(rows, batch, repeat);
  if (wanted("model")) model_rows(rows, batch, repeat, steps, profile && !json);
  if (json) {
    nlohmann::json out = nlohmann::json::array();
    for (const Row& r : rows)
      out.push_back({{"section", r.section}, {"name", r.name}, {"shape", r.shape}, {"count", r.count}, {"ms", r.ms}});
    std::printf("%s\n", out.dump().c_str());
    return 0;
  }
  std::printf("%-36s %-34s %5s %9s %10s\n", "op", "shape", "count", "ms", "per step");
  double total = 0;
  for (const Row& r : rows) {
    std::printf("%-36s %-34s %5d %9.3f %10.3f\n", r.name.c_str(), r.shape.c_str(), r.count, r.ms, r.ms * r.count);
    // The conv rows' gradients are counted once, in the fused bwd row.
    if (r.section != "model" && r.name.find("grad_") == std::string::npos) total += r.ms * r.count;
  }
  std::printf("sum of the fwd and bwd rows x count: %.1f ms\n", total);
  return 0;
}
