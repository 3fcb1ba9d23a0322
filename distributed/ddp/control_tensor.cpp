// Control tensors to and from the parameters' device.
#include "distributed/ddp/control_tensor.h"

#include "core/factory.h"
#include "core/tensor_literal.h"

namespace gr::distributed {

Tensor control_tensor(const std::vector<int64_t>& values, Device device) {
  return tensor(values, TensorOptions(kInt64)).to(device);
}

std::vector<int64_t> host_values(const Tensor& t) {
  const Tensor c = t.to(Device(kCPU)).contiguous();
  const int64_t* p = c.data_ptr<int64_t>();
  return {p, p + c.numel()};
}

}  // namespace gr::distributed
