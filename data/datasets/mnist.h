// torch::data::datasets::MNIST and Fashion-MNIST: the four IDX files of a folder, kept in
// memory as images [N, 1, 28, 28] in [0, 1] and int64 labels.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "data/datasets/base.h"

namespace gr::data::datasets {

// Reads <root>/train-images-idx3-ubyte and train-labels-idx1-ubyte (kTrain) or the t10k-*
// pair (kTest), each plain or with a .gz suffix. Missing files, mismatched counts and wrong
// shapes throw gr::Error naming the files (and, for missing data, saying how to get it).
class MNIST : public Dataset<MNIST> {
 public:
  using Mode = datasets::Mode;  // MNIST::Mode::kTrain or kTest
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);

  Example<> get(size_t index) override;  // image [1, 28, 28], 0-d int64 label
  std::optional<size_t> size() const override;
  bool is_train() const noexcept { return is_train_; }
  const Tensor& images() const { return images_; }   // [N, 1, 28, 28] float32
  const Tensor& targets() const { return targets_; }  // [N] int64
  // The examples as rows of two tensors (Note [Row gather]).
  Example<> rows() const { return {images_, targets_}; }

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

}  // namespace gr::data::datasets
