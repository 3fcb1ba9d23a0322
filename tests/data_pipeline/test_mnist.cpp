// MNIST/FashionMNIST: generated folders (plain and .gz files, every error), and the real
// Fashion-MNIST from the Debian package when it is installed.
#include <chrono>
#include <cmath>
#include <filesystem>

#include "data_files.h"
#include "test_util.h"

using namespace gr;
using gr::test::error_of;
using gr::test::concat;
using gr::test::idx_header;
namespace ds = gr::data::datasets;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Writes `n` images (pixel k of image i = i + k mod 256) and labels i % 10 under `prefix`.
void write_split(const test::TempDir& dir, const std::string& prefix, uint32_t n, bool gz, uint32_t labels = 0,
                 uint32_t height = 28) {
  if (labels == 0) labels = n;
  test::Bytes pixels(size_t{n} * height * 28), targets(labels);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<uint8_t>(i / (height * 28) + i % (height * 28));
  for (uint32_t i = 0; i < labels; ++i) targets[i] = static_cast<uint8_t>(i % 10);
  auto write = gz ? test::write_gz : test::write_file;
  std::string suffix = gz ? ".gz" : "";
  write(dir / (prefix + "-images-idx3-ubyte" + suffix), concat(idx_header(0x08, {n, height, 28}), pixels));
  write(dir / (prefix + "-labels-idx1-ubyte" + suffix), concat(idx_header(0x08, {labels}), targets));
}

}  // namespace

TEST_CASE("MNIST reads a folder of plain or gzip IDX files") {
  test::TempDir dir;
  write_split(dir, "train", 5, false);
  write_split(dir, "t10k", 3, true);
  ds::MNIST train(dir.str()), test_set(dir.str(), ds::MNIST::Mode::kTest);
  CHECK(train.is_train());
  CHECK(!test_set.is_train());
  CHECK(train.size() == std::optional<size_t>(5));
  CHECK(test_set.size() == std::optional<size_t>(3));
  CHECK(test::shape(train.images()) == std::vector<int64_t>{5, 1, 28, 28});
  CHECK(train.images().scalar_type() == kFloat32);
  CHECK(train.targets().scalar_type() == kInt64);
  test::check_values(test_set.targets(), {0, 1, 2});
  data::Example<> e = train.get(2);
  CHECK(test::shape(e.data) == std::vector<int64_t>{1, 28, 28});
  CHECK(e.target.item<int64_t>() == 2);
  CHECK(e.data.data_ptr<float>()[3] == doctest::Approx(5.0 / 255));  // pixel 3 of image 2
  CHECK(train.rows().data.is_same(train.images()));
  CHECK_THROWS_WITH_AS(train.get(5), doctest::Contains("out of range"), gr::Error);
}

TEST_CASE("MNIST errors name the files and say how to get the data") {
  test::TempDir dir;
  const std::string absent = dir / "nowhere";
  std::string m = error_of([&] { ds::FashionMNIST fm(absent); });
  CHECK(contains(m, "FashionMNIST: data folder '" + absent + "' does not exist"));
  CHECK(contains(m, "sudo apt-get install dataset-fashion-mnist"));
  CHECK(contains(m, "--data DIR"));
  m = error_of([&] { ds::MNIST digits(absent); });
  CHECK(contains(m, "--data DIR"));
  CHECK(contains(m, "train-images-idx3-ubyte"));

  write_split(dir, "train", 4, false);
  std::filesystem::remove(dir / "train-labels-idx1-ubyte");
  m = error_of([&] { ds::FashionMNIST fm(dir.str()); });
  CHECK(contains(m, "has no train-labels-idx1-ubyte(.gz)"));
  CHECK(contains(m, "apt-get install dataset-fashion-mnist"));
  m = error_of([&] { ds::FashionMNIST fm(dir.str(), ds::Mode::kTest); });
  CHECK(contains(m, "has no t10k-images-idx3-ubyte(.gz) and t10k-labels-idx1-ubyte(.gz)"));

  write_split(dir, "train", 5, false, 4);  // 5 images, 4 labels
  m = error_of([&] { ds::MNIST digits(dir.str()); });
  CHECK(contains(m, "5 images but 4 labels"));
  CHECK(contains(m, dir / "train-images-idx3-ubyte"));
  CHECK(contains(m, dir / "train-labels-idx1-ubyte"));

  write_split(dir, "t10k", 2, true, 0, 27);  // 27x28 images
  m = error_of([&] { ds::MNIST digits(dir.str(), ds::Mode::kTest); });
  CHECK(contains(m, "uint8 [N, 28, 28] was expected"));
  CHECK(contains(m, dir / "t10k-images-idx3-ubyte.gz"));
  CHECK(contains(m, dir / "t10k-labels-idx1-ubyte.gz"));

  test::write_file(dir / "t10k-images-idx3-ubyte", {0x00, 0x01});  // plain wins over .gz, and is corrupt
  m = error_of([&] { ds::MNIST digits(dir.str(), ds::Mode::kTest); });
  CHECK(contains(m, "read_idx: '" + dir / "t10k-images-idx3-ubyte"));
}

