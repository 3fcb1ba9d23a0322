// train_gpt: trains a GPT on a text file of bytes (by default the works of Shakespeare) and
// reports loss, validation loss, tokens/s and MFU; on one process, or data-parallel (DDP) on
// every rank that gradring-run or mpirun starts; --generate samples from a checkpoint. See
// README.md ("Apps") for the command line and bench/gpt_torch.py for the PyTorch peer.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <gradring/gradring.h>
#include <nlohmann/json.hpp>

#include "core/native/gemm_packed.h"

#include "common/cli.h"
#include "common/gpt.h"
#include "common/gpt_sample.h"
#include "common/gpu_peak.h"
#include "common/job.h"
#include "common/peak_flops.h"
#include "common/progress.h"
#include "distributed/ddp/ddp.h"
#include "distributed/ddp/zero_redundancy_optimizer.h"
#include "nn/snapshot.h"

using namespace gr;
using apps::Job;
using Clock = std::chrono::steady_clock;
namespace ds = gr::data::datasets;

namespace {

struct Options {
  std::string data;  // default: the corpus scripts/setup --with-data writes
  std::string model = "tiny";
  int64_t layers = 0, heads = 0, embd = 0, block = 0, batch_size = 0;  // 0: the preset's
  int64_t steps = 2000, grad_accum = 1, warmup = 100, eval_every = 250, eval_windows = 256;
  double lr = 1e-3, min_lr = -1, weight_decay = 0.1, dropout = 0.0, clip = 1.0;
  int threads = 0;
  uint64_t seed = 1;
  std::string dtype = "float32";
  std::string device = "cpu";
  std::string backend;
  std::string snapshot, save, load, curve, profile;
  int64_t save_every = 0;
  int zero = 0;  // 1: ZeRO-1 (the AdamW state sharded over the ranks)
  int64_t sample = 200;
  double temperature = 0.8;
  int64_t top_k = 40;
  std::string prompt;
  bool generate = false;
  bool json = false;
  bool deterministic = false;  // gr::use_deterministic_algorithms(true): the same bits every run
};

std::string default_corpus() {
  const char* dir = std::getenv("GRADRING_DATA_DIR");
  const char* home = std::getenv("HOME");
  if (dir != nullptr) return std::string(dir) + "/shakespeare.txt";
  return std::string(home != nullptr ? home : ".") + "/.cache/gradring/shakespeare.txt";
}

apps::GPTConfig config_of(const Options& o) {
  apps::GPTConfig c = apps::gpt_preset(o.model);
  if (o.layers > 0) c.layers = o.layers;
  if (o.heads > 0) c.heads = o.heads;
  if (o.embd > 0) c.embd = o.embd;
  if (o.block > 0) c.block = o.block;
  c.dropout = o.dropout;
  return c;
}

// Sequences per micro-batch and rank: --batch-size, else the preset's.
int64_t batch_size_of(const Options& o) {
  return o.batch_size > 0 ? o.batch_size : apps::gpt_preset_batch(o.model);
}

double lr_at(const Options& o, int64_t step) {
  return apps::gpt_lr_at(step, o.lr, o.warmup, o.steps, o.min_lr >= 0 ? o.min_lr : o.lr / 10);
}

// The training micro-batches in run order, [B, L] each, from a loader of B windows per batch
// (drop_last, E batches per epoch): micro-batch k is batch k mod E of epoch k / E, so the
// stream can start at any k (Note [GPT resume]) and only the first batch after a start or an
// epoch's end waits for a new epoch.
template <class Loader>
class MicroBatches {
 public:
  MicroBatches(Loader& loader, int64_t per_epoch) : loader_(loader), per_epoch_(per_epoch) {}
  data::Example<> operator()(int64_t k) {
    const int64_t epoch = k / per_epoch_, index = k % per_epoch_;
    if (epoch_ && epoch_->epoch() == epoch && it_->index() + 1 == index) {
      ++*it_;
    } else {
      epoch_.emplace(loader_.epoch(epoch, index));
      it_.emplace(epoch_->begin());
    }
    return std::move(**it_);
  }

