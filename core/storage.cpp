// Storage allocation through the device's allocator, and releasing and reallocating a
// storage's memory in place (Note [Released storage]).
#include "core/storage.h"

#include "core/error.h"

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

void Storage::release(std::string why) {
  GR_CHECK(impl_ != nullptr && !why.empty(), "Storage::release: needs a storage and a reason");
  DataPtr old = std::move(impl_->data);
  impl_->data = DataPtr{};
  impl_->nbytes = 0;
  impl_->released = std::move(why);
  if (old.ptr && old.deleter) old.deleter(old.ptr);
}

void Storage::reallocate(size_t nbytes) {
  GR_CHECK(impl_ != nullptr, "Storage::reallocate: the storage is undefined");
  DataPtr fresh = get_allocator(impl_->device.type())->allocate(nbytes, impl_->device);
  DataPtr old = std::move(impl_->data);
  impl_->data = std::move(fresh);
  impl_->nbytes = nbytes;
  impl_->released.clear();
  if (old.ptr && old.deleter) old.deleter(old.ptr);
}

void Storage::fail_released() const { GR_ERROR(impl_->released); }

}  // namespace gr
