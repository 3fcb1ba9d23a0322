// SharedMemory: shm_open, posix_fallocate, mmap and their error messages.
#include "distributed/backends/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/error.h"

namespace gr::distributed {

namespace {

void* map(int fd, size_t bytes, const std::string& name) {
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  GR_CHECK(p != MAP_FAILED, "shared memory: cannot map ", bytes, " bytes of '", name, "': ", std::strerror(errno));
  return p;
}

}  // namespace

SharedMemory SharedMemory::create(const std::string& name, size_t bytes) {
  int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  GR_CHECK(fd >= 0, "shared memory: cannot create '", name, "' in /dev/shm: ", std::strerror(errno));
  SharedMemory m;
  m.name_ = name;
  m.owns_name_ = true;
  // posix_fallocate reserves the pages now; ftruncate alone would let the first touch of a
  // page past a full /dev/shm kill the process with SIGBUS.
  int rc = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (rc != 0) {
    ::close(fd);
    GR_ERROR("shared memory: cannot reserve ", bytes >> 20, " MiB for '", name, "' in /dev/shm: ", std::strerror(rc),
             rc == ENOSPC ? " (/dev/shm is too small: a container needs e.g. docker run --shm-size=1g)" : "");
  }
  m.data_ = map(fd, bytes, name);
  m.size_ = bytes;
  ::close(fd);
  return m;
}

SharedMemory SharedMemory::open(const std::string& name, size_t bytes) {
  int fd = ::shm_open(name.c_str(), O_RDWR, 0600);
  GR_CHECK(fd >= 0, "shared memory: cannot open '", name, "' in /dev/shm: ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != bytes) {
    ::close(fd);
    GR_ERROR("shared memory: '", name, "' is ", static_cast<long long>(st.st_size), " bytes, expected ", bytes);
  }
  SharedMemory m;
  m.name_ = name;
  try {
    m.data_ = map(fd, bytes, name);
  } catch (...) {
    ::close(fd);
    throw;
  }
  m.size_ = bytes;
  ::close(fd);
  return m;
}

SharedMemory::SharedMemory(SharedMemory&& other) noexcept { *this = std::move(other); }

SharedMemory& SharedMemory::operator=(SharedMemory&& other) noexcept {
  if (this != &other) {
    release();
    name_ = std::move(other.name_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    owns_name_ = std::exchange(other.owns_name_, false);
  }
  return *this;
}

SharedMemory::~SharedMemory() { release(); }

void SharedMemory::release() {
  if (data_) ::munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
  unlink();
}

void SharedMemory::unlink() {
  if (owns_name_) ::shm_unlink(name_.c_str());
  owns_name_ = false;
}

}  // namespace gr::distributed
