// MNIST and Fashion-MNIST: the four IDX files of a folder, kept as two tensors in memory.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "data/dataset.h"

namespace gr::data {

// Reads <root>/train-images-idx3-ubyte and train-labels-idx1-ubyte (kTrain) or the t10k-*
// pair (kTest), each plain or with a .gz suffix. Images are float32 [N, 1, 28, 28] in
// [0, 1], labels int64 [N]. Missing files, mismatched counts and wrong shapes throw gr::Error
// naming the files (and, for missing data, saying how to get it).
class MNIST : public Dataset {
 public:
  using Mode = data::Mode;
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);

  int64_t size() const override { return images_.size(0); }
  Example<> get(int64_t index) const override;  // image [1, 28, 28], 0-d int64 label
  std::optional<Example<>> as_tensors() const override { return Example<>{images_, targets_}; }
  bool is_train() const { return is_train_; }
  const Tensor& images() const { return images_; }
  const Tensor& targets() const { return targets_; }

 protected:
  // `name` and `how_to_get` go into error messages.
  MNIST(const std::string& root, Mode mode, std::string_view name, std::string_view how_to_get);

 private:
  Tensor images_, targets_;
  bool is_train_;
};

// Zalando's Fashion-MNIST: same format, 10 kinds of clothing. The default root is where
// the Debian package dataset-fashion-mnist installs it.
class FashionMNIST : public MNIST {
 public:
  static constexpr const char* kDefaultRoot = "/usr/share/datasets/fashion-mnist";
  static constexpr std::array<std::string_view, 10> kClasses = {
      "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};
  explicit FashionMNIST(const std::string& root = kDefaultRoot, Mode mode = Mode::kTrain);
};

}  // namespace gr::data
