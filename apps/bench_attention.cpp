// bench_attention: scaled_dot_product_attention forward, backward and forward + backward on
// the CPU or a CUDA device (--device), in float32, bfloat16 or float16 (--dtype), causal by
// default, at a list of sequence lengths; defaults B 16, H 12, D 64, T 512, 1024, 2048 (the
// GPU figures of issue 31). Each size is first checked against the unfused composite (matmul,
// softmax) in float64 on the CPU, at B 1, H 2 and the full length; only then is it timed:
// the median of --repeat runs of --iters back-to-back calls each, after a warm-up, the device
// synchronised around every run. Prints a table with TFLOP/s (FlashAttention's count: 4 B H
// T^2 D for the forward, halved when causal; the backward 2.5 times that), and with --json one
// JSON object as the last stdout line (bench/compare_attention.py reads it and times
// PyTorch's F.scaled_dot_product_attention on the same shapes). --impl own,cudnn times
// bfloat16/float16 on gradring's kernels and on cuDNN's fused attention in one run (auto: as the
// GRADRING_CUDNN_ATTENTION switch says); the path column says which one each row ran on.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <gradring/gradring.h>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "common/device.h"

namespace {

using gr::Tensor;

double seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Milliseconds per call: the median over `repeat` runs of `iters` calls, the device idle
// before and after each run.
double median_ms(const std::function<void()>& run, int repeat, int iters, gr::Device device) {
  auto sync = [&] {
    if (device.is_cuda()) gr::cuda::synchronize(device.index());
  };
  run();
  sync();
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    const double t0 = seconds();
    for (int it = 0; it < iters; ++it) run();
    sync();
    ms.push_back((seconds() - t0) * 1e3 / iters);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

Tensor randn_of(std::vector<int64_t> shape, uint64_t seed) {
  gr::Generator g(seed);
  return gr::randn(shape, gr::TensorOptions(gr::kFloat32), &g);
}

// Largest error of the fused op (output and gradients) in `dtype` on `device` against the
// float64 composite on the CPU, relative to the largest reference value.
double check(int64_t B, int64_t H, int64_t T, int64_t D, bool causal, gr::ScalarType dtype, gr::Device device) {
  Tensor q = randn_of({B, H, T, D}, 1), k = randn_of({B, H, T, D}, 2), v = randn_of({B, H, T, D}, 3);
  Tensor g = randn_of({B, H, T, D}, 4);
  auto grads = [&](bool fused, gr::ScalarType t, gr::Device d) {
    auto leaf = [&](const Tensor& x) { return x.to(t).to(d).detach().requires_grad_(true); };
    Tensor qq = leaf(q), kk = leaf(k), vv = leaf(v);
    Tensor out;
    if (fused) {
      out = gr::scaled_dot_product_attention(qq, kk, vv, {}, 0.0, causal);
    } else {
      Tensor s = gr::matmul(qq, kk.transpose(-2, -1)) / std::sqrt(double(D));
      if (causal) s = s.masked_fill(gr::ones({T, T}, gr::TensorOptions(t)).triu(1).gt(0), -INFINITY);
      out = gr::matmul(gr::softmax(s, -1), vv);
    }
    out.backward(g.to(t).to(d));
    return gr::TensorList{out.detach(), qq.grad(), kk.grad(), vv.grad()};
  };
  gr::TensorList a = grads(true, dtype, device), b = grads(false, gr::kFloat64, gr::Device(gr::kCPU));
  double err = 0;
  for (size_t i = 0; i < a.size(); ++i)
    err = std::max(err, (a[i].to(gr::Device(gr::kCPU)).to(gr::kFloat64) - b[i]).abs().max().item<double>() /
                            std::max(1.0, b[i].abs().max().item<double>()));
  return err;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"scaled_dot_product_attention benchmark (CPU or CUDA)"};
  std::vector<int64_t> lengths{512, 1024, 2048};
  int64_t batch = 16, heads = 12, dim = 64;
  int threads = 1, repeat = 7, iters = 0;
  bool causal = true, json = false;
  std::string device_spec = "cpu", dtype_name = "float32";
  std::vector<std::string> impls{"auto"};
  app.add_option("--device", device_spec, "cpu, cuda or cuda:N");
  app.add_option("--dtype", dtype_name, "float32, bfloat16 or float16 (also f32, bf16, f16)");
  app.add_option("--T", lengths, "sequence lengths")->delimiter(',');
  app.add_option("--B", batch, "batch size");
  app.add_option("--H", heads, "heads");
  app.add_option("--D", dim, "head dim");
  app.add_option("--threads", threads, "CPU threads (with --device cuda: all, for the references)");
  app.add_option("--repeat", repeat, "timed runs per size (median)");
  app.add_option("--iters", iters, "calls per timed run (default: 10 on CUDA, 1 on the CPU)");
  app.add_option("--causal", causal, "causal attention (default true)");
  app.add_option("--impl", impls,
                 "own (gradring's kernels), cudnn (cuDNN's fused attention; bfloat16/float16 on CUDA) or auto "
                 "(GRADRING_CUDNN_ATTENTION's choice); a list times each")
      ->delimiter(',')
      ->check(CLI::IsMember({"own", "cudnn", "auto"}));
  app.add_flag("--json", json, "print a JSON line last");
  CLI11_PARSE(app, argc, argv);
  const std::map<std::string, gr::ScalarType> dtypes{{"float32", gr::kFloat32}, {"f32", gr::kFloat32},
                                                     {"bfloat16", gr::kBFloat16}, {"bf16", gr::kBFloat16},
                                                     {"float16", gr::kFloat16}, {"f16", gr::kFloat16}};
  if (!dtypes.count(dtype_name)) {
    std::fprintf(stderr, "bench_attention: --dtype %s: expected float32, bfloat16 or float16\n", dtype_name.c_str());
    return 2;
  }
  const gr::ScalarType dtype = dtypes.at(dtype_name);
  const gr::Device device = gr::apps::pick_device(device_spec, "bench_attention");
  if (iters <= 0) iters = device.is_cuda() ? 10 : 1;
  // On a GPU the CPU only computes the float64 references: all its cores.
  gr::set_num_threads(device.is_cuda() ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) : threads);
  // The composite computes in float64; the fused op's own rounding bounds what it can reach.
  const double tolerance = dtype == gr::kFloat32 ? 1e-4 : dtype == gr::kFloat16 ? 1e-2 : 4e-2;
  for (const std::string& impl : impls)
    if (impl == "cudnn" && (!device.is_cuda() || dtype == gr::kFloat32)) {
      std::fprintf(stderr, "bench_attention: --impl cudnn needs --device cuda and --dtype bfloat16 or float16\n");
      return 2;
    }
  const std::string dt(gr::dtype_name(dtype));

