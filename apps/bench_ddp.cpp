// bench_ddp: one DDP training step (zero_grad, forward, backward, SGD step) of the reference
// CNN, ResNet-18 or a GPT preset on synthetic data, in four gradient-communication modes
// (overlapped buckets, one all-reduce after backward, one per parameter, none), four sharding
// modes (zero1, zero2, zero2-fwd: zero2 with gather_in_forward, optimizer-in-backward) and
// fully sharded ones (fsdp, fsdp-keep, fsdp-noprefetch, fsdp-pieces, fsdp-lean: see
// apps::fully_shard_mode). Each mode's averaged gradients (or, for the sharding modes, its
// parameters after the timed steps) are checked against a hand-made all-reduce (or the overlap
// mode's); then the modes take turns step by step under the profiler, whose "allreduce bucket k" spans tell how
// much communication was hidden behind backward. A memory table gives bytes per parameter in
// each mode, by tensor sizes and from the allocator, and another the activation memory of a
// step (--checkpoint-activations: the GPT's blocks checkpointed). Results: docs/benchmarks.md. Run it as
//   gradring-run --nproc-per-node 2 --standalone bench_ddp
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <gradring/gradring.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "common/cli.h"
#include "common/comm_trace.h"
#include "common/progress.h"
#include "common/ddp_checks.h"
#include "common/activation_memory.h"
#include "common/bench_models.h"
#include "common/step_figures.h"
#include "core/memory_stats.h"
#include "distributed/backends/init.h"
#include "distributed/ddp/ddp.h"
#include "distributed/ddp/zero_redundancy_optimizer.h"
#include "distributed/fsdp/fsdp_checkpoint.h"
#include "distributed/fsdp/fully_shard.h"

using namespace gr;
using namespace gr::distributed;
using gr::nn::parallel::DistributedDataParallel;
using gr::nn::parallel::DistributedDataParallelOptions;
using gr::apps::ms;
using gr::apps::StepTimes;

namespace {

struct Options {
  std::vector<std::string> models = {"reference", "resnet18"};
  std::vector<std::string> modes = {"overlap", "after-backward", "per-parameter", "none"};
  int64_t batch_size = 0;  // 0: the model's default (apps::with_bench_model)
  int64_t image_size = 32;  // ResNet-18 input height and width
  int steps = 20, warmup = 3, threads = 0;
  uint64_t seed = 1;
  std::string conv_algorithm = "auto";
  std::string trace_dir;
  std::string backend = "gloo";
  std::string optimizer = "sgd";
  double bucket_cap_mb = 25, first_bucket_cap_mb = 1;  // the overlap and sharding modes' buckets
  double fsdp_piece_mb = 1;  // fsdp-pieces and fsdp-lean (apps::fully_shard_mode)
  bool gradient_as_bucket_view = false;
  bool checkpoint_activations = false;  // GPT models: every block a checkpoint
  bool json = false;
};

// The DDP options of a mode. Caps are in MiB: 1e9 MiB puts every gradient in one bucket,
// 1e-6 MiB (one byte) closes a bucket after each parameter.
DistributedDataParallelOptions mode_options(const std::string& mode, const Options& opts) {
  DistributedDataParallelOptions o;
  o.bucket_cap_mb(opts.bucket_cap_mb).first_bucket_cap_mb(opts.first_bucket_cap_mb);
  o.gradient_as_bucket_view(opts.gradient_as_bucket_view);
  if (mode == "after-backward") o.bucket_cap_mb(1e9).first_bucket_cap_mb(1e9);
  if (mode == "per-parameter") o.bucket_cap_mb(1e-6).first_bucket_cap_mb(1e-6);
  if (mode.rfind("zero2", 0) == 0) o.shard_gradients(true).gather_in_forward(mode == "zero2-fwd");
  return o;
}

bool steps_in_backward(const std::string& mode) { return mode.rfind("zero2", 0) == 0 || mode == "optimizer-in-backward"; }
bool is_fsdp(const std::string& mode) { return mode.rfind("fsdp", 0) == 0; }

struct ModeResult : apps::CommFigures {  // comm_ms, hidden_ms, hidden_until_wait_ms, wait_ms
  std::string mode;
  size_t buckets = 0;
  double step_ms = 0, step_min_ms = 0;  // median / minimum over steps of the slowest rank
  double backward_ms = 0;               // per step, averaged over ranks
  double optimizer_ms = 0;              // optimizer.step() after backward, per step, averaged over ranks
  double cpu_ms = 0;                    // process CPU time per step, averaged over ranks
  double grad_err = -1;  // DDP's gradients against a hand-made all-reduce (-1: not checked)
  double param_err = -1;  // parameters against the overlap mode's after the timed steps (-1: not checked)
  double param_bytes = 0, grad_bytes = 0, state_bytes = 0;  // per parameter, on this rank, after a step
  double allocated_bytes = 0, peak_bytes = 0;  // the same, from the allocator (see measure_memory)
  double peak_pgs_bytes = 0;  // peak of parameters + gradients + optimizer state over a step (see measure_memory)
  std::vector<double> step_series;  // each timed step's time on the slowest rank, in order
  bool ranks_agree = true;  // parameters identical on every rank after the timed steps
};

// One mode's model (every mode starts from the same weights), its DDP wrapper and optimizer.
template <class Impl>
struct ModeRun {
  ModeRun(std::string mode_, std::shared_ptr<Impl> model_, ProcessGroupPtr pg, const Options& opts)
      : mode(std::move(mode_)), sync(mode != "none"), model(std::move(model_)) {
    const auto make = opts.optimizer == "adamw"
                          ? distributed::optimizer_class<optim::AdamW>(optim::AdamWOptions(1e-3))
                          : distributed::optimizer_class<optim::SGD>(optim::SGDOptions(0.01).momentum(0.9));
    if (is_fsdp(mode)) {  // units bottom-up, then the model; the optimizer on this rank's shards
      sharded = apps::fully_shard_mode(model, mode, pg, opts.fsdp_piece_mb);
      opt = make({optim::OptimizerParamGroup(sharded->parameters())});
      return;
    }
    ddp = std::make_unique<DistributedDataParallel<Impl>>(model, pg, mode_options(mode, opts));
    if (steps_in_backward(mode)) ddp->apply_optimizer_in_backward(make);
    else if (mode == "zero1") opt = std::make_unique<distributed::ZeroRedundancyOptimizer>(model->parameters(), make, pg);
    else opt = make({optim::OptimizerParamGroup(model->parameters())});
  }

