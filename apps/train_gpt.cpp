// train_gpt: trains a GPT on a text file of bytes (by default the works of Shakespeare) and
// reports loss, validation loss, tokens/s and MFU; on one process, or data-parallel (DDP, or
// fully sharded with --fsdp) on every rank that gradring-run or mpirun starts; --generate
// samples from a checkpoint. See
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

#include "common/activation_memory.h"
#include "common/cli.h"
#include "common/gpt.h"
#include "common/gpt_sample.h"
#include "common/gpt_training.h"
#include "common/gpu_peak.h"
#include "common/job.h"
#include "common/peak_flops.h"
#include "common/progress.h"
#include "distributed/ddp/ddp.h"
#include "distributed/ddp/zero_redundancy_optimizer.h"
#include "distributed/fsdp/fsdp_checkpoint.h"
#include "distributed/fsdp/fully_shard.h"
#include "nn/snapshot.h"

using namespace gr;
using apps::Job;
using Clock = std::chrono::steady_clock;
namespace ds = gr::data::datasets;
namespace fsdp = gr::distributed::fsdp;
using gr::apps::MicroBatches;

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
  bool fsdp = false;  // fully_shard: every block a unit, then the model
  int64_t sample = 200;
  double temperature = 0.8;
  int64_t top_k = 40;
  std::string prompt;
  bool generate = false;
  bool json = false;
  bool checkpoint_activations = false;
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
  c.checkpoint_activations = o.checkpoint_activations;
  return c;
}

// Sequences per micro-batch and rank: --batch-size, else the preset's.
int64_t batch_size_of(const Options& o) {
  return o.batch_size > 0 ? o.batch_size : apps::gpt_preset_batch(o.model);
}

