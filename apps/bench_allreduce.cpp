// bench_allreduce: all-reduce bandwidth in nccl-tests' format (size, count, type, redop,
// time, algbw, busbw, #wrong for out-of-place and in-place), every result checked. Run it
// under a launcher, e.g.  gradring-run --nproc-per-node 2 bench_allreduce -b 4K -e 32M
// or for MPI:  mpirun -np 2 bench_allreduce --backend mpi; --backend nccl puts each rank's
// buffers on GPU cuda:LOCAL_RANK.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <gradring/gradring.h>
#include <nlohmann/json.hpp>

#include "common/cli.h"
#include "distributed/backends/init.h"
#ifdef GRADRING_WITH_NCCL
#include "cuda_kernels/runtime.h"  // set_device: this rank's GPU becomes current
#endif

using namespace gr;
using namespace gr::distributed;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string min_bytes = "8", max_bytes = "32M";
  double factor = 2;
  std::string dtype = "float", op = "sum", backend = "gloo";
  int iters = 20, warmup = 5;
  bool check = true, json = false;
};

int64_t parse_size(const std::string& s) {
  size_t used = 0;
  double v = std::stod(s, &used);
  std::string unit = s.substr(used);
  double mult = unit.empty() || unit == "B" ? 1 : unit == "K" ? 1 << 10 : unit == "M" ? 1 << 20 : unit == "G" ? 1 << 30 : -1;
  GR_CHECK(mult > 0, "bad size '", s, "' (expected a number with an optional K, M or G suffix)");
  return static_cast<int64_t>(v * mult);
}

ScalarType parse_dtype(const std::string& s) {
  if (s == "float") return kFloat32;
  if (s == "double") return kFloat64;
  if (s == "int64") return kInt64;
  if (s == "bfloat16") return kBFloat16;
  if (s == "half") return kFloat16;
  GR_ERROR("unknown dtype '", s, "'");
}

ReduceOp parse_op(const std::string& s) {
  if (s == "sum") return ReduceOp::Sum;
  if (s == "prod") return ReduceOp::Product;
  if (s == "min") return ReduceOp::Min;
  if (s == "max") return ReduceOp::Max;
  if (s == "avg") return ReduceOp::Avg;
  GR_ERROR("unknown op '", s, "'");
}

// Rank r's input: element i = (r + 1) * (i % 5 + 1), small integers exact in every dtype.
Tensor make_input(int64_t count, ScalarType t, int rank) {
  Tensor i = arange(count, kInt64);
  Tensor pattern = (i - (i / 5) * 5 + 1) * static_cast<int64_t>(rank + 1);
  return pattern.to(t);
}

// What every element must hold after the reduction over n ranks.
Tensor expected(int64_t count, ScalarType t, int n, ReduceOp op) {
  Tensor i = arange(count, kInt64);
  Tensor base = (i - (i / 5) * 5 + 1).to(kFloat64);
  double factor = 1;
  switch (op) {
    case ReduceOp::Sum: factor = n * (n + 1) / 2.0; break;
    case ReduceOp::Avg: factor = (n + 1) / 2.0; break;
    case ReduceOp::Min: factor = 1; break;
    case ReduceOp::Max: factor = n; break;
    case ReduceOp::Product: {
      Tensor p = ones({count}, kFloat64);
      for (int r = 1; r <= n; ++r) p = p * (base * static_cast<double>(r));
      return p;
    }
  }
  return base * factor;
}

// The device of this rank's buffers: the CPU, or for nccl cuda:LOCAL_RANK (made current).
// Fails with what is missing when the build has no NCCL or the machine no GPU for this rank.
Device select_device(const std::string& backend) {
  if (backend != "nccl") return Device(kCPU);
  const std::vector<std::string> names = registered_backends();
  GR_CHECK(std::find(names.begin(), names.end(), "nccl") != names.end(),
           "--backend nccl: this build has no NCCL backend (it needs the CUDA backend and NCCL: configure with "
           "-DGRADRING_CUDA=ON -DGRADRING_NCCL=ON)");
  const int devices = cuda_device_count();
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  GR_CHECK(devices > 0, "--backend nccl: no CUDA device is visible (CUDA_VISIBLE_DEVICES=",
           visible ? visible : "(not set)", ")");
  const char* local_env = std::getenv("LOCAL_RANK");
  const int local = local_env ? std::atoi(local_env) : 0;
  GR_CHECK(local >= 0 && local < devices, "--backend nccl: LOCAL_RANK ", local, " but ", devices,
           " CUDA device(s) visible: run at most one rank per GPU");
#ifdef GRADRING_WITH_NCCL
  cuda::set_device(local);
#endif
  return Device(kCUDA, local);
}

