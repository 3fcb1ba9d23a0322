// torch::data::datasets::MNIST over gradring's MNIST reader.
#include "data/datasets/mnist.h"

namespace gr::data::datasets {

MNIST::MNIST(const std::string& root, Mode mode) : mnist_(std::make_shared<const data::MNIST>(root, mode)) {}

Example<> MNIST::get(size_t index) { return mnist_->get(static_cast<int64_t>(index)); }
std::optional<size_t> MNIST::size() const { return static_cast<size_t>(mnist_->size()); }
bool MNIST::is_train() const noexcept { return mnist_->is_train(); }
const Tensor& MNIST::images() const { return mnist_->images(); }
const Tensor& MNIST::targets() const { return mnist_->targets(); }

}  // namespace gr::data::datasets