  // Optimizer state bytes on this rank.
  int64_t optimizer_state_bytes() const {
    if (auto* zero = dynamic_cast<distributed::ZeroRedundancyOptimizer*>(opt.get())) return zero->state_bytes();
    if (opt) return apps::state_bytes(*opt);
    int64_t bytes = 0;
    for (const optim::Optimizer* o : ddp->reducer().in_backward_optimizers()) bytes += apps::state_bytes(*o);
    return bytes;
  }
  // Parameter and gradient bytes this rank holds now (fsdp: its shards and their gradients).
  int64_t parameter_bytes() const {
    int64_t bytes = 0;
    for (const Tensor& p : sharded ? sharded->parameters() : model->parameters()) bytes += static_cast<int64_t>(p.nbytes());
    return bytes;
  }
  int64_t gradient_bytes() const {
    if (ddp) return ddp->reducer().gradient_bytes();
    int64_t bytes = 0;
    for (const Tensor& p : sharded->parameters())
      if (p.grad().defined()) bytes += static_cast<int64_t>(p.grad().nbytes());
    return bytes;
  }
  // The model's parameters as they are now, in registration order (fsdp: gathered; collective).
  TensorList current_parameters() {
    if (!sharded) return model->parameters();
    const OrderedDict<Tensor> full = distributed::fsdp::full_state_dict(*sharded);
    TensorList out;
    for (const auto& [name, p] : model->named_parameters()) out.push_back(*full.find(name));
    return out;
  }

  // One training step; `none` runs it inside no_sync (no gradient communication).
  StepTimes step(const Tensor& x, const Tensor& y) {
    StepTimes t{};
    const int64_t cpu0 = apps::process_cpu_ns();
    t.start = profiler::now_ns();
    if (opt) opt->zero_grad();
    std::optional<nn::parallel::DistributedDataParallelBase::NoSyncGuard> no_sync;
    if (!sync) no_sync.emplace(*ddp);
    std::optional<apps::ActivationMeter> meter;
    if (measure_activations) {
      meter.emplace(x.device());
      meter->before_forward();
    }
    // fsdp: through the holder, whose forward pre-hook gathers the root unit.
    Tensor loss = nll_loss(ddp ? (*ddp)(x) : nn::ModuleHolder<Impl>(model)(x), y);
    if (meter) meter->after_forward();
    t.backward_start = profiler::now_ns();
    loss.backward();
    t.backward_end = profiler::now_ns();
    if (meter) activations.max_with(meter->after_backward());
    no_sync.reset();
    if (opt) opt->step();
    t.end = profiler::now_ns();
    t.cpu_ns = apps::process_cpu_ns() - cpu0;
    if (profiler::enabled()) {
      profiler::record("backward", "step", t.backward_start, t.backward_end, "step");
      profiler::record("step " + mode, "step", t.start, t.end, "step");
    }
    return t;
  }