TEST_CASE("the real Fashion-MNIST (Debian package dataset-fashion-mnist)" *
          test::skip_unless(std::filesystem::is_directory(ds::FashionMNIST::kDefaultRoot),
                            "no /usr/share/datasets/fashion-mnist (scripts/setup installs dataset-fashion-mnist)")) {
  auto start = std::chrono::steady_clock::now();
  ds::FashionMNIST train, test_set(ds::FashionMNIST::kDefaultRoot, ds::Mode::kTest);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("loaded Fashion-MNIST train + test in ", seconds, " s");
  CHECK(test::shape(train.images()) == std::vector<int64_t>{60000, 1, 28, 28});
  CHECK(test::shape(test_set.images()) == std::vector<int64_t>{10000, 1, 28, 28});
  CHECK(test::shape(train.targets()) == std::vector<int64_t>{60000});
  CHECK(test::shape(test_set.targets()) == std::vector<int64_t>{10000});
  // Balanced classes: 6000 per class in train, 1000 in test.
  using Split = std::pair<const ds::FashionMNIST*, int64_t>;
  for (auto [set, per_class] : {Split{&train, 6000}, Split{&test_set, 1000}}) {
    std::vector<int64_t> counts(11);  // counts[10]: labels outside 0..9
    const int64_t* y = set->targets().data_ptr<int64_t>();
    for (int64_t i = 0; i < set->targets().numel(); ++i) ++counts[y[i] >= 0 && y[i] <= 9 ? y[i] : 10];
    counts.pop_back();
    CHECK(counts == std::vector<int64_t>(10, per_class));
  }
  // The well-known normalization constants of the training set.
  const float* x = train.images().data_ptr<float>();
  double sum = 0, sum_sq = 0;
  const int64_t n = train.images().numel();
  for (int64_t i = 0; i < n; ++i) {
    sum += x[i];
    sum_sq += double(x[i]) * x[i];
  }
  const double mean = sum / n, stddev = std::sqrt(sum_sq / n - mean * mean);
  CHECK(mean == doctest::Approx(0.2860).epsilon(0.0005));
  CHECK(stddev == doctest::Approx(0.3530).epsilon(0.0005));
  CHECK(*std::max_element(x, x + n) == 1.0f);
  CHECK(*std::min_element(x, x + n) == 0.0f);

  // One training epoch: batch 64, shuffled, normalized.
  std::vector<double> checksums;
  for (size_t workers : {0, 1}) {
    auto loader = data::make_data_loader(train.map(data::transforms::Stack<>()).map(data::transforms::Normalize<>(0.2860, 0.3530)),
                                         data::samplers::RandomSampler(60000, uint64_t{3}), data::DataLoaderOptions(64).workers(workers));
    auto epoch = loader->epoch(0);
    CHECK(epoch.num_batches() == 938);
    auto epoch_start = std::chrono::steady_clock::now();
    int64_t examples = 0, last = 0;
    double checksum = 0;
    for (data::Example<>& batch : epoch) {
      examples += batch.data.size(0);
      last = batch.data.size(0);
      checksum += batch.data.data_ptr<float>()[batch.data.numel() / 2] * double(examples);
    }
    double epoch_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start).count();
    MESSAGE("one Fashion-MNIST epoch (batch 64, shuffle, normalize), num_workers ", workers, ": ", epoch_seconds,
            " s");
    CHECK(examples == 60000);
    CHECK(last == 32);
    checksums.push_back(checksum);
  }
  CHECK(checksums[0] == checksums[1]);
}
