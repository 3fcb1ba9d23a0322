// Device: where a tensor's memory lives (CPU, or CUDA:i).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

namespace gr {

enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
constexpr int kNumDeviceTypes = 2;
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;

// libtorch's shape: type() and index() are methods (a ported `device.index()` compiles).
class Device {
 public:
  Device() = default;
  Device(DeviceType t, int i = 0) : type_(t), index_(i) {}
  // Parses "cpu", "cuda", "cuda:1".
  Device(const std::string& spec);
  Device(const char* spec) : Device(std::string(spec)) {}

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  void set_index(int i) { index_ = i; }
  bool is_cpu() const { return type_ == DeviceType::CPU; }
  bool is_cuda() const { return type_ == DeviceType::CUDA; }
  std::string str() const;
  bool operator==(const Device& o) const { return type_ == o.type_ && (type_ == DeviceType::CPU || index_ == o.index_); }
  bool operator!=(const Device& o) const { return !(*this == o); }

 private:
  DeviceType type_ = DeviceType::CPU;
  int index_ = 0;
};

std::ostream& operator<<(std::ostream& out, const Device& d);

}  // namespace gr
