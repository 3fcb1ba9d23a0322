// train_mnist: trains the reference CNN on (Fashion-)MNIST and reports loss, test accuracy
// and training speed; on one process, or data-parallel (DDP) on every rank that
// gradring-run or mpirun starts. See README.md ("Apps") for the command line.
#include <CLI/CLI.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <gradring/gradring.h>
#include <nlohmann/json.hpp>

#include "common/cli.h"
#include "common/device.h"
#include "common/job.h"
#include "common/progress.h"
#include "common/reference_cnn.h"
#include "distributed/ddp/ddp.h"
#include "distributed/backends/init.h"
#include "distributed/ddp/sync_batch_norm.h"
#include "nn/snapshot.h"

using namespace gr;
using Clock = std::chrono::steady_clock;
namespace ds = gr::data::datasets;
namespace samplers = gr::data::samplers;

namespace {

struct Options {
  std::string data = ds::FashionMNIST::kDefaultRoot;
  int64_t epochs = 1;
  int64_t batch_size = 64;
  double lr = -1;  // per-optimizer default
  std::string optimizer = "adadelta";
  uint64_t seed = 1;
  int threads = 0;  // 0: OMP_NUM_THREADS, else the cores (shared by the ranks of this node)
  int64_t max_steps = 0;
  int64_t workers = 0;
  int64_t warmup = 5;
  std::string save;
  std::string snapshot;    // resume from here if present; write here every save_every steps
  int64_t save_every = 0;  // 0: only at the end of each epoch and of the run
  std::string profile;
  std::string trace;
  std::string backend;  // empty: gloo when distributed
  bool sync_bn = false;
  double bucket_cap_mb = 25, first_bucket_cap_mb = 1;  // DDP's (torch's) defaults
  bool json = false;
  bool deterministic = false;  // gr::use_deterministic_algorithms(true): the same bits every run
  std::string device = "cpu";  // cpu, cuda or cuda:N
};

constexpr double kMean = 0.2860, kStd = 0.3530;  // Fashion-MNIST training-set pixel statistics

using apps::Job;
using apps::env_int;
using apps::reduce;

std::unique_ptr<optim::Optimizer> make_optimizer(const Options& o, std::vector<Tensor> params) {
  if (o.optimizer == "sgd") return std::make_unique<optim::SGD>(params, optim::SGDOptions(o.lr < 0 ? 0.01 : o.lr).momentum(0.9));
  if (o.optimizer == "adam") return std::make_unique<optim::Adam>(params, optim::AdamOptions(o.lr < 0 ? 1e-3 : o.lr));
  return std::make_unique<optim::Adadelta>(params, optim::AdadeltaOptions(o.lr < 0 ? 1.0 : o.lr));
}

// Normalised images and labels of one split, as a dataset of whole tensors.
ds::TensorDataset load_split(const std::string& root, ds::Mode mode) {
  ds::FashionMNIST raw(root, mode);
  NoGradGuard no_grad;
  Tensor images = (raw.images() - kMean) / kStd;
  return {images, raw.targets()};
}

// Test accuracy over the whole test set: each rank classifies its unpadded shard (every
// image exactly once over all ranks) and the counts are summed.
template <class Forward>
double evaluate(const Job& job, nn::Module& net, Forward&& forward, ds::TensorDataset test) {
  net.eval();
  double correct = 0, total = 0;
  {
    NoGradGuard no_grad;
    auto loader = data::make_data_loader(test.map(data::transforms::Stack<>()),
                                         samplers::ShardSampler(*test.size(), job.world, job.rank), data::DataLoaderOptions(1000));
    for (data::Example<>& batch : *loader) {
      Tensor logits = forward(batch.data.to(job.device));
      correct += static_cast<double>(logits.argmax(1).eq(batch.target.to(job.device)).sum().item<int64_t>());
      total += static_cast<double>(batch.data.size(0));
    }
  }
  net.train();
  auto sums = reduce(job, {correct, total});
  return sums[0] / std::max(sums[1], 1.0);
}

int run(const Options& o, Job& job) {
  set_num_threads(apps::resolve_threads(o.threads, job.distributed()));
  use_deterministic_algorithms(o.deterministic);
  manual_seed(o.seed);
  ds::TensorDataset train = load_split(o.data, ds::Mode::kTrain);
  const ds::TensorDataset test = load_split(o.data, ds::Mode::kTest);
  const size_t train_size = *train.size();

  apps::ReferenceCNN model;
  if (o.sync_bn) distributed::convert_sync_batchnorm(*model, job.group);
  model->to(job.device);  // before DDP (it broadcasts these tensors) and the optimizer (it holds them)
  // DDP broadcasts rank 0's parameters and buffers here, so every rank starts equal.
  std::unique_ptr<nn::parallel::DistributedDataParallel<apps::ReferenceCNNImpl>> ddp;
  if (job.distributed())
    ddp = std::make_unique<nn::parallel::DistributedDataParallel<apps::ReferenceCNNImpl>>(
        model, job.group,
        nn::parallel::DistributedDataParallelOptions().bucket_cap_mb(o.bucket_cap_mb).first_bucket_cap_mb(o.first_bucket_cap_mb));
  nn::Module& net = ddp ? static_cast<nn::Module&>(*ddp) : static_cast<nn::Module&>(*model);
  auto forward = [&](const Tensor& x) { return ddp ? ddp->forward(x) : model(x); };

  auto optimizer = make_optimizer(o, model->parameters());
  data::DataLoaderOptions lo;
  lo.batch_size(o.batch_size);  // per rank
  lo.workers(o.workers);
  lo.pin_memory(job.device.is_cuda());  // batches in page-locked memory: asynchronous copies to the GPU
  // Shuffled by --seed and the epoch alone (Note [Sampler epochs]); in torch's order on several ranks.
  samplers::AnySampler<> sampler = job.distributed()
      ? samplers::AnySampler<>(samplers::DistributedRandomSampler(train_size, job.world, job.rank, true, o.seed))
      : samplers::AnySampler<>(samplers::RandomSampler(static_cast<int64_t>(train_size), o.seed));
  auto loader = data::make_data_loader(train.map(data::transforms::Stack<>()), std::move(sampler), lo);
  const int64_t batches_per_epoch = loader->epoch(0).num_batches();

  // Note [Exact resume]: a snapshot holds the model, the optimizer state, the default
  // generator and the position (epoch, batches done in it, steps in all). The batch order
  // depends only on (seed, epoch) (Note [Sampler epochs]), so starting the epoch at the
  // first batch not done (loader->epoch(e, k) skips the others without making them)
  // continues exactly where the snapshot was taken.
  int64_t start_epoch = 0, start_batch = 0, steps = 0;
  if (!o.snapshot.empty() && std::filesystem::exists(o.snapshot)) {
    Snapshot s = load_snapshot(o.snapshot, job.world);  // every rank reads the same file
    restore_snapshot(s, *model, optimizer.get());
    start_epoch = s.epoch;
    start_batch = s.step_in_epoch;
    steps = s.global_step;
    if (start_batch >= batches_per_epoch) {
      start_epoch += 1;
      start_batch = 0;
    }
    if (job.leader() && !o.json)
      std::printf("resuming from %s: epoch %lld, batch %lld, step %lld\n", o.snapshot.c_str(),
                  static_cast<long long>(start_epoch + 1), static_cast<long long>(start_batch), static_cast<long long>(steps));
  }
  auto save_snapshot_at = [&](int64_t epoch0, int64_t batches_done) {
    if (o.snapshot.empty() || !job.leader()) return;  // the ranks hold the same state
    Snapshot s = capture_snapshot(*model, optimizer.get());
    s.epoch = epoch0;
    s.step_in_epoch = batches_done;
    s.global_step = steps;
    s.world_size = job.world;
    s.user["seed"] = std::to_string(o.seed);
    save_snapshot(o.snapshot, s);
  };
  const int64_t kill_at = apps::test_kill_step(job.rank);  // a test hook

  if (job.leader() && !o.json) {
    const std::string where = job.device.is_cuda() ? job.device.str() : std::to_string(get_num_threads()) + " CPU thread(s)";
    if (job.distributed())
      std::printf("training the reference CNN on %lld images (%s), %d ranks (%s%s), batch %lld per rank, %s, %s per rank\n",
                  static_cast<long long>(train_size), o.data.c_str(), job.world, job.group->backend_name().c_str(),
                  o.sync_bn ? ", SyncBatchNorm" : "", static_cast<long long>(o.batch_size), o.optimizer.c_str(),
                  where.c_str());
    else
      std::printf("training the reference CNN on %lld images (%s), batch %lld, %s, %s\n",
                  static_cast<long long>(train_size), o.data.c_str(), static_cast<long long>(o.batch_size),
                  o.optimizer.c_str(), where.c_str());
  }
  if (!o.profile.empty() || !o.trace.empty()) profiler::enable();

  int64_t timed_images = 0, warm_steps = steps + o.warmup;
  double timed_seconds = 0, loss_sum = 0, loss_count = 0, accuracy = 0;
  int64_t epoch = 0;
  bool stop = o.max_steps > 0 && steps >= o.max_steps;
  for (epoch = start_epoch + 1; epoch <= o.epochs && !stop; ++epoch) {
    const int64_t skip = epoch == start_epoch + 1 ? start_batch : 0;  // batches done before the snapshot
    // Under a launcher stdout is a pipe: rank 0 prints a plain progress line every 5 s instead.
    apps::ProgressBar bar("epoch " + std::to_string(epoch) + "/" + std::to_string(o.epochs), batches_per_epoch,
                          std::chrono::seconds(job.distributed() && !o.json ? 5 : 0));
    double epoch_loss = 0;
    int64_t epoch_batches = 0;
    auto epoch_start = Clock::now();
    auto tick = Clock::now();
    // One training step; true when --max-steps is reached.
    auto train_step = [&](data::Example<>& batch) {
      optimizer->zero_grad();
      // non_blocking: pinned batches are copied while the previous step's kernels run.
      Tensor loss = nll_loss(forward(batch.data.to(job.device, /*non_blocking=*/true)),
                             batch.target.to(job.device, /*non_blocking=*/true));
      loss.backward();
      optimizer->step();
      double l = loss.item<double>();
      ++steps;
      epoch_loss += l;
      ++epoch_batches;
      auto now = Clock::now();
      if (steps > warm_steps) {  // the first steps warm caches and the allocator
        timed_seconds += std::chrono::duration<double>(now - tick).count();
        timed_images += batch.data.size(0);
      }
      tick = now;
      if (job.leader()) {  // this rank's running loss; the epoch line averages over ranks
        double elapsed = std::chrono::duration<double>(now - epoch_start).count();
        char status[96];
        std::snprintf(status, sizeof status, "loss %.4f %.0f img/s", epoch_loss / epoch_batches,
                      static_cast<double>(epoch_batches * o.batch_size * job.world) / std::max(elapsed, 1e-9));
        bar.update(skip + epoch_batches, status);
      }
      const int64_t done = skip + epoch_batches;
      // Every rank has the same number of batches (DistributedRandomSampler pads), so all stop here.
      stop = o.max_steps > 0 && steps >= o.max_steps;
      if ((o.save_every > 0 && steps % o.save_every == 0) || stop || done == batches_per_epoch)
        save_snapshot_at(epoch - 1, done);
      if (kill_at > 0 && steps == kill_at) std::raise(SIGKILL);
      return stop;
    };
    for (data::Example<>& batch : loader->epoch(epoch - 1, skip))  // resumed mid-epoch: from batch `skip`
      if (train_step(batch)) break;
    bar.finish();
    // Mean of the per-batch losses of all ranks.
    auto sums = reduce(job, {epoch_loss, static_cast<double>(epoch_batches)});
    loss_sum += sums[0];
    loss_count += sums[1];
    {
      // The profile and traces cover training steps only, not the evaluation's forwards.
      const bool profiling = profiler::enabled();
      profiler::enable(false);
      accuracy = evaluate(job, net, forward, test);
      profiler::enable(profiling);
    }
    if (job.leader() && !o.json)
      std::printf("epoch %lld: train_loss %.4f test_accuracy %.4f (%lld steps, %.1f s)\n", static_cast<long long>(epoch),
                  sums[0] / std::max(sums[1], 1.0), accuracy, static_cast<long long>(epoch_batches),
                  std::chrono::duration<double>(Clock::now() - epoch_start).count());
    std::fflush(stdout);
  }
  --epoch;
  if (!o.profile.empty() || !o.trace.empty()) {
    profiler::enable(false);
    if (!o.trace.empty()) {
      if (ddp) {
        ddp->write_chrome_trace(o.trace);  // <dir>/rank<r>.json, the process labelled "rank r"
      } else {
        std::filesystem::create_directories(o.trace);
        profiler::write_chrome_trace((std::filesystem::path(o.trace) / "rank0.json").string(), 0, "rank 0");
      }
      if (job.leader() && !o.json) std::printf("traces written to %s/rank<r>.json\n", o.trace.c_str());
    }
    if (!o.profile.empty() && job.leader()) {  // rank 0's steps
      profiler::write_chrome_trace(o.profile);
      if (!o.json) std::printf("profile (all training steps; evaluation left out):\n%s(trace written to %s)\n", profiler::table().c_str(), o.profile.c_str());
    }
  }
  if (!o.save.empty() && job.leader()) {  // the ranks hold the same weights
    save(*model, o.save, {{"epochs", std::to_string(epoch)}, {"steps", std::to_string(steps)},
                          {"world_size", std::to_string(job.world)}});
    if (!o.json) std::printf("saved the model to %s\n", o.save.c_str());
  }
  // Images of all ranks over the slowest rank's time.
  double all_images = reduce(job, {static_cast<double>(timed_images)})[0];
  double seconds = reduce(job, {timed_seconds}, distributed::ReduceOp::Max)[0];
  double images_per_sec = seconds > 0 ? all_images / seconds : 0.0;
  if (!job.leader()) return 0;
  if (o.json) {
    nlohmann::json j = {{"epochs", epoch},
                        {"steps", steps},
                        {"train_loss", loss_sum / std::max(loss_count, 1.0)},
                        {"test_accuracy", accuracy},
                        {"images_per_sec", images_per_sec},
                        {"world_size", job.world},
                        {"threads", get_num_threads()},
                        {"device", job.device.str()},
                        {"deterministic", are_deterministic_algorithms_enabled()}};
    if (job.distributed()) {
      j["backend"] = job.group->backend_name();
      j["sync_bn"] = o.sync_bn;
    }
    std::printf("%s\n", j.dump().c_str());
  } else if (seconds > 0) {
    std::printf("%.0f images/s\n", images_per_sec);
  } else {
    std::printf("images/s: not measured (every step was a warm-up step: --warmup %lld)\n",
                static_cast<long long>(o.warmup));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Train the reference CNN on Fashion-MNIST (or MNIST) with gradring; data-parallel under gradring-run or mpirun."};
  app.add_option("--data", o.data, "folder with the four IDX files (plain or .gz)")->capture_default_str();
  app.add_option("--epochs", o.epochs, "passes over the training set")->capture_default_str()->check(apps::positive());
  app.add_option("--batch-size", o.batch_size, "images per step (per rank when distributed)")->capture_default_str()->check(apps::positive());
  app.add_option("--lr", o.lr, "learning rate (default: 1.0 adadelta, 0.01 sgd, 0.001 adam)")->check(apps::positive());
  app.add_option("--optimizer", o.optimizer, "adadelta, sgd (momentum 0.9) or adam")
      ->capture_default_str()
      ->check(CLI::IsMember({"adadelta", "sgd", "adam"}));
  app.add_option("--seed", o.seed, "seed for initialisation and shuffling")->capture_default_str();
  app.add_option("--threads", o.threads, "CPU threads per process (default: OMP_NUM_THREADS, else the cores shared among this node's ranks)")
      ->check(apps::non_negative());
  app.add_option("--max-steps", o.max_steps, "stop after this many steps (0: full epochs)")->check(apps::non_negative());
  app.add_option("--workers", o.workers, "background data-loading threads")->capture_default_str()->check(apps::non_negative());
  app.add_option("--warmup", o.warmup, "steps left out of the images/s figure")->capture_default_str()->check(apps::non_negative());
  app.add_option("--save", o.save, "write the trained model here (safetensors; rank 0 only)");
  auto* snapshot_opt = app.add_option("--snapshot", o.snapshot,
                 "resume from this snapshot if it exists; rank 0 writes it (atomically) every --save-every steps, "
                 "at the end of each epoch and of the run");
  app.add_option("--save-every", o.save_every, "steps between snapshots (0: epoch ends and the end only)")
      ->capture_default_str()
      ->check(apps::non_negative())
      ->needs(snapshot_opt);
  app.add_option("--profile", o.profile, "profile every step; print a table and write a Chrome trace here (rank 0's)");
  app.add_option("--trace", o.trace, "profile every step; each rank writes DIR/rank<r>.json (Chrome trace)");
  app.add_option("--backend", o.backend,
                 "process group when distributed: gloo (default on the CPU), shm (one machine, shared memory), nccl (default with "
                 "--device cuda) or mpi (under mpirun)")
      ->check(CLI::IsMember({"gloo", "shm", "nccl", "mpi"}));
  app.add_option("--device", o.device,
                 "cpu, cuda (each rank takes cuda:<local rank>) or cuda:N; without a CUDA device: a notice, then the CPU")
      ->capture_default_str();
  app.add_option("--bucket-cap-mb", o.bucket_cap_mb, "DDP gradient bucket size (MiB)")->capture_default_str()->check(apps::positive());
  app.add_option("--first-bucket-cap-mb", o.first_bucket_cap_mb, "DDP's first bucket (the last layers' gradients, reduced first), MiB")
      ->capture_default_str()
      ->check(apps::positive());
  app.add_flag("--sync-bn", o.sync_bn, "synchronise batch-norm statistics across ranks (SyncBatchNorm)");
  app.add_flag("--deterministic", o.deterministic,
               "deterministic algorithms only (gr::use_deterministic_algorithms): on a GPU the same seed gives the "
               "same bits every run (see docs/cuda.md)");
  app.add_flag("--json", o.json, "print one JSON object (epochs, steps, train_loss, test_accuracy, images_per_sec, world_size) as the last line");
  CLI11_PARSE(app, argc, argv);

  const bool distributed = apps::launched_distributed(o.backend);
  if (o.sync_bn && !distributed) {
    std::fprintf(stderr,
                 "train_mnist: --sync-bn needs a distributed run: start it with "
                 "gradring-run --nproc-per-node N train_mnist ... (or mpirun -np N train_mnist --backend mpi ...)\n");
    return 2;
  }
  Job job;
  try {
    job = apps::start_job(o.device, o.backend, "train_mnist");
    int rc = run(o, job);
    if (job.distributed()) distributed::destroy_process_group();
    return rc;
  } catch (const gr::Error& e) {
    apps::report_error("train_mnist", job, e);
    return 1;
  }
}
