// train_mnist: trains the reference CNN on (Fashion-)MNIST and reports loss, test accuracy
// and training speed. See README.md ("Apps") for the command line.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <gradring/gradring.h>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/cli.h"
#include "common/progress.h"
#include "common/reference_cnn.h"
#include "data/dataloader.h"
#include "data/mnist.h"

using namespace gr;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string data = data::FashionMNIST::kDefaultRoot;
  int64_t epochs = 1;
  int64_t batch_size = 64;
  double lr = -1;  // per-optimizer default
  std::string optimizer = "adadelta";
  uint64_t seed = 1;
  int threads = 0;  // 0: every core
  int64_t max_steps = 0;
  int64_t workers = 0;
  int64_t warmup = 5;
  std::string save;
  std::string profile;
  bool json = false;
};

constexpr double kMean = 0.2860, kStd = 0.3530;  // Fashion-MNIST training-set pixel statistics

std::unique_ptr<optim::Optimizer> make_optimizer(const Options& o, std::vector<Tensor> params) {
  if (o.optimizer == "sgd") return std::make_unique<optim::SGD>(params, optim::SGDOptions(o.lr < 0 ? 0.01 : o.lr).momentum(0.9));
  if (o.optimizer == "adam") return std::make_unique<optim::Adam>(params, optim::AdamOptions(o.lr < 0 ? 1e-3 : o.lr));
  return std::make_unique<optim::Adadelta>(params, optim::AdadeltaOptions(o.lr < 0 ? 1.0 : o.lr));
}

// Normalised images and labels of one split, as a dataset of whole tensors.
std::shared_ptr<data::TensorDataset> load_split(const std::string& root, data::Mode mode) {
  data::FashionMNIST raw(root, mode);
  NoGradGuard no_grad;
  Tensor images = (raw.images() - kMean) / kStd;
  return std::make_shared<data::TensorDataset>(images, raw.targets());
}

double evaluate(apps::ReferenceCNN& model, const data::TensorDataset& test) {
  model->eval();
  NoGradGuard no_grad;
  int64_t correct = 0;
  for (int64_t i = 0; i < test.size(); i += 1000) {
    int64_t n = std::min<int64_t>(1000, test.size() - i);
    Tensor logits = model(test.data().narrow(0, i, n));
    correct += logits.argmax(1).eq(test.targets().narrow(0, i, n)).sum().item<int64_t>();
  }
  model->train();
  return static_cast<double>(correct) / static_cast<double>(test.size());
}

