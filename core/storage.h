// Storage: the reference-counted memory block tensors view, with the version counter of
// in-place writes (shared by every view, so autograd notices a change through any alias).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "core/allocator.h"
#include "core/live_objects.h"

namespace gr {

struct StorageImpl {
  DataPtr data;
  size_t nbytes = 0;
  Device device;
  // Bumped by every in-place op; SavedTensor compares it. See Note [Version counter].
  std::atomic<uint32_t> version{0};
  detail::LiveCounter<detail::kLiveStorage> live_;  // Note [Live objects]

  StorageImpl(DataPtr d, size_t n, Device dev) : data(std::move(d)), nbytes(n), device(dev) {}
  ~StorageImpl() {
    if (data.ptr && data.deleter) data.deleter(data.ptr);
  }
  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;
};

class Storage {
 public:
  Storage() = default;
  static Storage allocate(size_t nbytes, Device device);
  // Wraps memory owned by someone else; deleter (may be empty) runs when the last user is gone.
  static Storage wrap(void* data, size_t nbytes, Device device, std::function<void(void*)> deleter);

  void* data() const { return impl_ ? impl_->data.ptr : nullptr; }
  size_t nbytes() const { return impl_ ? impl_->nbytes : 0; }
  Device device() const { return impl_->device; }
  uint32_t version() const { return impl_->version.load(std::memory_order_relaxed); }
  void bump_version() { impl_->version.fetch_add(1, std::memory_order_relaxed); }
  bool defined() const { return impl_ != nullptr; }
  bool is_same(const Storage& o) const { return impl_ == o.impl_; }
  long use_count() const { return impl_.use_count(); }

 private:
  std::shared_ptr<StorageImpl> impl_;
};

}  // namespace gr
