// DDP's small int64 control tensors (the model check, join's flags, the used-parameter map,
// the bucket order): made on the parameters' device, since a backend of device tensors
// (nccl) refuses CPU ones, and read back on the host.
#pragma once

#include <cstdint>
#include <vector>

#include "core/device.h"
#include "core/tensor.h"

namespace gr::distributed {

Tensor control_tensor(const std::vector<int64_t>& values, Device device);
// On a device: a copy that waits for the collective (which Work::wait ordered first).
std::vector<int64_t> host_values(const Tensor& t);

}  // namespace gr::distributed