double lr_at(const Options& o, int64_t step) {
  return apps::gpt_lr_at(step, o.lr, o.warmup, o.steps, o.min_lr >= 0 ? o.min_lr : o.lr / 10);
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

// --dtype bf16: float32 master weights and optimizer, the forward and the loss under the
// device's autocast (matmuls and attention in bfloat16, the loss in float32, on CUDA also the
// layer norms; Note [Autocast]), the backward outside it, as torch.autocast's recipe. Other
// dtypes: a disabled guard.
autocast::AutocastGuard mixed_precision(const Options& o, const Job& job) {
  return autocast::AutocastGuard(job.device.type(), kBFloat16, o.dtype == "bf16");
}

// Mean loss over the first `windows` validation windows, split over the ranks (rank r takes
// r, r + R, ...), so the figure does not depend on the world size. With --fsdp every forward
// is collective (the units' gathers): a rank with fewer batches than rank 0 runs extra
// forwards on the first window and counts nothing from them.
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
  size_t batches = 0;
  for (data::Example<>& b : *loader) {
    const auto rows = static_cast<double>(b.data.size(0));
    sum += model->loss(model(b.data.to(job.device, /*non_blocking=*/true)), b.target.to(job.device, /*non_blocking=*/true))
               .item<double>() * rows;
    count += rows;
    ++batches;
  }
  if (o.fsdp) {  // rank 0's share is the largest: ceil(shared / R) windows
    const size_t most = (shared + job.world - 1) / job.world, rank0_batches = (most + batch - 1) / batch;
    for (; batches < rank0_batches; ++batches) model(val.get(0).data.unsqueeze(0).to(job.device));
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

using DDP = nn::parallel::DistributedDataParallel<apps::GPTImpl>;
using TrainLoader = data::StatelessDataLoader<ds::MapDataset<ds::TokenDataset, data::transforms::Stack<>>, data::samplers::SequentialSampler>;

bool seed_run(const Options& o) {
  GR_CHECK(!o.fsdp || o.zero == 0, "--fsdp shards the AdamW state itself: drop --zero 1");
  manual_seed(o.seed);
  return true;
}

// One training run: the data, the model (in DDP when distributed, or fully_shard units with
// --fsdp), its optimizer (sharded with --zero 1), the step it is at (Note [GPT resume]) and what
// it measures.
struct Training {
  const Options& o;
  Job& job;
  bool seeded;  // first: the seed is set before the model's weights are drawn
  const apps::GPTConfig config;
  const int64_t B, T;
  const Corpus corpus;
  ds::TokenDataset train, val;
  const int64_t per_epoch;  // micro-batches per epoch and rank
  std::unique_ptr<TrainLoader> loader;
  std::unique_ptr<MicroBatches<TrainLoader>> next_batch;
  apps::GPT model;
  std::unique_ptr<DDP> ddp;
  std::optional<fsdp::FSDPModule> sharded;  // --fsdp: the root unit
  std::unique_ptr<optim::Optimizer> optimizer;
  distributed::ZeroRedundancyOptimizer* zero = nullptr;
  std::vector<Tensor> params;
  std::string snapshot_path;
  int64_t step = 0;
  double flops_per_token = 0, peak = 0;  // per token; all ranks' peak FLOP/s
  std::string peak_source;  // where the peak comes from
  double timed_seconds = 0, train_loss = NAN, val_loss = NAN;
  int64_t timed_tokens = 0;
  apps::ActivationMemory memory;  // the largest of every micro-step's figures

  Training(const Options& options, Job& j);
  Tensor forward(const Tensor& x) { return ddp ? ddp->forward(x) : model(x); }
};

Training::Training(const Options& options, Job& j)
    : o(options),
      job(j),
      seeded(seed_run(options)),
      config(config_of(options)),
      B(batch_size_of(options)),
      T(config.block),
      corpus(read_corpus(options.data.empty() ? default_corpus() : options.data)),
      train(corpus.train, ds::TokenDatasetOptions(T).seed(options.seed).num_replicas(j.world).rank(j.rank), "train split"),
      val(corpus.val, ds::TokenDatasetOptions(T).seed(options.seed), "validation split"),
      per_epoch(static_cast<int64_t>(*train.size()) / B),
      model(config) {
  GR_CHECK(per_epoch >= 1, "the training split holds ", *train.size(), " windows per rank, fewer than a batch of ", B);
  // Batches to a GPU through page-locked memory without waiting: a copy from pageable memory
  // would make the host wait for the device (Note [Host synchronisations] in cuda_kernels/runtime.h).
  loader = data::make_data_loader(train.map(data::transforms::Stack<>()), data::samplers::SequentialSampler(*train.size()),
                                  data::DataLoaderOptions(static_cast<size_t>(B)).drop_last(true).pin_memory(job.device.is_cuda()));
  next_batch = std::make_unique<MicroBatches<TrainLoader>>(*loader, per_epoch);
  if (o.dtype == "float64") model->to(kFloat64);
  if (!o.load.empty()) load_weights(model, o.load);
  model->to(job.device);
  if (o.fsdp) sharded = apps::shard_model(model, job);
  else if (job.distributed()) ddp = std::make_unique<DDP>(model, job.group);
  // With --fsdp the optimizer steps this rank's shards (the same two groups: they keep their dims).
  optimizer = apps::make_gpt_optimizer(sharded ? sharded->parameters() : model->parameters(), o.lr, o.weight_decay);
  if (o.zero == 1) zero = apps::shard_optimizer(optimizer, job);
  params = model->parameters();
  snapshot_path = zero ? o.snapshot + ".rank" + std::to_string(job.rank) : o.snapshot;
  flops_per_token = model->flops_per_token();
}

// Note [GPT resume]: batch k of the run is window rows [(k mod E) B, (k mod E + 1) B) of
// epoch k / E (E micro-batches per epoch), a function of k alone, and the dropout masks
// come from the default generator the snapshot holds: resuming at step s repeats exactly
// what the uninterrupted run would have done. With --zero 1 every rank keeps its own
// snapshot (FILE.rank<r>: the weights and its shard of the optimizer state). With --fsdp the
// snapshot is a checkpoint folder (Note [FSDP checkpoints]), which loads on any world size.
void resume(Training& t) {
  if (t.sharded && !t.o.snapshot.empty() && std::filesystem::exists(t.o.snapshot + "/index.json")) {
    const Snapshot s = fsdp::load_checkpoint(t.o.snapshot, *t.sharded, t.optimizer.get());
    t.step = s.global_step;
    if (t.job.leader() && !t.o.json)
      std::printf("resuming from %s at step %lld (saved on %lld ranks)\n", t.o.snapshot.c_str(),
                  static_cast<long long>(t.step), static_cast<long long>(s.world_size));
  } else if (!t.sharded && !t.o.snapshot.empty() && std::filesystem::exists(t.snapshot_path)) {
    Snapshot s = load_snapshot(t.snapshot_path, t.job.world);
    restore_snapshot(s, *t.model, t.optimizer.get());
    t.step = s.global_step;
    if (t.job.leader() && !t.o.json)
      std::printf("resuming from %s at step %lld\n", t.snapshot_path.c_str(), static_cast<long long>(t.step));
  }
  if (t.zero) apps::check_same_step(t.job, t.step);
}

void save_snapshot_now(const Training& t, int64_t steps_done) {
  const Options& o = t.o;
  if (o.snapshot.empty()) return;
  if (t.sharded) {  // collective: every rank writes its file, rank 0 the index
    Snapshot position;
    position.global_step = steps_done;
    position.user["seed"] = std::to_string(o.seed);
    fsdp::save_checkpoint(o.snapshot, *t.sharded, t.optimizer.get(), position);
    return;
  }
  if (!t.job.leader() && !t.zero) return;
  Snapshot s = capture_snapshot(*t.model, t.zero ? nullptr : t.optimizer.get());
  if (t.zero) s.optimizer = t.zero->local_state_dict();
  s.global_step = steps_done;
  s.world_size = t.job.world;
  s.user["seed"] = std::to_string(o.seed);
  save_snapshot(t.snapshot_path, s);
  // Every rank's shard of this step is on disk before any rank goes on (and a test's kill
  // after this step finds them all written).
  if (t.zero) t.job.group->barrier()->wait();
}

// The peak MFU is measured against, and the run's first line. The MFU's denominator: on the
// CPU the measured FMA peak of the cores (Note [Measured peak]; bf16's against the bfloat16 peak
// where products run on bfloat16 pairs), on a GPU that GPU's dense peak for the dtype (Note
// [GPU peak]), times the ranks.
void print_start(Training& t) {
  const Options& o = t.o;
  const Job& job = t.job;
  const bool bf16_pairs = o.dtype == "bf16" && job.device.is_cpu() && backends::cpu::bf16_pair_products();
  t.peak_source = "measured: the float32 FMA peak of " + std::to_string(get_num_threads()) + " core(s)";
  if (job.device.is_cuda()) {
    const apps::DevicePeak p = apps::gpu_peak(job.device, o.dtype == "bf16" ? kBFloat16 : o.dtype == "float64" ? kFloat64 : kFloat32);
    t.peak = p.gflops * 1e9 * job.world;
    t.peak_source = p.source;
  } else {
    t.peak = apps::measured_peak_gflops_per_core(bf16_pairs) * 1e9 * get_num_threads() * job.world;
    if (bf16_pairs) t.peak_source = "measured: the bfloat16 pair-product peak of " + std::to_string(get_num_threads()) + " core(s)";
  }
  if (job.leader() && o.dtype == "bf16" && job.device.is_cpu() && !bf16_pairs)
    std::fprintf(stderr, "train_gpt: notice: this CPU (as built, -march=native) has no AVX512_BF16: bfloat16 products "
                         "are widened to float32, so --dtype bf16 runs at about float32's speed less the casts\n");
  if (job.leader() && !o.json)
    std::printf("GPT: %lld layers, %lld heads, width %lld, context %lld, %.2fM parameters; batch %lld x %lld ranks x %lld "
                "accumulated; %s, %d thread(s) per rank; peak %.0f GFLOP/s (%s)\n",
                static_cast<long long>(t.config.layers), static_cast<long long>(t.config.heads),
                static_cast<long long>(t.config.embd), static_cast<long long>(t.T), t.model->num_params() / 1e6,
                static_cast<long long>(t.B), static_cast<long long>(job.world), static_cast<long long>(o.grad_accum),
                o.dtype.c_str(), get_num_threads(), t.peak / 1e9, t.peak_source.c_str());
}

// One optimizer step over --grad-accum micro-batches; returns this rank's loss.
double train_step(Training& t) {
  const Options& o = t.o;
  for (auto& group : t.optimizer->param_groups()) group.options().set_lr(lr_at(o, t.step));
  {
    profiler::ScopedEvent span("zero_grad");
    t.optimizer->zero_grad();
  }
  double loss_sum = 0;
  apps::ActivationMeter meter(t.job.device);
  for (int64_t k = 0; k < o.grad_accum; ++k) {
    auto batch = [&] {
      profiler::ScopedEvent span("batch");
      data::Example<> b = (*t.next_batch)(t.step * o.grad_accum + k);
      return data::Example<>{b.data.to(t.job.device, /*non_blocking=*/true), b.target.to(t.job.device, /*non_blocking=*/true)};
    }();
    if (t.sharded) t.sharded->set_requires_gradient_sync(k + 1 == o.grad_accum);  // FSDP's no_sync
    auto micro_step = [&] {
      Tensor loss;
      meter.before_forward();
      {
        profiler::ScopedEvent span("forward");
        auto amp = mixed_precision(o, t.job);
        loss = t.model->loss(t.forward(batch.data), batch.target) / static_cast<double>(o.grad_accum);
      }
      meter.after_forward();
      {
        profiler::ScopedEvent span("backward");
        loss.backward();
      }
      t.memory.max_with(meter.after_backward());
      loss_sum += loss.item<double>();
    };
    if (t.ddp && k + 1 < o.grad_accum) {
      auto guard = t.ddp->no_sync();  // gradients accumulate locally; the last micro-batch reduces
      micro_step();
    } else {
      micro_step();
    }
  }
  if (o.clip > 0) {  // clip_grad_norm_ without reading the norm back: no host synchronisation
    profiler::ScopedEvent span("clip_grad_norm_");
    if (t.sharded) {
      fsdp::clip_grad_norm_(*t.sharded, o.clip);
    } else {
      std::vector<Tensor> grads;
      for (const Tensor& p : t.params)
        if (p.grad().defined()) grads.push_back(p.grad());
      nn::utils::clip_grads_with_norm_(t.params, o.clip, nn::utils::get_total_norm(grads));
    }
  }
  {
    profiler::ScopedEvent span("optimizer.step");
    t.optimizer->step();
  }
  return loss_sum;
}

// The steps from where the run is to --steps: timing (the first ones warm the allocator and
// the caches, and are left out of tokens/s and the profile), evaluation, snapshots, the
// progress line and the curve.
void train_steps(Training& t) {
  const Options& o = t.o;
  Job& job = t.job;
  std::FILE* curve = !o.curve.empty() && job.leader() ? std::fopen(o.curve.c_str(), t.step > 0 ? "a" : "w") : nullptr;
  GR_CHECK(o.curve.empty() || !job.leader() || curve != nullptr, "cannot write --curve ", o.curve);
  const int64_t kill_at = apps::test_kill_step(job.rank);  // a test hook
  apps::ProgressBar bar("train", o.steps, std::chrono::seconds(o.json ? 0 : 5));
  const int64_t tokens_per_step = t.B * t.T * o.grad_accum * job.world;
  const int64_t first_step = t.step;
  const int64_t warm_steps = std::min<int64_t>(3, (o.steps - first_step) / 2);
  for (; t.step < o.steps; ++t.step) {
    const int64_t step = t.step;
    if (!o.profile.empty() && step - first_step == warm_steps) profiler::enable();
    const auto t0 = Clock::now();
    const double loss_sum = train_step(t);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (step - first_step >= warm_steps) {
      t.timed_seconds += seconds;
      t.timed_tokens += tokens_per_step;
    }
    const bool last = step + 1 == o.steps;
    const bool eval_now = last || (o.eval_every > 0 && (step + 1) % o.eval_every == 0);
    const bool report = eval_now || last || step % 10 == 0;
    if (report) t.train_loss = apps::reduce(job, {loss_sum})[0] / job.world;
    if (eval_now) {  // the profile covers training steps only
      const bool profiling = profiler::enabled();
      profiler::enable(false);
      t.val_loss = evaluate(o, job, t.model, t.val, o.eval_windows, t.B);
      profiler::enable(profiling);
    }
    if ((o.save_every > 0 && (step + 1) % o.save_every == 0) || last) save_snapshot_now(t, step + 1);
    if (kill_at > 0 && kill_at == step + 1) std::raise(SIGKILL);
    if (!job.leader()) continue;
    const double tps = t.timed_seconds > 0 ? static_cast<double>(t.timed_tokens) / t.timed_seconds : 0;
    if (report && !o.json) {
      char status[160];
      std::snprintf(status, sizeof status, "loss %.4f lr %.2e %.0f tok/s MFU %.0f%%", t.train_loss, lr_at(o, step),
                    tps, 100.0 * tps * t.flops_per_token / t.peak);
      bar.update(step + 1, status);
      if (eval_now) {
        bar.finish();
        std::printf("step %lld: train loss %.4f, val loss %.4f, %.0f tokens/s\n", static_cast<long long>(step + 1),
                    t.train_loss, t.val_loss, tps);
      }
    }
    if (curve != nullptr && report) {
      std::fprintf(curve, "%lld,%.6f,", static_cast<long long>(step + 1), t.train_loss);
      if (eval_now) std::fprintf(curve, "%.6f", t.val_loss);
      std::fprintf(curve, "\n");
    }
  }
  bar.finish();
  if (curve != nullptr) std::fclose(curve);
}

// The profile, the weights, a sample, and the run's line (or JSON).
int report(Training& t) {
  const Options& o = t.o;
  const Job& job = t.job;
  if (!o.profile.empty()) {
    profiler::enable(false);
    if (job.leader()) {
      profiler::write_chrome_trace(o.profile);
      if (!o.json) std::printf("profile (training steps, rank 0):\n%s(trace written to %s)\n", profiler::table().c_str(), o.profile.c_str());
    }
  }
  // --fsdp: the weights gathered (collective) into a plain model on rank 0, to save and sample.
  apps::GPT whole = t.model;
  if (t.sharded && (!o.save.empty() || o.sample > 0)) {
    const OrderedDict<Tensor> state = fsdp::full_state_dict(*t.sharded);
    if (job.leader()) {
      const GeneratorState rng = default_generator().state();  // the sample draws as without --fsdp
      whole = apps::GPT(t.config);
      default_generator().set_state(rng);
      whole->to(state.find("wte.weight")->scalar_type());
      whole->load_state_dict(state);
      whole->to(job.device);
    }
  }
  if (!o.save.empty() && job.leader()) save(whole, o.save);
  const double tps = t.timed_seconds > 0 ? static_cast<double>(t.timed_tokens) / t.timed_seconds : 0;
  const double mfu = tps * t.flops_per_token / t.peak;
  std::string text;
  if (o.sample > 0 && job.leader()) text = apps::sample_text(whole, o.prompt, o.sample, o.temperature, o.top_k);
  if (!job.leader()) return 0;
  if (o.json) {
    nlohmann::json j = {{"steps", o.steps},           {"world_size", job.world},     {"tokens_per_sec", tps},
                        {"train_loss", t.train_loss}, {"val_loss", t.val_loss},      {"mfu", mfu},
                        {"peak_gflops", t.peak / 1e9}, {"peak_source", t.peak_source}, {"params", t.model->num_params()},
                        {"peak_rss_mb", peak_rss_mb()},
                        {"threads", get_num_threads()}, {"dtype", o.dtype},
                        {"deterministic", are_deterministic_algorithms_enabled()},
                        {"checkpoint_activations", o.checkpoint_activations},
                        {"activation_kept_bytes", t.memory.kept}, {"activation_peak_bytes", t.memory.peak},
                        {"step_gradient_bytes", t.memory.gradients}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("done: %lld steps, train loss %.4f, val loss %.4f, %.0f tokens/s (MFU %.1f%%), peak RSS %.0f MB\n",
                static_cast<long long>(o.steps), t.train_loss, t.val_loss, tps, 100.0 * mfu, peak_rss_mb());
    const apps::ActivationMemory& m = t.memory;
    const double mib = 1024.0 * 1024.0;
    // Note [Activation peak] in apps/common/activation_memory.h.
    std::printf("activation memory (rank 0, largest micro-step)%s: %.1f MiB kept by forward, peak %.1f MiB above the "
                "step's start (gradients held by then included; the step left %.1f MiB of gradients)\n",
                o.checkpoint_activations ? ", blocks checkpointed" : "", m.kept / mib, m.peak / mib, m.gradients / mib);
    if (!o.save.empty()) std::printf("saved the weights to %s\n", o.save.c_str());
    if (!text.empty()) std::printf("sample:\n%s%s\n", o.prompt.c_str(), text.c_str());
  }
  return 0;
}

int run(const Options& o, Job& job) {
  set_num_threads(apps::resolve_threads(o.threads, job.distributed()));
  use_deterministic_algorithms(o.deterministic);
  if (o.generate) return generate(o, job);
  Training t(o, job);
  resume(t);
  print_start(t);
  train_steps(t);
  return report(t);
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
  app.add_flag("--checkpoint-activations", o.checkpoint_activations,
               "checkpoint every transformer block but the last (gr::utils::checkpoint): the forward keeps their inputs only "
               "and backward reruns one block at a time; the same gradients, less activation memory, at most one more forward "
               "(the activation memory printed at the end: kept by forward, and the step's peak above its start, "
               "which includes the gradient memory held at that moment)");
  app.add_option("--clip", o.clip, "global gradient-norm clipping (0: off)")->capture_default_str()->check(apps::non_negative());
  app.add_option("--threads", o.threads, "CPU threads per process (default: OMP_NUM_THREADS, else the cores shared among this node's ranks)")
      ->check(apps::non_negative());
  app.add_option("--seed", o.seed, "seed for initialisation, batches, dropout and sampling")->capture_default_str();
  app.add_option("--dtype", o.dtype, "float32, float64 (for checks against PyTorch), or bf16 (float32 weights, autocast on the device: matmuls and attention in bfloat16)")
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
  app.add_flag("--fsdp", o.fsdp, "fully sharded data parallel: every transformer block, then the model, a fully_shard unit "
               "(parameters, gradients and AdamW state sharded over the ranks); --snapshot is then a checkpoint folder "
               "(a file per rank and index.json) that resumes on any number of ranks");
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