 private:
  Loader& loader_;
  int64_t per_epoch_;
  std::optional<typename Loader::Epoch> epoch_;
  std::optional<typename Loader::Iterator> it_;
};

// --zero 1: the AdamW (its parameter groups and options) becomes a ZeroRedundancyOptimizer
// over the job's ranks, each keeping the state of its own partition.
distributed::ZeroRedundancyOptimizer* shard_optimizer(std::unique_ptr<optim::Optimizer>& optimizer, const Job& job) {
  GR_CHECK(job.distributed(), "--zero 1 shards the optimizer state over the ranks: start train_gpt under gradring-run "
                              "or mpirun");
  std::vector<optim::OptimizerParamGroup> groups;
  for (auto& group : optimizer->param_groups()) groups.emplace_back(group.params(), group.options().clone());
  const auto& adamw = static_cast<const optim::AdamWOptions&>(optimizer->defaults());
  auto zero = std::make_unique<distributed::ZeroRedundancyOptimizer>(
      std::move(groups), distributed::optimizer_class<optim::AdamW>(adamw), job.group);
  auto* raw = zero.get();
  optimizer = std::move(zero);
  return raw;
}

// Every rank resumes from its own snapshot: they must all be of the same step.
void check_same_step(const Job& job, int64_t step) {
  const std::vector<double> lo = apps::reduce(job, {static_cast<double>(step)}, distributed::ReduceOp::Min);
  const std::vector<double> hi = apps::reduce(job, {static_cast<double>(step)}, distributed::ReduceOp::Max);
  GR_CHECK(lo[0] == hi[0], "--zero 1: the ranks' snapshots are of different steps (", lo[0], " to ", hi[0],
           "); every rank must resume from its own snapshot of the same step");
}

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

struct Corpus {
  std::vector<uint16_t> train, val;
};

// The file's bytes, split 90% train, 10% validation (the same split as bench/gpt_torch.py).
Corpus read_corpus(const std::string& path) {
  GR_CHECK(std::filesystem::exists(path), "no corpus at '", path,
           "': run scripts/setup --with-data to fetch the works of Shakespeare there, or pass --data FILE (any text file)");
  std::vector<uint16_t> all = ds::TokenDataset::read_file(path, ds::TokenFormat::kUInt8);
  const auto split = static_cast<size_t>(static_cast<double>(all.size()) * 0.9);
  Corpus c;
  c.train.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(split));
  c.val.assign(all.begin() + static_cast<std::ptrdiff_t>(split), all.end());
  return c;
}

// --dtype bf16: float32 master weights and optimizer, the forward and the loss under CPU
// autocast (matmuls and attention in bfloat16, the loss in float32; Note [Autocast]), the
// backward outside it, as torch.autocast's recipe. Other dtypes: a disabled guard.
autocast::AutocastGuard mixed_precision(const Options& o, const Job& job) {
  return autocast::AutocastGuard(job.device.type(), kBFloat16, o.dtype == "bf16");
}

// Mean loss over the first `windows` validation windows, split over the ranks (rank r takes
// r, r + R, ...), so the figure does not depend on the world size.
double evaluate(const Options& o, const Job& job, apps::GPT& model, ds::TokenDataset val, int64_t windows,
                int64_t batch) {
  NoGradGuard no_grad;
  auto amp = mixed_precision(o, job);
  model->eval();
  double sum = 0, count = 0;
  const size_t shared = std::min(static_cast<size_t>(windows), *val.size());
  auto loader = data::make_data_loader(val.map(data::transforms::Stack<>()),
                                       data::samplers::ShardSampler(shared, job.world, job.rank),
                                       data::DataLoaderOptions(static_cast<size_t>(batch)).pin_memory(job.device.is_cuda()));
  for (data::Example<>& b : *loader) {
    const auto rows = static_cast<double>(b.data.size(0));
    sum += model->loss(model(b.data.to(job.device, /*non_blocking=*/true)), b.target.to(job.device, /*non_blocking=*/true))
               .item<double>() * rows;
    count += rows;
  }
  model->train();
  auto totals = apps::reduce(job, {sum, count});
  return totals[0] / std::max(totals[1], 1.0);
}

