// Storage: the reference-counted memory block tensors view, with the version counter of
// in-place writes (shared by every view, so autograd notices a change through any alias).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/allocator.h"
#include "core/live_objects.h"

namespace gr {

struct StorageImpl {
  DataPtr data;
  size_t nbytes = 0;
  Device device;
  // Bumped by every in-place op; SavedTensor compares it. See Note [Version counter].
  std::atomic<uint32_t> version{0};
  // Non-empty while the memory is released (Storage::release): what a read throws.
  std::string released;
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

  // Throws the release's message while the memory is released (Note [Released storage]).
  void* data() const {
    if (!impl_) return nullptr;
    if (!impl_->released.empty()) [[unlikely]] fail_released();
    return impl_->data.ptr;
  }
  size_t nbytes() const { return impl_ ? impl_->nbytes : 0; }
  Device device() const { return impl_->device; }
  uint32_t version() const { return impl_->version.load(std::memory_order_relaxed); }
  void bump_version() { impl_->version.fetch_add(1, std::memory_order_relaxed); }
  bool defined() const { return impl_ != nullptr; }
  bool is_same(const Storage& o) const { return impl_ == o.impl_; }
  long use_count() const { return impl_.use_count(); }

  // Note [Released storage]
  // fully_shard frees a unit's gathered parameters between its forward and its backward and
  // gathers them again later, while the parameters, their views and the tensors autograd
  // saved all keep pointing at the same StorageImpl (PyTorch: untyped_storage().resize_(0),
  // then resize_(n)). release(why) frees the memory (nbytes() becomes 0) and makes every later
  // read (data(), so data_ptr() and every kernel) throw gr::Error(why) instead of touching
  // freed memory; calling it again only replaces the message. reallocate(n) gives the storage
  // fresh, uninitialised memory of n bytes and ends the release. Neither changes the version
  // counter; set_version lets a writer autograd must not see (the gather) restore it, as
  // PyTorch's _unsafe_preserve_version_counter does.
  void release(std::string why);
  void reallocate(size_t nbytes);
  bool is_released() const { return impl_ && !impl_->released.empty(); }
  void set_version(uint32_t v) { impl_->version.store(v, std::memory_order_relaxed); }

 private:
  [[noreturn]] void fail_released() const;
  std::shared_ptr<StorageImpl> impl_;
};

}  // namespace gr
