// gpu_selftest: runs every CUDA op family on random inputs and compares it with the CPU
// result (per-op tolerance; the checks live in apps/selftest/, one file per family), then, with two or more GPUs and NCCL, every collective of the
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
#include "selftest/checks.h"

using namespace gr;

namespace {

constexpr int kSkipped = 77;

using selftest::Check;
using selftest::randn_;
using selftest::Tol;

struct Row {
  std::string family, name;
  apps::Comparison cmp;  // elements, max |diff|, max rel, the worst element against the tolerance
  Tol tol{};
  bool ok = false;
  double cpu_ms = 0, cuda_ms = 0;
  std::string error;
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::vector<double> values(const Tensor& t) {
  Tensor c = t.to(Device(kCPU)).to(kFloat64).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

// Compares CUDA outputs with CPU outputs: |cuda - cpu| <= atol + rtol * |cpu| everywhere
// (Note [Comparison tolerances]).
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
    for (size_t i = 0; i < g.size(); ++i) row.cmp.add(g[i], w[i], row.tol);
  }
  row.ok = row.ok && row.cmp.ok;
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
  std::printf("%-12s %-66s %9lld %10.2e %10.2e %8.1e %8.1e %7.2f %8.2f %8.2f  %s\n", r.family.c_str(), r.name.c_str(),
              static_cast<long long>(r.cmp.elements), r.cmp.max_abs, r.cmp.max_rel, r.tol.rtol, r.tol.atol, r.cmp.worst,
              r.cpu_ms, r.cuda_ms, r.ok ? "ok" : ("FAIL " + r.error).c_str());
  std::fflush(stdout);
}

// One rank of the NCCL check, in a fresh process (`gpu_selftest --nccl-worker` started by
// the launcher: CUDA cannot be used in a child forked after the parent initialised it).
// Every rank checks each collective's closed-form result; a wrong value throws, the process
// exits non-zero and launch() reports the rank and the message.
void nccl_rank() {
  const Device d(kCUDA, std::atoi(std::getenv("LOCAL_RANK")));
  cuda::set_device(d.index());  // kernels, streams and the communicator on this rank's GPU
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
    GR_CHECK(device.is_cuda() && device.index() < count, "--device ", device_spec, ": ", count, " CUDA device(s) visible");
  } catch (const gr::Error& e) {
    std::fprintf(stderr, "gpu_selftest: %s\n", e.message().c_str());
    return 2;
  }

  cuda::set_device(device.index());
  std::printf("gpu_selftest: gradring %s, %s of %d CUDA device(s)\n", kVersion, device.str().c_str(), count);
  // worst: the largest |diff| / (atol + rtol |cpu|) of the check's elements; <= 1 passes.
  std::printf("%-12s %-66s %9s %10s %10s %8s %8s %7s %8s %8s  %s\n", "family", "check", "elements", "max|diff|",
              "max rel", "rtol", "atol", "worst", "cpu ms", "cuda ms", "result");
  int failed = 0, run = 0;
  auto wanted = [&](const std::string& family, const std::string& name) {
    return only.empty() || family.find(only) != std::string::npos || name.find(only) != std::string::npos;
  };
  for (const Check& c : selftest::all_checks()) {
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
