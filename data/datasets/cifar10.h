// CIFAR-10 (binary version) as a dataset: the whole split in memory, images float32
// [N, 3, 32, 32] in [0, 1] and int64 labels, read by read_cifar10_batch (data/cifar10.h).
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "data/datasets/base.h"

namespace gr::data::datasets {

// `root` holds the .bin files, directly or in the cifar-10-batches-bin/ folder that the
// cifar-10-binary.tar.gz archive unpacks to.
class CIFAR10 : public Dataset<CIFAR10> {
 public:
  using Mode = datasets::Mode;
  static constexpr std::array<std::string_view, 10> kClasses = {
      "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"};
  explicit CIFAR10(const std::string& root, Mode mode = Mode::kTrain);

  Example<> get(size_t index) override;  // image [3, 32, 32], 0-d int64 label
  std::optional<size_t> size() const override;
  bool is_train() const noexcept { return is_train_; }
  const Tensor& images() const { return images_; }
  const Tensor& targets() const { return targets_; }
  // The examples as rows of two tensors (Note [Row gather]).
  Example<> rows() const { return {images_, targets_}; }

 private:
  Tensor images_, targets_;
  bool is_train_;
};

}  // namespace gr::data::datasets