  std::printf("bench_attention: gradring %s, %s, %s, %d x %d calls (median)\n", gr::kVersion, device.str().c_str(),
              dt.c_str(), repeat, iters);
  std::printf("%-4s %-4s %-6s %-4s %-6s %-5s %10s %10s %11s %9s %9s %9s %9s\n", "B", "H", "T", "D", "causal", "path",
              "fwd ms", "bwd ms", "fwd+bwd ms", "fwd TF/s", "bwd TF/s", "f+b TF/s", "max err");
  nlohmann::json rows = nlohmann::json::array();
  const bool auto_switch = gr::cuda::cudnn_sdp_enabled();
  for (int64_t T : lengths) {
    for (const std::string& impl : impls) {
      gr::cuda::enable_cudnn_sdp(impl == "auto" ? auto_switch : impl == "cudnn");
      const double err = check(1, 2, T, dim, causal, dtype, device);
      if (!(err < tolerance)) {
        std::fprintf(stderr, "bench_attention: T = %lld (%s on %s) differs from the composite by %g (tolerance %g)\n",
                     static_cast<long long>(T), dt.c_str(), device.str().c_str(), err, tolerance);
        return 1;
      }
      auto input = [&](uint64_t seed) { return randn_of({batch, heads, T, dim}, seed).to(dtype).to(device); };
      Tensor q = input(1), k = input(2), v = input(3), g = input(4);
      const uint64_t cudnn_before = gr::cuda::cudnn_sdp_calls();
      const double fwd = median_ms(
          [&] {
            gr::NoGradGuard no_grad;
            gr::scaled_dot_product_attention(q, k, v, {}, 0.0, causal);
          },
          repeat, iters, device);
      Tensor qg = q.detach().requires_grad_(true), kg = k.detach().requires_grad_(true);
      Tensor vg = v.detach().requires_grad_(true);
      Tensor out = gr::scaled_dot_product_attention(qg, kg, vg, {}, 0.0, causal);
      const double bwd = median_ms([&] { gr::autograd::grad({out}, {qg, kg, vg}, {g}, /*retain_graph=*/true); },
                                   repeat, iters, device);
      const double fwdbwd = median_ms(
          [&] {
            gr::autograd::grad({gr::scaled_dot_product_attention(qg, kg, vg, {}, 0.0, causal)}, {qg, kg, vg}, {g});
          },
          repeat, iters, device);
      // Which path the timed calls took (cuDNN refuses a shape, or the build lacks it: our kernels).
      const std::string path = gr::cuda::cudnn_sdp_calls() > cudnn_before ? "cudnn" : "own";
      if (impl != "auto" && path != impl) {
        std::fprintf(stderr,
                     "bench_attention: --impl %s ran on %s at T = %lld (cuDNN attention not built, or it refused the "
                     "shape: see its message above)\n",
                     impl.c_str(), path.c_str(), static_cast<long long>(T));
        return 1;
      }
      const double flops =
          4.0 * double(batch) * double(heads) * double(T) * double(T) * double(dim) * (causal ? 0.5 : 1);
      auto tflops = [](double f, double ms) { return f / (ms * 1e-3) / 1e12; };
      std::printf("%-4lld %-4lld %-6lld %-4lld %-6s %-5s %10.3f %10.3f %11.3f %9.3g %9.3g %9.3g %9.2g\n",
                  static_cast<long long>(batch), static_cast<long long>(heads), static_cast<long long>(T),
                  static_cast<long long>(dim), causal ? "yes" : "no", path.c_str(), fwd, bwd, fwdbwd,
                  tflops(flops, fwd), tflops(2.5 * flops, bwd), tflops(3.5 * flops, fwdbwd), err);
      rows.push_back({{"B", batch}, {"H", heads}, {"T", T}, {"D", dim}, {"causal", causal}, {"threads", threads},
                      {"dtype", dt}, {"device", device.str()}, {"impl", impl}, {"path", path}, {"fwd_ms", fwd},
                      {"bwd_ms", bwd}, {"fwdbwd_ms", fwdbwd},
                      {"fwd_tflops", tflops(flops, fwd)}, {"bwd_tflops", tflops(2.5 * flops, bwd)},
                      {"fwdbwd_tflops", tflops(3.5 * flops, fwdbwd)}, {"max_err", err}});
    }
  }
  if (json) std::cout << nlohmann::json{{"rows", rows}}.dump() << std::endl;
  return 0;
}
