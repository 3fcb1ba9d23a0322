// CIFAR-10 in its binary version: data_batch_1..5.bin (train) and test_batch.bin, each a
// sequence of records of 1 label byte + 3072 pixel bytes (R, G, B planes of 32x32).
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "data/dataset.h"

namespace gr::data {

// One batch file: images uint8 [N, 3, 32, 32] (data) and labels int64 [N] (target).
// Sizes that are not a multiple of 3073 bytes and labels above 9 throw gr::Error naming the file.
Example<> read_cifar10_batch(const std::string& path);

// The whole split in memory: images float32 [N, 3, 32, 32] in [0, 1], labels int64 [N].
// `root` holds the .bin files, directly or in the cifar-10-batches-bin/ folder that the
// cifar-10-binary.tar.gz archive unpacks to.
class CIFAR10 : public Dataset {
 public:
  using Mode = data::Mode;
  static constexpr std::array<std::string_view, 10> kClasses = {
      "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"};
  explicit CIFAR10(const std::string& root, Mode mode = Mode::kTrain);

  int64_t size() const override { return images_.size(0); }
  Example<> get(int64_t index) const override;  // image [3, 32, 32], 0-d int64 label
  std::optional<Example<>> as_tensors() const override { return Example<>{images_, targets_}; }
  bool is_train() const { return is_train_; }
  const Tensor& images() const { return images_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor images_, targets_;
  bool is_train_;
};

}  // namespace gr::data
