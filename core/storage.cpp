// Storage allocation through the device's allocator.
#include "core/storage.h"

namespace gr {

Storage Storage::allocate(size_t nbytes, Device device) {
  Storage s;
  s.impl_ = std::make_shared<StorageImpl>(get_allocator(device.type())->allocate(nbytes, device), nbytes, device);
  return s;
}

Storage Storage::wrap(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter) {
  Storage s;
  s.impl_ = std::make_shared<StorageImpl>(DataPtr{data, std::move(deleter)}, nbytes, device);
  return s;
}

}  // namespace gr
