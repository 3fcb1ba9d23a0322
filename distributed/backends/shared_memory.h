// SharedMemory: a named POSIX shared-memory segment (shm_open + mmap) mapped into this
// process; what the shm backend's ranks on one machine exchange their data through.
#pragma once

#include <cstddef>
#include <string>

namespace gr::distributed {

class SharedMemory {
 public:
  // Makes a new zero-filled segment of `bytes` under `name` ("/something"); its pages are
  // reserved at once, so a full /dev/shm is an error here instead of a SIGBUS later.
  static SharedMemory create(const std::string& name, size_t bytes);
  // Maps the existing segment `name`, which must be `bytes` long.
  static SharedMemory open(const std::string& name, size_t bytes);

  SharedMemory() = default;
  SharedMemory(SharedMemory&& other) noexcept;
  SharedMemory& operator=(SharedMemory&& other) noexcept;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;
  ~SharedMemory();  // unmaps (and unlinks the name if this process still owns it)

  // Removes the name (the memory lives on while mapped): once every rank has mapped it, so
  // nothing is left in /dev/shm whatever happens to the processes later.
  void unlink();
  char* data() const { return static_cast<char*>(data_); }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }

 private:
  void release();

  std::string name_;
  void* data_ = nullptr;
  size_t size_ = 0;
  bool owns_name_ = false;  // created here and not unlinked yet
};

}  // namespace gr::distributed
