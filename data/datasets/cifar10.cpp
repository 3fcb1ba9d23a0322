// CIFAR-10 as a dataset: find the split's batch files (directly or in cifar-10-batches-bin/),
// read each, and keep them as one image tensor and one label tensor.
#include "data/datasets/cifar10.h"

#include <filesystem>
#include <vector>

#include "core/native/shape.h"
#include "data/cifar10.h"
#include "data/datasets/tensor.h"
#include "data/transforms/image.h"

namespace gr::data::datasets {

namespace fs = std::filesystem;

CIFAR10::CIFAR10(const std::string& root, Mode mode) : is_train_(mode == Mode::kTrain) {
  std::vector<std::string> names;
  if (is_train_) {
    for (int i = 1; i <= 5; ++i) names.push_back("data_batch_" + std::to_string(i) + ".bin");
  } else {
    names.push_back("test_batch.bin");
  }
  std::error_code ec;
  fs::path folder = root;
  if (!fs::exists(folder / names[0], ec) && fs::is_directory(folder / "cifar-10-batches-bin", ec)) {
    folder /= "cifar-10-batches-bin";
  }
  std::string missing;
  for (const std::string& name : names) {
    if (!fs::is_regular_file(folder / name, ec)) missing += (missing.empty() ? "" : ", ") + name;
  }
  GR_CHECK(missing.empty(), "CIFAR10: '", folder.string(), "' has no ", missing,
           ". Get cifar-10-binary.tar.gz (the binary version) from https://www.cs.toronto.edu/~kriz/cifar.html, "
           "unpack it and pass its folder");

  TensorList images, labels;
  for (const std::string& name : names) {
    Example<> part = read_cifar10_batch((folder / name).string());
    images.push_back(part.data);
    labels.push_back(part.target);
  }
  images_ = to_unit_float(images.size() == 1 ? images[0] : native::cat(images, 0));
  targets_ = labels.size() == 1 ? labels[0] : native::cat(labels, 0);
}

Example<> CIFAR10::get(size_t index) { return detail::row(images_, targets_, index, "CIFAR10"); }

std::optional<size_t> CIFAR10::size() const { return static_cast<size_t>(images_.size(0)); }

}  // namespace gr::data::datasets
