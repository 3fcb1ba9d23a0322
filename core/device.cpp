// Device parsing and printing.
#include "core/device.h"

#include "core/error.h"

namespace gr {

Device::Device(const std::string& spec) {
  if (spec == "cpu") {
    type_ = DeviceType::CPU;
    return;
  }
  if (spec.rfind("cuda", 0) == 0) {
    type_ = DeviceType::CUDA;
    index_ = 0;
    if (spec.size() > 4) {
      GR_CHECK(spec[4] == ':' && spec.size() > 5, "Device: expected 'cuda' or 'cuda:N', got '", spec, "'");
      size_t used = 0;
      try {
        index_ = std::stoi(spec.substr(5), &used);
      } catch (const std::exception&) {
        used = 0;
      }
      GR_CHECK(used == spec.size() - 5 && index_ >= 0, "Device: bad CUDA index in '", spec, "'");
    }
    return;
  }
  GR_ERROR("Device: unknown device '", spec, "' (expected 'cpu', 'cuda' or 'cuda:N')");
}

std::string Device::str() const { return type_ == DeviceType::CPU ? "cpu" : "cuda:" + std::to_string(index_); }

std::ostream& operator<<(std::ostream& out, const Device& d) { return out << d.str(); }

}  // namespace gr
