// Sequential forward and indexing.
#include "nn/modules/sequential.h"

namespace gr::nn {

Tensor SequentialImpl::forward(const Tensor& x) {
  GR_CHECK(!forwards_.empty(), "Sequential: cannot call forward() on an empty Sequential");
  Tensor y = x;
  for (const auto& f : forwards_) y = f(y);
  return y;
}

std::shared_ptr<Module> SequentialImpl::operator[](size_t i) const {
  GR_CHECK(i < forwards_.size(), "Sequential: index ", i, " is out of range (size ", forwards_.size(), ")");
  return named_children().items()[i].second;
}

}  // namespace gr::nn
