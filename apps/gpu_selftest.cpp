// gpu_selftest: runs every CUDA op family on random inputs and compares it with the CPU
// result (per-op tolerance), then, with two or more GPUs and NCCL, every collective of the
// NCCL process group (one process per GPU). Prints one table row per check. Without a CUDA
// device it says so and exits 77 (ctest's "skipped"). See docs/cuda.md.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <gradring/gradring.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "distributed/backends/init.h"
#include "distributed/launch/launcher.h"

using namespace gr;

namespace {

constexpr int kSkipped = 77;

struct Tol {
  double rtol, atol;
};

// One check: f runs on the CPU inputs and on their CUDA copies; every output must agree.
struct Check {
  std::string family, name;
  std::function<TensorList()> inputs;
  std::function<TensorList(const TensorList&)> f;
  Tol tol;
};

struct Row {
  std::string family, name;
  int64_t elements = 0;
  double max_abs = 0, max_rel = 0;
  Tol tol{};
  bool ok = false;
  double cpu_ms = 0, cuda_ms = 0;
  std::string error;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

Tensor randn_(IntArrayRef shape, uint64_t seed, ScalarType dtype = kFloat32) {
  Generator g(seed);
  return randn(shape, TensorOptions(dtype), &g);
}

std::vector<double> values(const Tensor& t) {
  Tensor c = t.to(Device(kCPU)).to(kFloat64).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

// Compares CUDA outputs with CPU outputs: |cuda - cpu| <= atol + rtol * |cpu| everywhere.
void compare(const TensorList& got, const TensorList& want, Row& row) {
  row.ok = got.size() == want.size();
  if (!row.ok) row.error = "different number of outputs";
  for (size_t k = 0; k < got.size() && k < want.size(); ++k) {
    if (!got[k].defined() && !want[k].defined()) continue;
    if (!got[k].defined() || !want[k].defined() || got[k].sizes() != want[k].sizes()) {
      row.ok = false;
      row.error = "output " + std::to_string(k) + ": shape or presence differs";
      continue;
    }
    if (!got[k].is_cuda()) {
      row.ok = false;
      row.error = "output " + std::to_string(k) + " is not on the GPU";
    }
    const std::vector<double> g = values(got[k]), w = values(want[k]);
    row.elements += static_cast<int64_t>(g.size());
    for (size_t i = 0; i < g.size(); ++i) {
      if (g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i]))) continue;
      const double d = std::fabs(g[i] - w[i]);
      row.max_abs = std::max(row.max_abs, std::isnan(d) ? INFINITY : d);
      row.max_rel = std::max(row.max_rel, d / std::max(std::fabs(w[i]), 1e-30));
      if (!(d <= row.tol.atol + row.tol.rtol * std::fabs(w[i]))) row.ok = false;
    }
  }
}

// Times the CPU and the CUDA computation of one check and compares their outputs; an
// exception fails the row with its message.
void run_both(Row& row, const std::function<TensorList()>& on_cpu, const std::function<TensorList()>& on_cuda) {
  try {
    auto t0 = std::chrono::steady_clock::now();
    TensorList want = on_cpu();
    row.cpu_ms = ms_since(t0);
    t0 = std::chrono::steady_clock::now();
    TensorList got = on_cuda();
    cuda::synchronize();
    row.cuda_ms = ms_since(t0);
    compare(got, want, row);
  } catch (const std::exception& e) {
    row.ok = false;
    row.error = e.what();
  }
}

Row run_check(const Check& c, Device device) {
  Row row;
  row.family = c.family;
  row.name = c.name;
  row.tol = c.tol;
  TensorList cpu_in, cuda_in;
  try {
    cpu_in = c.inputs();
    for (const Tensor& t : cpu_in) {
      Tensor d = t.to(device);
      if (t.requires_grad()) d = d.detach().requires_grad_(true);
      cuda_in.push_back(d);
    }
  } catch (const std::exception& e) {
    row.error = e.what();
    return row;
  }
  run_both(row, [&] { return c.f(cpu_in); }, [&] { return c.f(cuda_in); });
  return row;
}