int run(const Options& o) {
  set_num_threads(o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  manual_seed(o.seed);
  auto train = load_split(o.data, data::Mode::kTrain);
  auto test = load_split(o.data, data::Mode::kTest);

  apps::ReferenceCNN model;
  auto optimizer = make_optimizer(o, model->parameters());
  data::DataLoaderOptions lo;
  lo.batch_size = o.batch_size;
  lo.shuffle = true;
  lo.seed = o.seed;
  lo.num_workers = o.workers;
  data::DataLoader loader(train, lo);

  if (!o.json)
    std::printf("training the reference CNN on %lld images (%s), batch %lld, %s, %d thread(s)\n",
                static_cast<long long>(train->size()), o.data.c_str(), static_cast<long long>(o.batch_size),
                o.optimizer.c_str(), get_num_threads());
  if (!o.profile.empty()) profiler::enable();

  int64_t steps = 0, timed_images = 0;
  double timed_seconds = 0, loss_sum = 0, accuracy = 0;
  int64_t loss_count = 0, epoch = 0;
  bool stop = false;
  for (epoch = 1; epoch <= o.epochs && !stop; ++epoch) {
    apps::ProgressBar bar("epoch " + std::to_string(epoch) + "/" + std::to_string(o.epochs), loader.size());
    double epoch_loss = 0;
    int64_t epoch_batches = 0;
    auto epoch_start = Clock::now();
    auto tick = Clock::now();
    for (data::Example& batch : loader.epoch(epoch - 1)) {
      optimizer->zero_grad();
      Tensor loss = nll_loss(model(batch.data), batch.target);
      loss.backward();
      optimizer->step();
      double l = loss.item<double>();
      ++steps;
      epoch_loss += l;
      ++epoch_batches;
      auto now = Clock::now();
      if (steps > o.warmup) {  // the first steps warm caches and the allocator
        timed_seconds += std::chrono::duration<double>(now - tick).count();
        timed_images += batch.data.size(0);
      }
      tick = now;
      double elapsed = std::chrono::duration<double>(now - epoch_start).count();
      char status[96];
      std::snprintf(status, sizeof status, "loss %.4f %.0f img/s", epoch_loss / epoch_batches,
                    epoch_batches * o.batch_size / std::max(elapsed, 1e-9));
      bar.update(epoch_batches, status);
      if (o.max_steps > 0 && steps >= o.max_steps) {
        stop = true;
        break;
      }
    }
    bar.finish();
    loss_sum += epoch_loss;
    loss_count += epoch_batches;
    accuracy = evaluate(model, *test);
    if (!o.json)
      std::printf("epoch %lld: train_loss %.4f test_accuracy %.4f (%lld steps, %.1f s)\n", static_cast<long long>(epoch),
                  epoch_loss / std::max<int64_t>(epoch_batches, 1), accuracy, static_cast<long long>(epoch_batches),
                  std::chrono::duration<double>(Clock::now() - epoch_start).count());
    std::fflush(stdout);
  }
  --epoch;
  if (!o.profile.empty()) {
    profiler::enable(false);
    profiler::write_chrome_trace(o.profile);
    if (!o.json) std::printf("profile (all steps):\n%s(trace written to %s)\n", profiler::table().c_str(), o.profile.c_str());
  }
  if (!o.save.empty()) {
    save(*model, o.save, {{"epochs", std::to_string(epoch)}, {"steps", std::to_string(steps)}});
    if (!o.json) std::printf("saved the model to %s\n", o.save.c_str());
  }
  double images_per_sec = timed_seconds > 0 ? static_cast<double>(timed_images) / timed_seconds : 0.0;
  if (o.json) {
    nlohmann::json j = {{"epochs", epoch},
                        {"steps", steps},
                        {"train_loss", loss_sum / static_cast<double>(std::max<int64_t>(loss_count, 1))},
                        {"test_accuracy", accuracy},
                        {"images_per_sec", images_per_sec},
                        {"world_size", 1},
                        {"threads", get_num_threads()}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%.0f images/s\n", images_per_sec);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Train the reference CNN on Fashion-MNIST (or MNIST) with gradring."};
  app.add_option("--data", o.data, "folder with the four IDX files (plain or .gz)")->capture_default_str();
  app.add_option("--epochs", o.epochs, "passes over the training set")->capture_default_str()->check(apps::positive());
  app.add_option("--batch-size", o.batch_size, "images per step")->capture_default_str()->check(apps::positive());
  app.add_option("--lr", o.lr, "learning rate (default: 1.0 adadelta, 0.01 sgd, 0.001 adam)")->check(apps::positive());
  app.add_option("--optimizer", o.optimizer, "adadelta, sgd (momentum 0.9) or adam")
      ->capture_default_str()
      ->check(CLI::IsMember({"adadelta", "sgd", "adam"}));
  app.add_option("--seed", o.seed, "seed for initialisation and shuffling")->capture_default_str();
  app.add_option("--threads", o.threads, "CPU threads (default: every core)")->check(apps::non_negative());
  app.add_option("--max-steps", o.max_steps, "stop after this many steps (0: full epochs)")->check(apps::non_negative());
  app.add_option("--workers", o.workers, "background data-loading threads")->capture_default_str()->check(apps::non_negative());
  app.add_option("--warmup", o.warmup, "steps left out of the images/s figure")->capture_default_str()->check(apps::non_negative());
  app.add_option("--save", o.save, "write the trained model here (safetensors)");
  app.add_option("--profile", o.profile, "profile every step; print a table and write a Chrome trace here");
  app.add_flag("--json", o.json, "print one JSON object (epochs, steps, train_loss, test_accuracy, images_per_sec, world_size) as the last line");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(o);
  } catch (const gr::Error& e) {
    std::fprintf(stderr, "train_mnist: %s\n", e.message().c_str());
    return 1;
  }
}
