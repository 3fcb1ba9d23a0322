// torch::data::datasets::MNIST: the MNIST-format files of a folder as a Dataset of images
// [1, 28, 28] in [0, 1] and int64 labels, read by gradring's MNIST reader (data/mnist.h).
#pragma once

#include <memory>
#include <string>

#include "data/datasets/base.h"
#include "data/mnist.h"

namespace gr::data::datasets {

class MNIST : public Dataset<MNIST> {
 public:
  using Mode = data::Mode;  // MNIST::Mode::kTrain or kTest

  // <root>/train-images-idx3-ubyte and train-labels-idx1-ubyte (kTrain) or the t10k-*
  // pair (kTest), plain or .gz; missing or malformed files throw gr::Error naming them.
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);

  Example<> get(size_t index) override;  // image [1, 28, 28], 0-d int64 label
  std::optional<size_t> size() const override;
  bool is_train() const noexcept;
  const Tensor& images() const;   // [N, 1, 28, 28] float32
  const Tensor& targets() const;  // [N] int64

 private:
  std::shared_ptr<const data::MNIST> mnist_;  // shared by the copies a loader makes
};

}  // namespace gr::data::datasets
