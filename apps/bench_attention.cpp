// bench_attention: scaled_dot_product_attention forward and forward + backward on the CPU
// (float32, causal by default) at a list of sequence lengths. Each size is first checked
// against the unfused composite (matmul, softmax) in float64; only then is it timed (median
// of --repeat runs after a warm-up). Prints a table, and with --json one JSON object as the
// last stdout line (bench/compare_attention.py reads it and times PyTorch's
// F.scaled_dot_product_attention on the same shapes).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <gradring/gradring.h>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

using gr::Tensor;

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median_ms(const std::function<void()>& run, int repeat) {
  run();
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    const double t0 = seconds();
    run();
    ms.push_back((seconds() - t0) * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

Tensor randn_of(std::vector<int64_t> shape, uint64_t seed) {
  gr::Generator g(seed);
  return gr::randn(shape, gr::TensorOptions(gr::kFloat32), &g);
}

// Largest error of the fused float32 op (output and gradients) against the float64
// composite, relative to the largest reference value.
double check(int64_t B, int64_t H, int64_t T, int64_t D, bool causal) {
  Tensor q = randn_of({B, H, T, D}, 1), k = randn_of({B, H, T, D}, 2), v = randn_of({B, H, T, D}, 3);
  Tensor g = randn_of({B, H, T, D}, 4);
  auto grads = [&](bool fused, gr::ScalarType t) {
    Tensor qq = q.to(t, false, true).requires_grad_(true), kk = k.to(t, false, true).requires_grad_(true);
    Tensor vv = v.to(t, false, true).requires_grad_(true);
    Tensor out;
    if (fused) {
      out = gr::scaled_dot_product_attention(qq, kk, vv, {}, 0.0, causal);
    } else {
      Tensor s = gr::matmul(qq, kk.transpose(-2, -1)) / std::sqrt(double(D));
      if (causal) s = s.masked_fill(gr::ones({T, T}, gr::TensorOptions(t)).triu(1).gt(0), -INFINITY);
      out = gr::matmul(gr::softmax(s, -1), vv);
    }
    out.backward(g.to(t));
    return gr::TensorList{out.detach(), qq.grad(), kk.grad(), vv.grad()};
  };
  gr::TensorList a = grads(true, gr::kFloat32), b = grads(false, gr::kFloat64);
  double err = 0;
  for (size_t i = 0; i < a.size(); ++i)
    err = std::max(err, (a[i].to(gr::kFloat64) - b[i]).abs().max().item<double>() /
                            std::max(1.0, b[i].abs().max().item<double>()));
  return err;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"scaled_dot_product_attention CPU benchmark"};
  std::vector<int64_t> lengths{256, 512, 1024};
  int64_t batch = 1, heads = 8, dim = 64;
  int threads = 1, repeat = 7;
  bool causal = true, json = false;
  app.add_option("--T", lengths, "sequence lengths")->delimiter(',');
  app.add_option("--B", batch, "batch size");
  app.add_option("--H", heads, "heads");
  app.add_option("--D", dim, "head dim");
  app.add_option("--threads", threads, "CPU threads");
  app.add_option("--repeat", repeat, "timed runs per size (median)");
  app.add_option("--causal", causal, "causal attention (default true)");
  app.add_flag("--json", json, "print a JSON line last");
  CLI11_PARSE(app, argc, argv);
  gr::set_num_threads(threads);

  nlohmann::json rows = nlohmann::json::array();
  std::printf("%-6s %-4s %-6s %-5s %-7s %12s %14s %10s\n", "B", "H", "T", "D", "causal", "fwd ms", "fwd+bwd ms",
              "max err");
  for (int64_t T : lengths) {
    const double err = check(batch, heads, std::min<int64_t>(T, 512), dim, causal);
    if (!(err < 1e-4)) {
      std::fprintf(stderr, "bench_attention: T = %lld differs from the composite by %g\n", static_cast<long long>(T), err);
      return 1;
    }
    Tensor q = randn_of({batch, heads, T, dim}, 1), k = randn_of({batch, heads, T, dim}, 2);
    Tensor v = randn_of({batch, heads, T, dim}, 3), g = randn_of({batch, heads, T, dim}, 4);
    const double fwd = median_ms([&] { gr::scaled_dot_product_attention(q, k, v, {}, 0.0, causal); }, repeat);
    Tensor qg = q.clone().requires_grad_(true), kg = k.clone().requires_grad_(true), vg = v.clone().requires_grad_(true);
    const double fwdbwd = median_ms(
        [&] {
          gr::autograd::grad({gr::scaled_dot_product_attention(qg, kg, vg, {}, 0.0, causal)}, {qg, kg, vg}, {g});
        },
        repeat);
    std::printf("%-6lld %-4lld %-6lld %-5lld %-7s %12.3f %14.3f %10.2g\n", static_cast<long long>(batch),
                static_cast<long long>(heads), static_cast<long long>(T), static_cast<long long>(dim),
                causal ? "yes" : "no", fwd, fwdbwd, err);
    rows.push_back({{"B", batch}, {"H", heads}, {"T", T}, {"D", dim}, {"causal", causal}, {"threads", threads},
                    {"fwd_ms", fwd}, {"fwdbwd_ms", fwdbwd}, {"max_err", err}});
  }
  if (json) std::cout << nlohmann::json{{"rows", rows}}.dump() << std::endl;
  return 0;
}
