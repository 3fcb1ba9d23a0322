// FileStore: the append-only record log, flock()ed and re-read on every operation.
// A record is: kind (1 byte), key length (u64 little-endian), key, value length, value.
#include "distributed/store/file_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cerrno>
#include <cstring>
#include <thread>

#include "core/error.h"
#include "distributed/store/store_util.h"

namespace gr::distributed {

using Clock = std::chrono::steady_clock;

// Holds flock() on the store's file for one operation.
class FileStore::Lock {
 public:
  Lock(int fd, bool exclusive, const std::string& path) : fd_(fd) {
    while (::flock(fd_, exclusive ? LOCK_EX : LOCK_SH) != 0) {
      GR_CHECK(errno == EINTR, "FileStore: cannot lock '", path, "': ", std::strerror(errno));
    }
  }
  ~Lock() { ::flock(fd_, LOCK_UN); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;

 private:
  int fd_;
};

static uint64_t read_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}

static void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  const auto* p = reinterpret_cast<const uint8_t*>(&v);
  out.insert(out.end(), p, p + 8);
}

FileStore::FileStore(std::string path, int world_size, Milliseconds timeout)
    : path_(std::move(path)), world_size_(world_size) {
  GR_CHECK(timeout.count() >= 0, "FileStore: the timeout must not be negative");
  timeout_ = timeout;
  file_.reset(::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  GR_CHECK(file_.valid(), "FileStore: cannot open '", path_, "': ", std::strerror(errno));
  std::lock_guard guard(mutex_);
  Lock lock(file_.fd(), true, path_);
  refresh();
  // The join record carries world_size, so whichever object leaves last knows it.
  append(Record::Join, "", world_size > 0 ? int_to_bytes(world_size) : Bytes());
}

FileStore::~FileStore() {
  try {
    std::lock_guard guard(mutex_);
    Lock lock(file_.fd(), true, path_);
    refresh();
    append(Record::Leave, "", {});
    // The last object to leave removes the file once world_size of them have left (while
    // still holding its lock).
    if (world_size_ > 0 && left_ >= world_size_ && joined_ == left_) ::unlink(path_.c_str());
  } catch (...) {
    // A destructor must not throw; the file is left behind.
  }
}

void FileStore::refresh() {
  struct stat st{};
  GR_CHECK(::fstat(file_.fd(), &st) == 0, "FileStore: cannot stat '", path_, "': ", std::strerror(errno));
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size <= applied_) return;
  std::vector<uint8_t> buf(size - applied_);
  for (size_t got = 0; got < buf.size();) {
    ssize_t n = ::pread(file_.fd(), buf.data() + got, buf.size() - got, static_cast<off_t>(applied_ + got));
    if (n < 0 && errno == EINTR) continue;
    GR_CHECK(n >= 0, "FileStore: cannot read '", path_, "': ", std::strerror(errno));
    if (n == 0) {
      buf.resize(got);  // the file shrank under us; take what is there
      break;
    }
    got += static_cast<size_t>(n);
  }
  size_t pos = 0;
  auto corrupt = [&](const char* what) {
    GR_ERROR("FileStore: '", path_, "' is corrupt at byte ", applied_ + pos, " (", what,
             "); was it written by something other than a FileStore?");
  };
  // Note [FileStore records cut short]: every writer appends a whole record while it holds
  // the exclusive lock, and this runs under a lock, so a record cut short is not one being
  // written: its writer died mid-write. Records appended after it would be read as its
  // rest, so it is reported rather than waited for.
  auto cut_short = [&] { corrupt("a record cut short at the end; did a process die while writing it?"); };
  while (pos < buf.size()) {
    if (buf.size() - pos < 17) cut_short();
    auto kind = static_cast<Record>(buf[pos]);
    if (kind < Record::Set || kind > Record::Leave) corrupt("unknown record type");
    uint64_t key_len = read_u64(&buf[pos + 1]);
    if (key_len > kMaxStoreValueBytes) corrupt("key length over the limit");
    if (buf.size() - pos - 9 < key_len + 8) cut_short();
    uint64_t value_len = read_u64(&buf[pos + 9 + key_len]);
    if (value_len > kMaxStoreValueBytes) corrupt("value length over the limit");
    size_t total = 17 + key_len + value_len;
    if (buf.size() - pos < total) cut_short();
    const auto* key = reinterpret_cast<const char*>(&buf[pos + 9]);
    const uint8_t* value = &buf[pos + 17 + key_len];
    switch (kind) {
      case Record::Set:
        cache_[std::string(key, key_len)] = Bytes(value, value + value_len);
        break;
      case Record::Delete:
        cache_.erase(std::string(key, key_len));
        break;
      case Record::Join:
        ++joined_;
        if (value_len > 0) {
          int64_t declared = 0;
          auto* text = reinterpret_cast<const char*>(value);
          auto [end, ec] = std::from_chars(text, text + value_len, declared);
          if (ec != std::errc() || end != text + value_len) corrupt("bad world size");
          world_size_ = std::max(world_size_, declared);
        }
        break;
      case Record::Leave:
        ++left_;
        break;
    }
    pos += total;
  }
  applied_ += pos;
}