// Forward value plus the gradients of every input that requires grad, for a scalar-reduced f.
std::function<TensorList(const TensorList&)> with_grads(std::function<Tensor(const TensorList&)> f) {
  return [f](const TensorList& in) {
    Tensor y = f(in);
    Tensor gy = randn_(y.sizes(), 99, y.scalar_type()).to(y.device());
    y.backward(gy);
    TensorList out{y.detach()};
    for (const Tensor& t : in)
      if (t.requires_grad()) out.push_back(t.grad());
    return out;
  };
}

Tensor grad_input(IntArrayRef shape, uint64_t seed, ScalarType dtype = kFloat32) {
  return randn_(shape, seed, dtype).requires_grad_(true);
}

std::vector<Check> op_checks() {
  const Tol f32{1e-5, 1e-6}, f32_reduce{1e-4, 1e-5}, f64{1e-12, 1e-13}, exact{0, 0};
  std::vector<Check> c;
  // Element-wise with broadcasting and strided (transposed) inputs.
  c.push_back({"elementwise", "add/mul/div broadcast f32 [64,1,33]x[1,17,33]",
               [] { return TensorList{randn_({64, 1, 33}, 1), randn_({1, 17, 33}, 2)}; },
               [](const TensorList& x) { return TensorList{x[0] + x[1], x[0] * x[1], x[0] / (x[1].abs() + 1)}; }, f32});
  c.push_back({"elementwise", "exp/log/tanh/sigmoid/relu f32 transposed [300,200]",
               [] { return TensorList{randn_({200, 300}, 3).t()}; },
               [](const TensorList& x) {
                 return TensorList{x[0].exp(), (x[0].abs() + 1).log(), x[0].tanh(), x[0].sigmoid(), relu(x[0])};
               },
               f32});
  c.push_back({"elementwise", "pow/maximum/where f64 [1000]", [] { return TensorList{randn_({1000}, 4, kFloat64), randn_({1000}, 5, kFloat64)}; },
               [](const TensorList& x) {
                 return TensorList{x[0].abs().pow(1.5), maximum(x[0], x[1]), where(x[0].gt(x[1]), x[0], x[1])};
               },
               f64});
  c.push_back({"convert", "f32 -> f16, bf16, f64, int64 and back [4099]",
               [] { return TensorList{randn_({4099}, 6)}; },
               [](const TensorList& x) {
                 return TensorList{x[0].to(kFloat16).to(kFloat32), x[0].to(kBFloat16).to(kFloat32), x[0].to(kFloat64),
                                   (x[0] * 100).to(kInt64)};
               },
               exact});
  c.push_back({"reduce", "sum/mean/max/argmax f32 [257,1031] dims 0,1",
               [] { return TensorList{randn_({257, 1031}, 7)}; },
               [](const TensorList& x) {
                 auto [m, i] = max(x[0], 1);
                 return TensorList{sum(x[0], {0}), mean(x[0], {1}), x[0].sum(), m, i, argmax(x[0], 0)};
               },
               f32_reduce});
  c.push_back({"gemm", "mm f32 [511,257]x[257,383] (cuBLAS)", [] { return TensorList{randn_({511, 257}, 8), randn_({257, 383}, 9)}; },
               [](const TensorList& x) { return TensorList{mm(x[0], x[1]), mm(x[0].t().contiguous().t(), x[1])}; }, f32_reduce});
  c.push_back({"gemm", "bmm f64 [12,65,33]x[12,33,47] (strided batched)",
               [] { return TensorList{randn_({12, 65, 33}, 10, kFloat64), randn_({12, 33, 47}, 11, kFloat64)}; },
               [](const TensorList& x) { return TensorList{bmm(x[0], x[1])}; }, f64});
  c.push_back({"conv2d", "fwd+bwd f32 [8,16,15,15] w[32,16,3,3] pad 1 stride 2 +bias",
               [] { return TensorList{grad_input({8, 16, 15, 15}, 12), grad_input({32, 16, 3, 3}, 13), grad_input({32}, 14)}; },
               with_grads([](const TensorList& x) { return conv2d(x[0], x[1], x[2], 2, 1); }), f32_reduce});
  c.push_back({"conv2d", "fwd+bwd f64 [2,4,9,9] w[6,2,3,3] groups 2 dilation 2",
               [] {
                 return TensorList{grad_input({2, 4, 9, 9}, 15, kFloat64), grad_input({6, 2, 3, 3}, 16, kFloat64)};
               },
               with_grads([](const TensorList& x) { return conv2d(x[0], x[1], {}, 1, 0, 2, 2); }), f64});
  c.push_back({"pooling", "max_pool2d 3x3/2 pad 1 fwd+bwd f32 [4,8,17,17]",
               [] { return TensorList{grad_input({4, 8, 17, 17}, 17)}; },
               with_grads([](const TensorList& x) { return max_pool2d(x[0], {3, 3}, {2, 2}, {1, 1}); }), exact});
  c.push_back({"pooling", "avg_pool2d 2x2 + adaptive_avg_pool2d 3x3 fwd+bwd f32",
               [] { return TensorList{grad_input({4, 8, 16, 16}, 18)}; },
               with_grads([](const TensorList& x) { return adaptive_avg_pool2d(avg_pool2d(x[0], {2, 2}), {3, 3}); }), f32});
  c.push_back({"batch_norm", "training fwd+bwd f32 [16,32,9,9] + running stats",
               [] {
                 return TensorList{grad_input({16, 32, 9, 9}, 19), grad_input({32}, 20), grad_input({32}, 21),
                                   zeros({32}), ones({32})};
               },
               [](const TensorList& x) {
                 Tensor rm = x[3].clone(), rv = x[4].clone();
                 Tensor y = batch_norm(x[0], x[1], x[2], rm, rv, true);
                 y.backward(randn_(y.sizes(), 99).to(y.device()));
                 return TensorList{y.detach(), x[0].grad(), x[1].grad(), x[2].grad(), rm, rv};
               },
               f32_reduce});
  c.push_back({"softmax", "log_softmax + softmax fwd+bwd f32 [128,1000] and [4,5,3] dim 1",
               [] { return TensorList{grad_input({128, 1000}, 22), grad_input({4, 5, 3}, 23)}; },
               with_grads([](const TensorList& x) { return log_softmax(x[0], 1).sum() + softmax(x[1], 1).sum(); }), f32_reduce});
  c.push_back({"loss", "cross_entropy fwd+bwd f32 [256,10]",
               [] {
                 Generator g(24);
                 return TensorList{grad_input({256, 10}, 25), randint(0, 10, {256}, kInt64, &g)};
               },
               with_grads([](const TensorList& x) { return cross_entropy(x[0], x[1]); }), f32_reduce});
  c.push_back({"random", "dropout p=0.3 mask and values f32 [10007] (same Philox stream)",
               [] { return TensorList{randn_({10007}, 26)}; },
               [](const TensorList& x) {
                 Generator g(27);
                 return TensorList{dropout(x[0], 0.3, true, &g)};
               },
               exact});
  c.push_back({"random", "uniform fill f32 [4096] (same Philox stream)", [] { return TensorList{zeros({4096})}; },
               [](const TensorList& x) {
                 Generator g(28);
                 return TensorList{rand(x[0].sizes(), TensorOptions(kFloat32).device(x[0].device()), &g)};
               },
               exact});
  return c;
}