// A one-element tensor on `device` (float64 on the CPU; float32 on a GPU, which has no float64).
Tensor scalar_on(double v, Device device) {
  return device.is_cpu() ? scalar_tensor(v, kFloat64) : scalar_tensor(v, kFloat32).to(device);
}

int64_t count_wrong(const Tensor& got, const Tensor& want) {
  Tensor g = got.to(Device(kCPU)).to(kFloat64);
  Tensor tol = want.abs() * 1e-2 + 1e-6;  // bfloat16 sums round
  return (g - want).abs().gt(tol).sum().item<int64_t>();
}

struct Result {
  double us = 0;
  int64_t wrong = 0;
};

// Average time of `iters` back-to-back all-reduces (issued together, as nccl-tests does),
// the slowest rank's, and the number of wrong elements over all ranks. gradring's
// all-reduce works in place; "out of place" copies the input into a separate output buffer
// first (that copy is part of its time), "in place" reduces the buffer as it is.
Result run(ProcessGroup& pg, const Tensor& input, bool in_place, ReduceOp op, const Options& o, const Tensor& want) {
  Tensor buf = input.clone();
  auto once = [&] {
    if (!in_place) buf.copy_(input);
    return pg.allreduce(buf, op);
  };
  for (int i = 0; i < o.warmup; ++i) once()->wait();
  pg.barrier()->wait();
  auto start = Clock::now();
  std::vector<WorkPtr> works;
  for (int i = 0; i < o.iters; ++i) works.push_back(once());
  // Every one, not just the last: on Gloo two worker threads run them, and an earlier one
  // may finish after the last and then write `buf` while the check below reads it (seen
  // once under load: a whole rank's result wrong). On NCCL wait() only orders streams; the
  // clock needs the host to wait.
  for (const WorkPtr& w : works) w->synchronize();
  double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / o.iters;
  const Device device = input.device();
  Tensor t = scalar_on(us, device);
  pg.allreduce(t, ReduceOp::Max)->wait();
  Result r{t.to(Device(kCPU)).item<double>(), 0};
  if (o.check) {
    buf.copy_(input);
    pg.allreduce(buf, op)->wait();
    Tensor w = scalar_tensor(count_wrong(buf, want), kInt64).to(device);
    pg.allreduce(w, ReduceOp::Sum)->wait();
    r.wrong = w.to(Device(kCPU)).item<int64_t>();
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"All-reduce bandwidth in nccl-tests' format; run under gradring-run (or mpirun for --backend mpi)."};
  app.add_option("-b,--minbytes", o.min_bytes, "smallest message (bytes; K, M, G suffixes)")->capture_default_str();
  app.add_option("-e,--maxbytes", o.max_bytes, "largest message")->capture_default_str();
  app.add_option("-f,--stepfactor", o.factor, "size multiplier between rows")->capture_default_str()->check(CLI::Range(1.01, 1e6));
  app.add_option("-d,--datatype", o.dtype, "float, double, int64, bfloat16, half")->capture_default_str()
      ->check(CLI::IsMember({"float", "double", "int64", "bfloat16", "half"}));
  app.add_option("-o,--op", o.op, "sum, prod, min, max, avg")->capture_default_str()
      ->check(CLI::IsMember({"sum", "prod", "min", "max", "avg"}));
  app.add_option("-n,--iters", o.iters, "timed iterations per size")->capture_default_str()->check(apps::positive());
  app.add_option("-w,--warmup_iters", o.warmup, "untimed iterations first")->capture_default_str()->check(apps::non_negative());
  app.add_option("-c,--check", o.check, "check every result (1) or not (0)")->capture_default_str();
  app.add_option("--backend", o.backend, "gloo, shm (one machine, shared memory), mpi (under mpirun), nccl (CUDA builds with NCCL; one GPU per rank)")
      ->capture_default_str();
  app.add_flag("--json", o.json, "print the rows as one JSON object on the last line (rank 0)");
  CLI11_PARSE(app, argc, argv);
  try {
    const Device device = select_device(o.backend);
    InitOptions init;
    init.backend = o.backend;
    init.timeout = std::chrono::minutes(5);
    ProcessGroupPtr pg = init_process_group(init);
    const ScalarType dtype = parse_dtype(o.dtype);
    const ReduceOp op = parse_op(o.op);
    GR_CHECK(!(op == ReduceOp::Avg && dtype == kInt64), "avg needs a floating point dtype");
    GR_CHECK(device.is_cpu() || dtype != kFloat64, "--datatype double: float64 is CPU-only; use float on ", device);
    const int64_t lo = parse_size(o.min_bytes), hi = parse_size(o.max_bytes);
    GR_CHECK(lo > 0 && lo <= hi, "need 0 < minbytes <= maxbytes, got ", lo, " and ", hi);
    const int n = pg->size();
    const double bus_factor = 2.0 * (n - 1) / n;
    const bool print = pg->rank() == 0 && !o.json;
    if (print) {
      std::printf("# gradring bench_allreduce: %d ranks, backend %s, %d iterations (+%d warm-up)\n", n,
                  pg->backend_name().c_str(), o.iters, o.warmup);
      std::printf("#%67s %33s\n", "out-of-place", "in-place");
      std::printf("# %12s %12s %8s %6s %10s %8s %8s %7s %10s %8s %8s %7s\n", "size", "count", "type", "redop", "time",
                  "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
      std::printf("# %12s %12s %8s %6s %10s %8s %8s %7s %10s %8s %8s %7s\n", "(B)", "(elements)", "", "", "(us)",
                  "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
    }
    nlohmann::json rows = nlohmann::json::array();
    int64_t total_wrong = 0;
    // lo, lo*f, lo*f^2, ... below hi, then hi itself.
    std::vector<int64_t> sizes;
    for (double b = static_cast<double>(lo); b < static_cast<double>(hi); b *= o.factor) sizes.push_back(static_cast<int64_t>(b));
    sizes.push_back(hi);
    for (int64_t bytes : sizes) {
      int64_t count = std::max<int64_t>(1, bytes / static_cast<int64_t>(element_size(dtype)));
      int64_t size = count * static_cast<int64_t>(element_size(dtype));
      Tensor input = make_input(count, dtype, pg->rank()).to(device);
      Tensor want = expected(count, dtype, n, op);
      Result oop = run(*pg, input, false, op, o, want), ip = run(*pg, input, true, op, o, want);
      double algbw_o = size / oop.us / 1e3, algbw_i = size / ip.us / 1e3;
      total_wrong += oop.wrong + ip.wrong;
      if (print)
        std::printf("  %12lld %12lld %8s %6s %10.1f %8.3f %8.3f %7lld %10.1f %8.3f %8.3f %7lld\n",
                    static_cast<long long>(size), static_cast<long long>(count), o.dtype.c_str(), o.op.c_str(), oop.us,
                    algbw_o, algbw_o * bus_factor, static_cast<long long>(oop.wrong), ip.us, algbw_i,
                    algbw_i * bus_factor, static_cast<long long>(ip.wrong));
      rows.push_back({{"size", size}, {"count", count}, {"type", o.dtype}, {"redop", o.op},
                      {"out_of_place", {{"time_us", oop.us}, {"algbw", algbw_o}, {"busbw", algbw_o * bus_factor}, {"wrong", oop.wrong}}},
                      {"in_place", {{"time_us", ip.us}, {"algbw", algbw_i}, {"busbw", algbw_i * bus_factor}, {"wrong", ip.wrong}}}});
    }
    if (pg->rank() == 0) {
      if (o.json)
        std::printf("%s\n", nlohmann::json({{"ranks", n}, {"backend", pg->backend_name()}, {"rows", rows}}).dump().c_str());
      else
        std::printf("# out of bounds values : %lld %s\n", static_cast<long long>(total_wrong), total_wrong ? "FAILED" : "OK");
    }
    destroy_process_group();
    return total_wrong == 0 ? 0 : 1;
  } catch (const gr::Error& e) {
    std::fprintf(stderr, "bench_allreduce: %s\n", e.message().c_str());
    return 1;
  }
}