void FileStore::append(Record kind, const std::string& key, const Bytes& value) {
  std::vector<uint8_t> rec;
  rec.reserve(17 + key.size() + value.size());
  rec.push_back(static_cast<uint8_t>(kind));
  put_u64(rec, key.size());
  rec.insert(rec.end(), key.begin(), key.end());
  put_u64(rec, value.size());
  rec.insert(rec.end(), value.begin(), value.end());
  for (size_t done = 0; done < rec.size();) {
    ssize_t n = ::write(file_.fd(), rec.data() + done, rec.size() - done);
    if (n < 0 && errno == EINTR) continue;
    GR_CHECK(n > 0, "FileStore: cannot write '", path_, "': ", std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  // Apply it the way every other reader will.
  refresh();
}

static void check_sizes(const char* op, const std::string& key, size_t value_size = 0) {
  GR_CHECK(key.size() <= kMaxStoreValueBytes && value_size <= kMaxStoreValueBytes, "FileStore.", op,
           ": a key or value over the limit of ", kMaxStoreValueBytes, " bytes");
}

void FileStore::set(const std::string& key, const Bytes& value) {
  check_sizes("set", key, value.size());
  std::lock_guard guard(mutex_);
  Lock lock(file_.fd(), true, path_);
  refresh();
  append(Record::Set, key, value);
}

std::vector<std::string> FileStore::missing(const std::vector<std::string>& keys) {
  std::lock_guard guard(mutex_);
  Lock lock(file_.fd(), false, path_);
  refresh();
  std::vector<std::string> out;
  for (const auto& k : keys) {
    if (!cache_.count(k) && std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  }
  return out;
}

void FileStore::wait_for(const char* op, const std::vector<std::string>& keys, Milliseconds timeout) {
  auto start = Clock::now();
  auto sleep = std::chrono::microseconds(500);
  for (;;) {
    std::vector<std::string> left = missing(keys);
    if (left.empty()) return;
    auto waited = Clock::now() - start;
    GR_CHECK(timeout.count() == 0 || waited < timeout, "FileStore.", op, ": ",
             wait_timeout_message(label_, timeout, keys, left), " [file '", path_, "']");
    auto nap = std::chrono::duration_cast<Clock::duration>(sleep);
    if (timeout.count() > 0) nap = std::min<Clock::duration>(nap, timeout - waited);
    std::this_thread::sleep_for(nap);
    sleep = std::min(sleep * 2, std::chrono::microseconds(10000));
  }
}

Bytes FileStore::get(const std::string& key) {
  check_sizes("get", key);
  for (;;) {
    wait_for("get", {key}, timeout_);
    std::lock_guard guard(mutex_);
    Lock lock(file_.fd(), false, path_);
    refresh();
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    // Deleted between the wait and now: wait again.
  }
}

int64_t FileStore::add(const std::string& key, int64_t delta) {
  check_sizes("add", key);
  std::lock_guard guard(mutex_);
  Lock lock(file_.fd(), true, path_);
  refresh();
  auto it = cache_.find(key);
  int64_t value = add_to_value(key, it == cache_.end() ? Bytes() : it->second, delta);
  append(Record::Set, key, int_to_bytes(value));
  return value;
}

Bytes FileStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  check_sizes("compare_set", key, std::max(expected.size(), desired.size()));
  std::lock_guard guard(mutex_);
  Lock lock(file_.fd(), true, path_);
  refresh();
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    if (!expected.empty()) return {};
    append(Record::Set, key, desired);
    return desired;
  }
  if (it->second != expected) return it->second;
  append(Record::Set, key, desired);
  return desired;
}

bool FileStore::check(const std::vector<std::string>& keys) { return missing(keys).empty(); }

void FileStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) {
  GR_CHECK(timeout.count() >= 0, "FileStore.wait: the timeout must not be negative");
  wait_for("wait", keys, timeout);
}

bool FileStore::delete_key(const std::string& key) {
  check_sizes("delete_key", key);
  std::lock_guard guard(mutex_);
  Lock lock(file_.fd(), true, path_);
  refresh();
  if (!cache_.count(key)) return false;
  append(Record::Delete, key, {});
  return true;
}

int64_t FileStore::num_keys() {
  std::lock_guard guard(mutex_);
  Lock lock(file_.fd(), false, path_);
  refresh();
  return static_cast<int64_t>(cache_.size());
}

}  // namespace gr::distributed