// Weights from a safetensors file, converted to the model's dtype (a float64 check run's
// checkpoint samples in float32, and the other way round).
void load_weights(apps::GPT& model, const std::string& path) {
  const ScalarType dtype = model->wte->weight.scalar_type();
  OrderedDict<Tensor> weights;
  for (auto& item : load(path)) weights.insert(item.key(), item.value().to(dtype));
  model->load_state_dict(weights);
}

int generate(const Options& o, const Job& job) {
  GR_CHECK(!o.load.empty(), "--generate needs --load CHECKPOINT (the weights train_gpt --save wrote)");
  manual_seed(o.seed);
  apps::GPT model(config_of(o));
  load_weights(model, o.load);
  model->to(job.device);
  std::printf("%s%s\n", o.prompt.c_str(), apps::sample_text(model, o.prompt, o.sample, o.temperature, o.top_k).c_str());
  return 0;
}

int run(const Options& o, Job& job) {
  set_num_threads(apps::resolve_threads(o.threads, job.distributed()));
  use_deterministic_algorithms(o.deterministic);
  if (o.generate) return generate(o, job);
  GR_CHECK(o.dtype != "bf16" || job.device.is_cpu(), "--dtype bf16 is CPU autocast; on ", job.device,
           " train in float32 (autocast on CUDA is not implemented yet)");
  manual_seed(o.seed);
  const apps::GPTConfig config = config_of(o);
  const int64_t B = batch_size_of(o), T = config.block;
  const Corpus corpus = read_corpus(o.data.empty() ? default_corpus() : o.data);
  ds::TokenDataset train(corpus.train, ds::TokenDatasetOptions(T).seed(o.seed).num_replicas(job.world).rank(job.rank), "train split");
  ds::TokenDataset val(corpus.val, ds::TokenDatasetOptions(T).seed(o.seed), "validation split");
  const int64_t per_epoch = static_cast<int64_t>(*train.size()) / B;  // micro-batches per epoch and rank
  GR_CHECK(per_epoch >= 1, "the training split holds ", *train.size(), " windows per rank, fewer than a batch of ", B);
  // Batches to a GPU through page-locked memory without waiting: a copy from pageable memory
  // would make the host wait for the device (Note [Host synchronisations] in cuda_kernels/runtime.h).
  auto loader = data::make_data_loader(train.map(data::transforms::Stack<>()), data::samplers::SequentialSampler(*train.size()),
                                       data::DataLoaderOptions(static_cast<size_t>(B)).drop_last(true).pin_memory(job.device.is_cuda()));
  MicroBatches next_batch(*loader, per_epoch);

  apps::GPT model(config);
  if (o.dtype == "float64") model->to(kFloat64);
  if (!o.load.empty()) load_weights(model, o.load);
  model->to(job.device);
  std::unique_ptr<nn::parallel::DistributedDataParallel<apps::GPTImpl>> ddp;
  if (job.distributed()) ddp = std::make_unique<nn::parallel::DistributedDataParallel<apps::GPTImpl>>(model, job.group);
  auto forward = [&](const Tensor& x) { return ddp ? ddp->forward(x) : model(x); };
  std::unique_ptr<optim::Optimizer> optimizer = apps::make_gpt_optimizer(model, o.lr, o.weight_decay);
  auto* zero = o.zero == 1 ? shard_optimizer(optimizer, job) : nullptr;
  std::vector<Tensor> params = model->parameters();

  // Note [GPT resume]: batch k of the run is window rows [(k mod E) B, (k mod E + 1) B) of
  // epoch k / E (E micro-batches per epoch), a function of k alone, and the dropout masks
  // come from the default generator the snapshot holds: resuming at step s repeats exactly
  // what the uninterrupted run would have done. With --zero 1 every rank keeps its own
  // snapshot (FILE.rank<r>: the weights and its shard of the optimizer state).
  const std::string snapshot_path = zero ? o.snapshot + ".rank" + std::to_string(job.rank) : o.snapshot;
  int64_t step = 0;
  if (!o.snapshot.empty() && std::filesystem::exists(snapshot_path)) {
    Snapshot s = load_snapshot(snapshot_path, job.world);
    restore_snapshot(s, *model, optimizer.get());
    step = s.global_step;
    if (job.leader() && !o.json) std::printf("resuming from %s at step %lld\n", snapshot_path.c_str(), static_cast<long long>(step));
  }
  if (zero) check_same_step(job, step);
  auto save_snapshot_now = [&](int64_t steps_done) {
    if (o.snapshot.empty() || (!job.leader() && !zero)) return;
    Snapshot s = capture_snapshot(*model, zero ? nullptr : optimizer.get());
    if (zero) s.optimizer = zero->local_state_dict();
    s.global_step = steps_done;
    s.world_size = job.world;
    s.user["seed"] = std::to_string(o.seed);
    save_snapshot(snapshot_path, s);
    // Every rank's shard of this step is on disk before any rank goes on (and a test's kill
    // after this step finds them all written).
    if (zero) job.group->barrier()->wait();
  };

  const double flops_per_token = model->flops_per_token();
  // The MFU's denominator: on the CPU the measured FMA peak of the cores (Note [Measured peak];
  // bf16's against the bfloat16 peak where products run on bfloat16 pairs), on a GPU that GPU's
  // dense peak for the dtype (Note [GPU peak]), times the ranks.
  const bool bf16_pairs = o.dtype == "bf16" && job.device.is_cpu() && native::bf16_pair_products();
  std::string peak_source = "measured: the float32 FMA peak of " + std::to_string(get_num_threads()) + " core(s)";
  double peak = 0;
  if (job.device.is_cuda()) {
    const apps::DevicePeak p = apps::gpu_peak(job.device, o.dtype == "bf16" ? kBFloat16 : o.dtype == "float64" ? kFloat64 : kFloat32);
    peak = p.gflops * 1e9 * job.world;
    peak_source = p.source;
  } else {
    peak = apps::measured_peak_gflops_per_core(bf16_pairs) * 1e9 * get_num_threads() * job.world;
    if (bf16_pairs) peak_source = "measured: the bfloat16 pair-product peak of " + std::to_string(get_num_threads()) + " core(s)";
  }
  if (job.leader() && o.dtype == "bf16" && job.device.is_cpu() && !bf16_pairs)
    std::fprintf(stderr, "train_gpt: notice: this CPU (as built, -march=native) has no AVX512_BF16: bfloat16 products "
                         "are widened to float32, so --dtype bf16 runs at about float32's speed less the casts\n");
  if (job.leader() && !o.json)
    std::printf("GPT: %lld layers, %lld heads, width %lld, context %lld, %.2fM parameters; batch %lld x %lld ranks x %lld "
                "accumulated; %s, %d thread(s) per rank; peak %.0f GFLOP/s (%s)\n",
                static_cast<long long>(config.layers), static_cast<long long>(config.heads),
                static_cast<long long>(config.embd), static_cast<long long>(T), model->num_params() / 1e6,
                static_cast<long long>(B), static_cast<long long>(job.world), static_cast<long long>(o.grad_accum),
                o.dtype.c_str(), get_num_threads(), peak / 1e9, peak_source.c_str());
  std::FILE* curve = !o.curve.empty() && job.leader() ? std::fopen(o.curve.c_str(), step > 0 ? "a" : "w") : nullptr;
  GR_CHECK(o.curve.empty() || !job.leader() || curve != nullptr, "cannot write --curve ", o.curve);

  const int64_t kill_at = apps::test_kill_step(job.rank);  // a test hook
  apps::ProgressBar bar("train", o.steps, std::chrono::seconds(o.json ? 0 : 5));
  const int64_t tokens_per_step = B * T * o.grad_accum * job.world;
  double timed_seconds = 0, train_loss = NAN, val_loss = NAN;
  int64_t timed_tokens = 0;
  const int64_t first_step = step;
  const int64_t warm_steps = std::min<int64_t>(3, (o.steps - first_step) / 2);  // left out of tokens/s
  for (; step < o.steps; ++step) {
    // The profile covers the timed steps: the first ones warm the allocator and the caches.
    if (!o.profile.empty() && step - first_step == warm_steps) profiler::enable();
    const auto t0 = Clock::now();
    for (auto& group : optimizer->param_groups()) group.options().set_lr(lr_at(o, step));
    {
      profiler::ScopedEvent span("zero_grad");
      optimizer->zero_grad();
    }
    double loss_sum = 0;
    for (int64_t k = 0; k < o.grad_accum; ++k) {
      auto batch = [&] {
        profiler::ScopedEvent span("batch");
        data::Example<> b = next_batch(step * o.grad_accum + k);
        return data::Example<>{b.data.to(job.device, /*non_blocking=*/true), b.target.to(job.device, /*non_blocking=*/true)};
      }();
      auto micro_step = [&] {
        Tensor loss;
        {
          profiler::ScopedEvent span("forward");
          auto amp = mixed_precision(o, job);
          loss = model->loss(forward(batch.data), batch.target) / static_cast<double>(o.grad_accum);
        }
        {
          profiler::ScopedEvent span("backward");
          loss.backward();
        }
        loss_sum += loss.item<double>();
      };
      if (ddp && k + 1 < o.grad_accum) {
        auto guard = ddp->no_sync();  // gradients accumulate locally; the last micro-batch reduces
        micro_step();
      } else {
        micro_step();
      }
    }
    if (o.clip > 0) {  // clip_grad_norm_ without reading the norm back: no host synchronisation
      profiler::ScopedEvent span("clip_grad_norm_");
      std::vector<Tensor> grads;
      for (const Tensor& p : params)
        if (p.grad().defined()) grads.push_back(p.grad());
      nn::utils::clip_grads_with_norm_(params, o.clip, nn::utils::get_total_norm(grads));
    }
    {
      profiler::ScopedEvent span("optimizer.step");
      optimizer->step();
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (step - first_step >= warm_steps) {  // the first steps warm the allocator and the caches
      timed_seconds += seconds;
      timed_tokens += tokens_per_step;
    }
    const bool last = step + 1 == o.steps;
    const bool eval_now = last || (o.eval_every > 0 && (step + 1) % o.eval_every == 0);
    const bool report = eval_now || last || step % 10 == 0;
    if (report) train_loss = apps::reduce(job, {loss_sum})[0] / job.world;
    if (eval_now) {  // the profile covers training steps only
      const bool profiling = profiler::enabled();
      profiler::enable(false);
      val_loss = evaluate(o, job, model, val, o.eval_windows, B);
      profiler::enable(profiling);
    }
    if ((o.save_every > 0 && (step + 1) % o.save_every == 0) || last) save_snapshot_now(step + 1);
    if (kill_at > 0 && kill_at == step + 1) std::raise(SIGKILL);
    if (!job.leader()) continue;
    const double tps = timed_seconds > 0 ? static_cast<double>(timed_tokens) / timed_seconds : 0;
    if (report && !o.json) {
      char status[160];
      std::snprintf(status, sizeof status, "loss %.4f lr %.2e %.0f tok/s MFU %.0f%%", train_loss, lr_at(o, step), tps,
                    100.0 * tps * flops_per_token / peak);
      bar.update(step + 1, status);
      if (eval_now) {
        bar.finish();
        std::printf("step %lld: train loss %.4f, val loss %.4f, %.0f tokens/s\n", static_cast<long long>(step + 1),
                    train_loss, val_loss, tps);
      }
    }
    if (curve != nullptr && report) {
      std::fprintf(curve, "%lld,%.6f,", static_cast<long long>(step + 1), train_loss);
      if (eval_now) std::fprintf(curve, "%.6f", val_loss);
      std::fprintf(curve, "\n");
    }
  }
  bar.finish();
  if (curve != nullptr) std::fclose(curve);
  if (!o.profile.empty()) {
    profiler::enable(false);
    if (job.leader()) {
      profiler::write_chrome_trace(o.profile);
      if (!o.json) std::printf("profile (training steps, rank 0):\n%s(trace written to %s)\n", profiler::table().c_str(), o.profile.c_str());
    }
  }
  if (!o.save.empty() && job.leader()) save(model, o.save);
  const double tps = timed_seconds > 0 ? static_cast<double>(timed_tokens) / timed_seconds : 0;
  std::string text;
  if (o.sample > 0 && job.leader()) text = apps::sample_text(model, o.prompt, o.sample, o.temperature, o.top_k);
  if (!job.leader()) return 0;
  if (o.json) {
    nlohmann::json j = {{"steps", o.steps},           {"world_size", job.world},     {"tokens_per_sec", tps},
                        {"train_loss", train_loss},   {"val_loss", val_loss},        {"mfu", tps * flops_per_token / peak},
                        {"peak_gflops", peak / 1e9},  {"peak_source", peak_source},    {"params", model->num_params()},
                        {"peak_rss_mb", peak_rss_mb()},
                        {"threads", get_num_threads()}, {"dtype", o.dtype},
                        {"deterministic", are_deterministic_algorithms_enabled()}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("done: %lld steps, train loss %.4f, val loss %.4f, %.0f tokens/s (MFU %.1f%%), peak RSS %.0f MB\n",
                static_cast<long long>(o.steps), train_loss, val_loss, tps, 100.0 * tps * flops_per_token / peak, peak_rss_mb());
    if (!o.save.empty()) std::printf("saved the weights to %s\n", o.save.c_str());
    if (!text.empty()) std::printf("sample:\n%s%s\n", o.prompt.c_str(), text.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Train a GPT on a text file (bytes; default: the works of Shakespeare) with gradring; data-parallel under gradring-run or mpirun."};
  app.add_option("--data", o.data, "text file to train on (default: " + default_corpus() + ", written by scripts/setup --with-data)");
  app.add_option("--model", o.model, "preset: tiny (4 layers, 4 heads, 128 wide, context 64, batch 12) or small (6, 6, 384, 256, batch 8)")
      ->capture_default_str()
      ->check(CLI::IsMember({"tiny", "small"}));
  app.add_option("--layers", o.layers, "transformer blocks (default: the preset's)")->check(apps::positive());
  app.add_option("--heads", o.heads, "attention heads (default: the preset's)")->check(apps::positive());
  app.add_option("--embd", o.embd, "width (default: the preset's)")->check(apps::positive());
  app.add_option("--block", o.block, "context length in tokens (default: the preset's)")->check(apps::positive());
  app.add_option("--batch-size", o.batch_size, "sequences per micro-batch and rank (default: the preset's)")->check(apps::positive());
  app.add_option("--grad-accum", o.grad_accum, "micro-batches accumulated (no_sync) per optimizer step")->capture_default_str()->check(apps::positive());
  app.add_option("--steps", o.steps, "optimizer steps")->capture_default_str()->check(apps::positive());
  app.add_option("--lr", o.lr, "peak learning rate (AdamW, betas 0.9 and 0.95)")->capture_default_str()->check(apps::positive());
  app.add_option("--min-lr", o.min_lr, "learning rate at the end of the cosine decay (default: lr / 10)")->check(apps::non_negative());
  app.add_option("--warmup", o.warmup, "steps of linear learning-rate warmup")->capture_default_str()->check(apps::positive());
  app.add_option("--weight-decay", o.weight_decay, "AdamW weight decay of the matrices")->capture_default_str()->check(apps::non_negative());
  app.add_option("--dropout", o.dropout, "dropout probability")->capture_default_str()->check(CLI::Range(0.0, 0.99));
  app.add_option("--clip", o.clip, "global gradient-norm clipping (0: off)")->capture_default_str()->check(apps::non_negative());
  app.add_option("--threads", o.threads, "CPU threads per process (default: OMP_NUM_THREADS, else the cores shared among this node's ranks)")
      ->check(apps::non_negative());
  app.add_option("--seed", o.seed, "seed for initialisation, batches, dropout and sampling")->capture_default_str();
  app.add_option("--dtype", o.dtype, "float32, float64 (for checks against PyTorch), or bf16 (float32 weights, CPU autocast: matmuls and attention in bfloat16)")
      ->capture_default_str()
      ->check(CLI::IsMember({"float32", "float64", "bf16"}));
  app.add_option("--eval-every", o.eval_every, "steps between validation losses (0: only at the end)")->capture_default_str()->check(apps::non_negative());
  app.add_option("--eval-windows", o.eval_windows, "validation windows the loss is averaged over")->capture_default_str()->check(apps::positive());
  app.add_option("--load", o.load, "initial weights (safetensors; also what --generate samples from)");
  app.add_option("--save", o.save, "write the final weights here (safetensors; rank 0)");
  auto* snapshot_opt = app.add_option("--snapshot", o.snapshot, "resume from this snapshot if it exists; rank 0 writes it every --save-every steps and at the end");
  app.add_option("--save-every", o.save_every, "steps between snapshots (0: the end only)")->capture_default_str()->check(apps::non_negative())->needs(snapshot_opt);
  app.add_option("--zero", o.zero, "1: ZeRO-1, the AdamW state sharded over the ranks (ZeroRedundancyOptimizer); snapshots are then one file per rank, FILE.rank<r>")
      ->capture_default_str()
      ->check(CLI::IsMember({0, 1}));
  app.add_option("--profile", o.profile, "profile the training steps: print a per-op table and write a Chrome trace here (rank 0's)");
  app.add_option("--curve", o.curve, "append step,train_loss,val_loss lines to this CSV file (rank 0)");
  app.add_option("--sample", o.sample, "bytes of text to sample at the end (0: none)")->capture_default_str()->check(apps::non_negative());
  app.add_option("--temperature", o.temperature, "sampling temperature (0: greedy)")->capture_default_str()->check(apps::non_negative());
  app.add_option("--top-k", o.top_k, "sample among the k likeliest bytes (0: all)")->capture_default_str()->check(apps::non_negative());
  app.add_option("--prompt", o.prompt, "text the sample continues");
  app.add_flag("--generate", o.generate, "no training: sample --sample bytes from the weights in --load");
  app.add_option("--device", o.device, "cpu, cuda (each rank takes cuda:<local rank>) or cuda:N")->capture_default_str();
  app.add_option("--backend", o.backend, "process group when distributed: gloo (default on the CPU), shm, nccl (default with --device cuda) or mpi (under mpirun)")
      ->check(CLI::IsMember({"gloo", "shm", "nccl", "mpi"}));
  app.add_flag("--deterministic", o.deterministic,
               "deterministic algorithms only (gr::use_deterministic_algorithms): on a GPU the same seed gives the "
               "same bits every run (see docs/cuda.md)");
  app.add_flag("--json", o.json, "print one JSON object (tokens_per_sec, train_loss, val_loss, steps, world_size, mfu, peak_rss_mb) as the last line");
  CLI11_PARSE(app, argc, argv);

  Job job;
  try {
    job = apps::start_job(o.device, o.backend, "train_gpt");
    int rc = run(o, job);
    if (job.distributed()) distributed::destroy_process_group();
    return rc;
  } catch (const gr::Error& e) {
    apps::report_error("train_gpt", job, e);
    return 1;
  }
}