// A few optimizer steps of a small model on each device: the parameters must agree.
Row optimizer_check(const std::string& name, Device device,
                    const std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>& make) {
  Row row;
  row.family = "optimizer";
  row.name = name + ": 3 steps of a 2-layer MLP";
  row.tol = {1e-4, 1e-6};
  auto train = [&](Device d) {
    manual_seed(31);
    nn::Sequential net(nn::Linear(20, 32), nn::ReLU(), nn::Linear(32, 4));
    net->to(d);
    auto opt = make(net->parameters());
    Tensor x = randn_({64, 20}, 32).to(d), y = randn_({64, 4}, 33).to(d);
    for (int i = 0; i < 3; ++i) {
      opt->zero_grad();
      mse_loss(net->forward(x), y).backward();
      opt->step();
    }
    return net->parameters();
  };
  run_both(row, [&] { return train(Device(kCPU)); }, [&] { return train(device); });
  return row;
}

void print_row(const Row& r) {
  std::printf("%-12s %-66s %9lld %10.2e %10.2e %10.1e %8.2f %8.2f  %s\n", r.family.c_str(), r.name.c_str(),
              static_cast<long long>(r.elements), r.max_abs, r.max_rel, r.tol.rtol, r.cpu_ms, r.cuda_ms,
              r.ok ? "ok" : ("FAIL " + r.error).c_str());
  std::fflush(stdout);
}