  std::string mode;
  bool sync;
  std::shared_ptr<Impl> model;
  std::unique_ptr<DistributedDataParallel<Impl>> ddp;  // null in the fsdp modes
  std::optional<distributed::fsdp::FSDPModule> sharded;  // the root unit of the fsdp modes
  std::unique_ptr<optim::Optimizer> opt;  // null: the step runs in backward
  std::vector<StepTimes> steps;  // the timed ones
  bool measure_activations = false;   // the timed steps set it
  apps::ActivationMemory activations;  // the largest of the measured steps' figures
};

// Median and minimum over steps of the slowest rank's step time, the other figures averaged
// over ranks.
template <class Impl>
ModeResult summarise(ModeRun<Impl>& run, const std::vector<profiler::Event>& events, ProcessGroup& pg) {
  ModeResult r;
  r.mode = run.mode;
  if (run.ddp) run.ddp->wait_for_parameters();  // zero2-fwd: the last step's gathers, before the parameters are read
  static_cast<apps::CommFigures&>(r) = apps::analyse_comm_trace(events, run.steps);
  r.buckets = run.sync && run.ddp ? run.ddp->reducer().bucket_bytes().size() : 0;
  double backward = 0, cpu = 0, optimizer = 0;
  std::vector<double> step_ms;
  for (const StepTimes& t : run.steps) {
    step_ms.push_back(ms(t.end - t.start));
    backward += ms(t.backward_end - t.backward_start) / static_cast<double>(run.steps.size());
    optimizer += ms(t.end - t.backward_end) / static_cast<double>(run.steps.size());
    cpu += ms(t.cpu_ns) / static_cast<double>(run.steps.size());
  }
  Tensor st = tensor(step_ms, kFloat64);
  pg.allreduce(st, ReduceOp::Max)->wait();
  Tensor avg = tensor({backward, r.comm_ms, r.hidden_ms, r.hidden_until_wait_ms, r.wait_ms, cpu, optimizer}, kFloat64);
  pg.allreduce(avg, ReduceOp::Sum)->wait();
  avg = avg / static_cast<double>(pg.size());
  std::vector<double> sorted(st.data_ptr<double>(), st.data_ptr<double>() + st.numel());
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  r.step_ms = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  r.step_min_ms = sorted.front();
  r.step_series.assign(st.data_ptr<double>(), st.data_ptr<double>() + st.numel());
  const double* a = avg.data_ptr<double>();
  r.backward_ms = a[0];
  r.comm_ms = a[1];
  r.hidden_ms = a[2];
  r.hidden_until_wait_ms = a[3];
  r.wait_ms = a[4];
  r.cpu_ms = a[5];
  r.optimizer_ms = a[6];
  if (run.sync) r.ranks_agree = apps::parameters_agree(run.current_parameters(), pg);
  return r;
}

// Bytes per parameter the CPU allocator holds for a fresh run of `mode` alone (model, DDP,
// optimizer) after two steps, and its peak over them (activations included): the allocator's
// statistics (core/memory_stats.h), not tensor sizes. Every rank calls it (DDP broadcasts).
// The third figure is the peak of parameters + gradients + optimizer state over the second
// step by tensor sizes: for fsdp the shards, their gradients and the state plus the most that
// fully_shard held at once besides them (gathered parameters, full gradients before their
// reduce-scatter, communication buffers: fsdp::memory_stats); for the other modes what they
// hold after the step (their parameters, gradients and state persist between steps).
struct MemoryFigures {
  double allocated = 0, peak = 0, peak_pgs = 0;
};
template <class Impl>
MemoryFigures measure_memory(const std::string& mode, const std::function<std::shared_ptr<Impl>()>& make,
                             ProcessGroupPtr pg, const Options& o, const Tensor& x, const Tensor& y, double numel) {
  pg->barrier()->wait();
  const int64_t before = cpu_memory_stats().allocated_bytes;
  reset_cpu_peak_memory_stats();
  ModeRun<Impl> run(mode, make(), pg, o);
  run.step(x, y);  // the optimizer state exists after the first step
  distributed::fsdp::reset_peak_memory_stats();
  const int64_t baseline = distributed::fsdp::memory_stats().gathered_bytes;  // other modes' units: none gathered
  run.step(x, y);
  const CpuMemoryStats after = cpu_memory_stats();
  const double held = static_cast<double>(run.parameter_bytes() + run.gradient_bytes() + run.optimizer_state_bytes());
  const double transient =
      run.sharded ? static_cast<double>(distributed::fsdp::memory_stats().peak_gathered_bytes - baseline) : 0;
  return {(after.allocated_bytes - before) / numel, (after.peak_allocated_bytes - before) / numel,
          (held + transient) / numel};
}

// Bytes per parameter held on rank 0 after a step: by tensor sizes (the parameters, the
// gradients DDP keeps (.grad and the bucket buffers, or the shards), the optimizer state),
// the peak of the three over a step (measure_memory), the allocator's count and peak, and the
// ZeRO paper's formula for float32 and K bytes of optimizer state per parameter (4 for SGD
// with momentum, 8 for AdamW): DDP 4 + 4 + K, ZeRO-1 4 + 4 + K/N, ZeRO-2 4 + (4 + K)/N,
// ZeRO-3 (fsdp) (4 + 4 + K)/N, to which fsdp adds the units gathered at once. DDP here keeps
// the gradients twice (.grad and the bucket; gradient_as_bucket_view saves one).
void print_memory(const std::vector<ModeResult>& results, int world, const std::string& optimizer) {
  const double n = world, k = optimizer == "adamw" ? 8 : 4;
  std::printf("# memory on rank 0, bytes per parameter (float32, %s: K = %g), %d rank(s)\n",
              optimizer == "adamw" ? "AdamW" : "SGD momentum", k, world);
  std::printf("# %-22s %7s %7s %7s %7s %9s %10s %8s %8s\n", "mode", "params", "grads", "state", "total", "p+g+s pk",
              "allocator", "peak", "paper");
  for (const ModeResult& r : results) {
    if (r.mode == "none") continue;
    const double paper = r.mode == "zero1"                 ? 4 + 4 + k / n
                         : r.mode.rfind("zero2", 0) == 0 ? 4 + (4 + k) / n
                         : is_fsdp(r.mode)               ? (4 + 4 + k) / n
                                                         : 4 + 4 + k;
    std::printf("  %-22s %7.2f %7.2f %7.2f %7.2f %9.2f %10.2f %8.2f %8.2f\n", r.mode.c_str(), r.param_bytes, r.grad_bytes,
                r.state_bytes, r.param_bytes + r.grad_bytes + r.state_bytes, r.peak_pgs_bytes, r.allocated_bytes,
                r.peak_bytes, paper);
  }
}

const ModeResult* find_mode(const std::vector<ModeResult>& rs, const std::string& mode) {
  for (const ModeResult& r : rs)
    if (r.mode == mode) return &r;
  return nullptr;
}

// Runs every requested mode of one model, prints its table (rank 0) and returns its JSON.
// The modes take turns step by step, so a change in the machine's load hits all of them.
template <class Impl>
nlohmann::json bench_model(const std::string& name, const std::function<std::shared_ptr<Impl>()>& make,
                           const apps::BenchBatch& batch, ProcessGroupPtr pg, const Options& o, apps::ProgressLines& progress,
                           bool& failed) {
  const Tensor &x = batch.x, &y = batch.y;
  std::vector<std::unique_ptr<ModeRun<Impl>>> runs;
  std::vector<double> grad_err;
  for (const std::string& mode : o.modes) {
    manual_seed(o.seed);
    runs.push_back(std::make_unique<ModeRun<Impl>>(mode, make(), pg, o));
    ModeRun<Impl>& run = *runs.back();
    progress.line("%s %s: checking DDP's gradients", name.c_str(), mode.c_str());
    const bool checkable = run.sync && run.opt && run.ddp;
    grad_err.push_back(checkable ? apps::check_gradients(*run.ddp, run.model, *run.opt, *pg, x, y) : -1);
  }
  int64_t numel = 0, tensors = 0;
  for (const Tensor& p : runs.front()->model->parameters()) {
    numel += p.numel();
    ++tensors;
  }

  progress.line("%s: %d warm-up + %d timed steps of each mode, taking turns", name.c_str(), o.warmup, o.steps);
  // Every step starts at a barrier, so no mode inherits the ranks' skew from the one before
  // (no_sync steps do not line the ranks up).
  for (int s = 0; s < o.warmup; ++s)
    for (auto& run : runs) {
      pg->barrier()->wait();
      run->step(x, y);
    }
  profiler::reset();
  profiler::enable();
  for (auto& run : runs) run->measure_activations = true;
  for (int s = 0; s < o.steps; ++s) {
    for (auto& run : runs) {
      pg->barrier()->wait();
      run->steps.push_back(run->step(x, y));
    }
    progress.tick("%s: timed step %d/%d of every mode", name.c_str(), s + 1, o.steps);
  }
  profiler::enable(false);
  const std::vector<profiler::Event> events = profiler::events();
  profiler::reset();

  std::vector<ModeResult> results;
  const ModeRun<Impl>* reference = nullptr;
  for (auto& run : runs)
    if (run->mode == "overlap") reference = run.get();
  for (size_t i = 0; i < runs.size(); ++i) {
    results.push_back(summarise(*runs[i], events, *pg));
    ModeResult& r = results.back();
    r.grad_err = grad_err[i];
    // The sharding modes ran the same steps from the same weights as the overlap mode.
    const bool sharding = runs[i]->mode == "zero1" || steps_in_backward(runs[i]->mode) || is_fsdp(runs[i]->mode);
    if (reference && sharding) {
      double worst = 0;
      const TensorList got = runs[i]->current_parameters(), want = reference->model->parameters();
      for (size_t k = 0; k < got.size(); ++k)
        worst = std::max(worst, (got[k] - want[k]).abs().max().item<double>() / (want[k].abs().max().item<double>() + 1e-12));
      Tensor t = scalar_tensor(worst, kFloat64);
      pg->allreduce(t, ReduceOp::Max)->wait();
      r.param_err = t.item<double>();
    }
    const double n = static_cast<double>(numel);
    r.param_bytes = static_cast<double>(runs[i]->parameter_bytes()) / n;
    r.grad_bytes = static_cast<double>(runs[i]->gradient_bytes()) / n;
    r.state_bytes = static_cast<double>(runs[i]->optimizer_state_bytes()) / n;
    if (r.mode != "none") {
      const MemoryFigures m = measure_memory<Impl>(r.mode, make, pg, o, x, y, n);
      r.allocated_bytes = m.allocated;
      r.peak_bytes = m.peak;
      r.peak_pgs_bytes = m.peak_pgs;
    }
  }
  // A separate trace of a few steps of the overlap mode (and of each sharding mode) alone, for
  // reading in chrome://tracing or Perfetto.
  if (!o.trace_dir.empty())
    for (auto& run : runs)
      if (run->mode == "overlap" || run->mode == "zero1" || steps_in_backward(run->mode) || is_fsdp(run->mode)) {
        pg->barrier()->wait();
        profiler::enable();
        for (int s = 0; s < 3; ++s) {
          pg->barrier()->wait();
          run->step(x, y);
        }
        profiler::enable(false);
        const std::string suffix = run->mode == "overlap" ? "" : "_" + run->mode;
        const std::string path =
            o.trace_dir + "/bench_ddp_" + name + suffix + "_rank" + std::to_string(pg->rank()) + ".json";
        profiler::write_chrome_trace(path, pg->rank(), "rank " + std::to_string(pg->rank()));
        profiler::reset();
        progress.line("wrote %s (and the other ranks' traces next to it)", path.c_str());
      }
  const ModeResult* none = find_mode(results, "none");
  const ModeResult* overlap = find_mode(results, "overlap");
  const ModeResult* after = find_mode(results, "after-backward");

  nlohmann::json modes = nlohmann::json::array();
  const bool print = pg->rank() == 0 && !o.json;
  if (print) {
    std::printf("\n# model %s: %.2f M parameters in %lld tensors (%.1f MB of float32 gradients), batch %lld per rank, input %s\n",
                name.c_str(), static_cast<double>(numel) / 1e6, static_cast<long long>(tensors),
                static_cast<double>(numel) * 4 / 1e6, static_cast<long long>(x.size(0)), batch.input.c_str());
    std::printf("# %-21s %7s %9s %9s %8s %9s %9s %9s %9s %9s %7s %7s %9s %10s\n", "mode", "buckets", "step(ms)", "min(ms)",
                "vs none", "cpu(ms)", "bwd(ms)", "optim(ms)", "comm(ms)", "hidden", "hidden%", "comm%", "wait(ms)", "grad err");
  }
  for (const ModeResult& r : results) {
    const double comm_share = r.comm_ms / r.step_ms;
    const double hidden_frac = r.comm_ms > 0 ? r.hidden_ms / r.comm_ms : 0;
    const bool ok = r.grad_err < 1e-4 && r.param_err < 1e-4 && r.ranks_agree;
    if (r.mode != "none" && !ok) failed = true;
    if (print) {
      char vs_none[16] = "-", hidden_pct[16] = "-", err[24] = "-";
      if (none && r.mode != "none") std::snprintf(vs_none, sizeof vs_none, "%+.0f%%", 100 * (r.step_ms / none->step_ms - 1));
      if (r.comm_ms > 0) std::snprintf(hidden_pct, sizeof hidden_pct, "%.0f%%", 100 * hidden_frac);
      if (r.grad_err >= 0) std::snprintf(err, sizeof err, "%.1e%s", r.grad_err, ok ? "" : " BAD");
      else if (r.param_err >= 0) std::snprintf(err, sizeof err, "p%.1e%s", r.param_err, ok ? "" : " BAD");
      std::printf("  %-21s %7s %9.2f %9.2f %8s %9.2f %9.2f %9.2f %9.2f %9.2f %7s %6.0f%% %9.2f %10s\n", r.mode.c_str(),
                  r.buckets ? std::to_string(r.buckets).c_str() : "-", r.step_ms, r.step_min_ms, vs_none, r.cpu_ms,
                  r.backward_ms, r.optimizer_ms, r.comm_ms, r.hidden_ms, hidden_pct, 100 * comm_share, r.wait_ms, err);
      if (!r.ranks_agree) std::printf("  ^ parameters differ between ranks after the timed steps\n");
    }
    modes.push_back({{"mode", r.mode}, {"buckets", r.buckets}, {"step_ms", r.step_ms}, {"step_min_ms", r.step_min_ms},
                     {"step_series_ms", r.step_series},
                     {"backward_ms", r.backward_ms}, {"optimizer_ms", r.optimizer_ms}, {"cpu_ms", r.cpu_ms}, {"comm_ms", r.comm_ms}, {"hidden_ms", r.hidden_ms},
                     {"hidden_fraction", hidden_frac},
                     {"hidden_until_wait_ms", r.hidden_until_wait_ms}, {"comm_share", comm_share}, {"wait_ms", r.wait_ms},
                     {"grad_max_rel_err", r.grad_err}, {"param_max_rel_err_vs_overlap", r.param_err},
                     {"ranks_agree", r.ranks_agree},
                     {"bytes_per_parameter", {{"parameters", r.param_bytes}, {"gradients", r.grad_bytes},
                                              {"optimizer_state", r.state_bytes}, {"peak_params_grads_state", r.peak_pgs_bytes},
                                              {"allocator", r.allocated_bytes},
                                              {"allocator_peak", r.peak_bytes}}}});
  }
  if (print) print_memory(results, pg->size(), o.optimizer);
  nlohmann::json activations;
  if (print)
    std::printf("# activation memory per step on rank 0, MiB (the allocator's, largest of the timed steps; %s): kept "
                "by forward; peak above the step's start, gradients held then included (Note [Activation peak])\n",
                o.checkpoint_activations ? "blocks checkpointed" : "no checkpointing");
  for (const auto& run : runs) activations[run->mode] = apps::activation_row(run->mode, run->activations, print);
  nlohmann::json j = {{"model", name}, {"parameters", numel}, {"parameter_tensors", tensors},
                      {"batch_size", x.size(0)}, {"input", batch.input}, {"modes", modes},
                      {"checkpoint_activations", o.checkpoint_activations}, {"activation_memory", activations}};
  if (overlap && after) {
    // Communication's share of the step when nothing hides it (after-backward): from the trace,
    // and as the step time it adds over no_sync (which also counts DDP's gradient copies).
    const double share = after->comm_ms / after->step_ms;
    const double added = none ? (after->step_ms - none->step_ms) / after->step_ms : 0;
    // Paired comparison: the modes ran in turn, so step s of each saw the same load.
    std::vector<double> ratios;
    for (size_t s = 0; s < overlap->step_series.size(); ++s)
      ratios.push_back(after->step_series[s] / overlap->step_series[s]);
    std::sort(ratios.begin(), ratios.end());
    const size_t n = ratios.size();
    const double paired = n % 2 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
    // Within 2% counts as a tie: the spread between runs on a shared machine is larger.
    const bool beats = overlap->step_ms < after->step_ms && paired > 1.02;
    const bool loses = overlap->step_ms > after->step_ms && paired < 0.98;
    const bool same_layout = overlap->buckets == 1 && after->buckets == 1;
    const bool target = std::max(share, added) > 0.10;
    j["comm_share_after_backward"] = share;
    if (none) j["added_share_after_backward"] = added;
    j["overlap_speedup_vs_after_backward"] = after->step_ms / overlap->step_ms;
    j["overlap_speedup_paired_median"] = paired;
    j["overlap_beats_after_backward"] = beats;
    j["target_applies"] = target && !same_layout;
    char cost[64] = "";
    if (none) std::snprintf(cost, sizeof cost, ", %.0f%% by step time over none", 100 * added);
    const char* verdict = same_layout ? ": one bucket in both modes (the same layout), nothing to overlap"
                          : !target   ? ": <= 10%, no target"
                          : beats     ? ": overlap wins"
                          : loses     ? ": overlap LOSES"
                                      : ": a tie (within 2%), overlap does NOT win";
    if (print)
      std::printf("# overlap vs after-backward: median %.2f vs %.2f ms (%.2fx; median of paired steps %.2fx); "
                  "communication is %.0f%% of the after-backward step (trace%s)%s\n",
                  overlap->step_ms, after->step_ms, after->step_ms / overlap->step_ms, paired, 100 * share, cost,
                  verdict);
  }
  return j;
}

// Says how to start the benchmark when the launcher's variables are missing.
void check_launched(const Options& o) {
  if (o.backend == "mpi") return;  // rank and size come from mpirun
  if (std::getenv("RANK") && std::getenv("WORLD_SIZE")) return;
  GR_ERROR("RANK and WORLD_SIZE are not set: start bench_ddp under the launcher, e.g.\n"
           "  gradring-run --nproc-per-node 2 --standalone bench_ddp [options]");
}

int run(const Options& o) {
  check_launched(o);
  InitOptions init;
  init.backend = o.backend;
  init.timeout = std::chrono::minutes(5);
  ProcessGroupPtr pg = init_process_group(init);
  if (o.threads > 0) set_num_threads(o.threads);
  using backends::cpu::Conv2dAlgorithm;
  backends::cpu::set_conv2d_algorithm(o.conv_algorithm == "im2col"     ? Conv2dAlgorithm::kIm2col
                                   : o.conv_algorithm == "winograd" ? Conv2dAlgorithm::kWinograd
                                   : o.conv_algorithm == "direct"   ? Conv2dAlgorithm::kDirect
                                   : o.conv_algorithm == "dense"    ? Conv2dAlgorithm::kDense
                                                                    : Conv2dAlgorithm::kAuto);
  if (!o.trace_dir.empty()) std::filesystem::create_directories(o.trace_dir);
  apps::ProgressLines progress("bench_ddp", pg->rank() == 0);
  if (pg->rank() == 0 && !o.json) {
    std::printf("# gradring bench_ddp: %d ranks (%s), %d thread(s) per rank, %d timed steps (+%d warm-up) per mode, "
                "modes taking turns, %s, synthetic data, conv2d %s, "
                "buckets: first %g MiB, then %g MiB\n",
                pg->size(), pg->backend_name().c_str(), get_num_threads(), o.steps, o.warmup,
                o.optimizer == "adamw" ? "AdamW (lr 1e-3)" : "SGD (momentum 0.9)", o.conv_algorithm.c_str(),
                o.first_bucket_cap_mb, o.bucket_cap_mb);
    std::printf("# step = zero_grad + forward + backward + optimizer step; step(ms)/min(ms): median/min over steps of "
                "the slowest rank; other times per step, mean of ranks; cpu = CPU time of the rank's process (all "
                "threads)\n");
    std::printf("# optim = optimizer.step() after backward (0 where the step runs in backward); comm = time with a bucket all-reduce in flight; hidden = the part of it while backward still "
                "computed gradients (before the last bucket's launch); comm%% = comm / step\n");
    if (pg->size() == 1) std::printf("# note: one rank: the all-reduces copy nothing between processes\n");
  }
  bool failed = false;
  nlohmann::json models = nlohmann::json::array();
  for (const std::string& m : o.models) {
    Generator gen(o.seed * 7919 + static_cast<uint64_t>(pg->rank()) + 1);  // each rank its own data
    models.push_back(apps::with_bench_model(
        m, o.batch_size, o.image_size, gen,
        [&](auto& make, const apps::BenchBatch& b) { return bench_model(m, make, b, pg, o, progress, failed); },
        o.checkpoint_activations));
    std::fflush(stdout);
  }
  if (pg->rank() == 0 && o.json)
    std::printf("%s\n", nlohmann::json({{"ranks", pg->size()}, {"backend", pg->backend_name()},
                                        {"conv_algorithm", o.conv_algorithm},
                                        {"bucket_cap_mb", o.bucket_cap_mb}, {"first_bucket_cap_mb", o.first_bucket_cap_mb},
                                        {"threads", get_num_threads()}, {"steps", o.steps}, {"warmup", o.warmup},
                                        {"models", models}, {"ok", !failed}})
                            .dump()
                            .c_str());
  if (failed && pg->rank() == 0)
    std::fprintf(stderr, "bench_ddp: FAILED: DDP's gradients differ from a hand-made all-reduce, or ranks disagree\n");
  destroy_process_group();
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Time a DDP training step in four communication modes; run under gradring-run, e.g.\n"
               "  gradring-run --nproc-per-node 2 --standalone bench_ddp"};
  app.add_option("--model", o.models,
                 "reference (CNN, 1x28x28), resnet18 (3xSxS), gpt-tiny, gpt-small (train_gpt's presets, SGD here), comma-separated")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::IsMember({"reference", "resnet18", "gpt-tiny", "gpt-small"}));
  app.add_option("--modes", o.modes,
                 "overlap, after-backward, per-parameter, none, zero1, zero2, zero2-fwd, optimizer-in-backward, fsdp, "
                 "fsdp-keep, fsdp-noprefetch, fsdp-pieces, fsdp-lean (comma-separated)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::IsMember({"overlap", "after-backward", "per-parameter", "none", "zero1", "zero2", "zero2-fwd",
                             "optimizer-in-backward", "fsdp", "fsdp-keep", "fsdp-noprefetch", "fsdp-pieces", "fsdp-lean"}));
  app.add_option("--batch-size", o.batch_size, "images (sequences) per rank and step (default: 64 reference, 32 resnet18, 12 gpt-tiny, 8 gpt-small)")
      ->check(apps::positive());
  app.add_option("--image-size", o.image_size, "ResNet-18 input height and width")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{32}, int64_t{1024}));
  app.add_option("--steps", o.steps, "timed steps per mode")->capture_default_str()->check(apps::positive());
  app.add_option("--warmup", o.warmup, "untimed steps per mode first")->capture_default_str()->check(apps::non_negative());
  app.add_option("--threads", o.threads, "CPU threads per rank (default: OMP_NUM_THREADS, 1 under gradring-run with several ranks)")
      ->check(apps::non_negative());
  app.add_option("--conv-algorithm", o.conv_algorithm, "CPU conv2d algorithm: auto, im2col, winograd, direct or dense")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "im2col", "winograd", "direct", "dense"}));
  app.add_option("--backend", o.backend, "process group: gloo, shm or hierarchical (shm in a node, Gloo across; under gradring-run), or mpi (under mpirun)")
      ->check(CLI::IsMember({"gloo", "shm", "hierarchical", "mpi"}))
      ->capture_default_str();
  app.add_option("--bucket-cap-mb", o.bucket_cap_mb, "bucket size cap of the overlap (and sharding) modes, MiB")
      ->capture_default_str()
      ->check(apps::positive());
  app.add_option("--first-bucket-cap-mb", o.first_bucket_cap_mb, "the first bucket's cap, MiB")
      ->capture_default_str()
      ->check(apps::positive());
  app.add_option("--fsdp-piece-mb", o.fsdp_piece_mb, "fsdp-pieces and fsdp-lean: reduce-scatter and gather pieces, MiB")
      ->capture_default_str()
      ->check(apps::positive());
  app.add_flag("--gradient-as-bucket-view", o.gradient_as_bucket_view,
               "DDP's gradients are views into the buckets (no copy in or out; PyTorch's option of that name)");
  app.add_option("--optimizer", o.optimizer, "sgd (momentum 0.9, lr 0.01) or adamw (lr 1e-3, weight decay 0.01)")
      ->capture_default_str()
      ->check(CLI::IsMember({"sgd", "adamw"}));
  app.add_flag("--checkpoint-activations", o.checkpoint_activations,
               "GPT models: every transformer block but the last a checkpoint (gr::utils::checkpoint), as train_gpt's flag");
  app.add_option("--seed", o.seed, "seed for the model and the synthetic data")->capture_default_str();
  app.add_option("--trace", o.trace_dir, "write the overlap mode's Chrome trace of every rank into this folder");
  app.add_flag("--json", o.json, "print the results as one JSON object on the last line (rank 0)");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(o);
  } catch (const gr::Error& e) {
    std::fprintf(stderr, "bench_ddp: %s\n", e.message().c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_ddp: %s\n", e.what());
    return 1;
  }
}
