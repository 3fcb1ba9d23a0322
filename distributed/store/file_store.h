// FileStore: a Store kept in one shared file, for single-node jobs and tests without a
// server (like c10d's FileStore). The file is an append-only log of records (set, delete,
// and the joins/leaves of FileStore objects); every operation takes flock() on it, reads the
// records appended since its last visit, and appends its own. Blocking get()/wait() re-read
// the file with a short sleep between tries until the timeout. Stale files from an earlier
// job are not detected: use a fresh path per job.
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>

#include "distributed/store/socket.h"
#include "distributed/store/store.h"

namespace gr::distributed {

class FileStore : public Store {
 public:
  // Opens (creating) `path`. When an object on the file was given world_size > 0, the file
  // is deleted once world_size objects were destroyed and no other one is left. A zero timeout means get()/wait() never give up.
  explicit FileStore(std::string path, int world_size = -1, Milliseconds timeout = kDefaultStoreTimeout);
  ~FileStore() override;
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  // A missing key with a non-empty `expected` stays missing, and an empty value is returned.
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  using Store::set;

  const std::string& path() const { return path_; }

 private:
  enum class Record : uint8_t { Set = 1, Delete = 2, Join = 3, Leave = 4 };
  class Lock;
  // Applies the records appended since the last call (the file lock is held).
  void refresh();
  // Appends one record and applies it (the exclusive file lock is held, after refresh()).
  void append(Record kind, const std::string& key, const Bytes& value);
  // Keys of `keys` not in the store, after a refresh under a shared lock.
  std::vector<std::string> missing(const std::vector<std::string>& keys);
  // Polls until every key exists; throws the timeout message otherwise.
  void wait_for(const char* op, const std::vector<std::string>& keys, Milliseconds timeout);

  std::string path_;
  int64_t world_size_;  // the largest any object on the file declared
  std::mutex mutex_;  // one operation at a time per object (flock does not separate threads)
  Socket file_;       // the open file (Socket owns any descriptor)
  uint64_t applied_ = 0;  // bytes of the file already read into the cache
  std::unordered_map<std::string, Bytes> cache_;
  int64_t joined_ = 0, left_ = 0;
};

}  // namespace gr::distributed