// One rank of the NCCL check, in a fresh process (`gpu_selftest --nccl-worker` started by
// the launcher: CUDA cannot be used in a child forked after the parent initialised it).
// Every rank checks each collective's closed-form result; a wrong value throws, the process
// exits non-zero and launch() reports the rank and the message.
void nccl_rank() {
  const Device d(kCUDA, std::atoi(std::getenv("LOCAL_RANK")));
  cuda::set_device(d.index);  // kernels, streams and the communicator on this rank's GPU
  distributed::ProcessGroupPtr pg = distributed::init_process_group("nccl");
  const int rank = pg->rank();
  const int n = pg->size();
  auto expect = [&](const Tensor& t, double value, const char* what) {
    for (double v : values(t))
      GR_CHECK(v == value, "nccl ", what, " on rank ", rank, ": got ", v, ", expected ", value);
  };
  Tensor x = full({1 << 20}, rank + 1.0, TensorOptions(kFloat32).device(d));
  pg->allreduce(x)->wait();
  expect(x, n * (n + 1) / 2.0, "allreduce sum");
  Tensor b = full({4097}, rank == 0 ? 7.0 : -1.0, TensorOptions(kFloat64).device(d));
  pg->broadcast(b, 0)->wait();
  expect(b, 7.0, "broadcast");
  std::vector<Tensor> gathered;
  for (int r = 0; r < n; ++r) gathered.push_back(empty({33}, TensorOptions(kFloat32).device(d)));
  pg->allgather(gathered, full({33}, rank, TensorOptions(kFloat32).device(d)))->wait();
  for (int r = 0; r < n; ++r) expect(gathered[r], r, "allgather");
  std::vector<Tensor> inputs;
  for (int r = 0; r < n; ++r) inputs.push_back(full({65}, r + 1.0, TensorOptions(kFloat32).device(d)));
  Tensor out = empty({65}, TensorOptions(kFloat32).device(d));
  pg->reduce_scatter(out, inputs, distributed::ReduceOp::Sum)->wait();
  expect(out, n * (rank + 1.0), "reduce_scatter");
  pg->barrier()->wait();
  // Bandwidth of a 64 MiB all-reduce (bus bandwidth as nccl-tests defines it), rank 0 prints.
  Tensor big = ones({int64_t{16} << 20}, TensorOptions(kFloat32).device(d));
  pg->allreduce(big)->wait();
  pg->barrier()->wait();
  values(big.view({-1}).slice(0, 0, 1));  // the GPU is done
  auto t0 = std::chrono::steady_clock::now();
  const int iters = 10;
  for (int i = 0; i < iters; ++i) pg->allreduce(big)->wait();
  values(big.view({-1}).slice(0, 0, 1));
  const double s = ms_since(t0) / 1e3 / iters;
  if (rank == 0)
    std::printf("nccl: allreduce/broadcast/allgather/reduce_scatter/barrier ok on %d GPUs; 64 MiB allreduce %.2f ms, "
                "bus bandwidth %.1f GB/s\n",
                n, s * 1e3, 64.0 * (1 << 20) * 2.0 * (n - 1) / n / s / 1e9);
  distributed::destroy_process_group();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"gpu_selftest: compare every CUDA op family with the CPU, then check the NCCL collectives"};
  std::string device_spec = "cuda:0", only;
  bool no_nccl = false, nccl_worker = false;
  app.add_option("--device", device_spec, "the GPU to test")->capture_default_str();
  app.add_option("--only", only, "run only the checks whose family or name contains this text");
  app.add_flag("--no-nccl", no_nccl, "skip the NCCL collectives (they need two or more GPUs)");
  app.add_flag("--nccl-worker", nccl_worker, "internal: one rank of the NCCL check (started by gpu_selftest)")->group("");
  CLI11_PARSE(app, argc, argv);
  if (nccl_worker) {
    try {
      nccl_rank();
      return 0;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "gpu_selftest: %s\n", e.what());
      return 1;
    }
  }

  if (!built_with_cuda()) {
    std::printf("gpu_selftest: SKIPPED: this build has no CUDA backend (configure with -DGRADRING_CUDA=ON)\n");
    return kSkipped;
  }
  const int count = cuda_device_count();
  if (count == 0) {
    std::printf("gpu_selftest: SKIPPED: no CUDA device found (nothing to test on this machine)\n");
    return kSkipped;
  }
  Device device;
  try {
    device = Device(device_spec);
    GR_CHECK(device.is_cuda() && device.index < count, "--device ", device_spec, ": ", count, " CUDA device(s) visible");
  } catch (const gr::Error& e) {
    std::fprintf(stderr, "gpu_selftest: %s\n", e.message().c_str());
    return 2;
  }

  cuda::set_device(device.index);
  std::printf("gpu_selftest: gradring %s, %s of %d CUDA device(s)\n", kVersion, device.str().c_str(), count);
  std::printf("%-12s %-66s %9s %10s %10s %10s %8s %8s  %s\n", "family", "check", "elements", "max|diff|", "max rel",
              "rtol", "cpu ms", "cuda ms", "result");
  int failed = 0, run = 0;
  auto wanted = [&](const std::string& family, const std::string& name) {
    return only.empty() || family.find(only) != std::string::npos || name.find(only) != std::string::npos;
  };
  for (const Check& c : op_checks()) {
    if (!wanted(c.family, c.name)) continue;
    Row r = run_check(c, device);
    print_row(r);
    ++run;
    failed += r.ok ? 0 : 1;
  }
  const std::vector<std::pair<std::string, std::function<std::unique_ptr<optim::Optimizer>(std::vector<Tensor>)>>> opts = {
      {"SGD momentum nesterov wd", [](std::vector<Tensor> p) {
         return std::make_unique<optim::SGD>(p, optim::SGDOptions(0.1).momentum(0.9).nesterov(true).weight_decay(1e-4));
       }},
      {"Adam", [](std::vector<Tensor> p) { return std::make_unique<optim::Adam>(p, optim::AdamOptions(1e-3)); }},
      {"AdamW", [](std::vector<Tensor> p) { return std::make_unique<optim::AdamW>(p, optim::AdamWOptions(1e-3)); }},
      {"Adadelta", [](std::vector<Tensor> p) { return std::make_unique<optim::Adadelta>(p, optim::AdadeltaOptions(1.0)); }},
  };
  for (const auto& [name, make] : opts) {
    if (!wanted("optimizer", name)) continue;
    Row r = optimizer_check(name, device, make);
    print_row(r);
    ++run;
    failed += r.ok ? 0 : 1;
  }
  std::printf("gpu_selftest: %d of %d op checks passed\n", run - failed, run);

  if (!no_nccl && only.empty()) {
    const auto backends = distributed::registered_backends();
    if (std::find(backends.begin(), backends.end(), "nccl") == backends.end()) {
      std::printf("nccl: SKIPPED: this build has no NCCL process group\n");
    } else if (count < 2) {
      std::printf("nccl: SKIPPED: one GPU; the collectives need two or more (one process per GPU)\n");
    } else {
      distributed::LaunchOptions lo;
      lo.nproc_per_node = count;
      lo.master_port = 0;  // a free local port
      lo.timeout = std::chrono::minutes(5);
      lo.name = "gpu_selftest";
      distributed::LaunchResult r = distributed::launch({"/proc/self/exe", "--nccl-worker"}, lo);
      if (r.exit_code != 0) {
        std::printf("nccl: FAIL (%s)\n", r.summary.c_str());
        ++failed;
      }
    }
  }
  return failed == 0 ? 0 : 1;
}
