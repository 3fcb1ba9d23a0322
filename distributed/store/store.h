// Store: the key-value rendezvous every process of a job shares (like c10d's Store): set,
// blocking get, atomic add, compare_set, check, wait, delete. Every blocking call has a
// timeout, and a timeout error says who waited how long for which keys.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gr::distributed {

using Bytes = std::vector<uint8_t>;
using Milliseconds = std::chrono::milliseconds;
constexpr Milliseconds kDefaultStoreTimeout{300000};  // 5 minutes, as torch

class Store {
 public:
  virtual ~Store() = default;

  virtual void set(const std::string& key, const Bytes& value) = 0;
  // Waits (up to timeout()) until `key` exists, then returns its value.
  virtual Bytes get(const std::string& key) = 0;
  // Adds `delta` to the integer stored at `key` (missing = 0) and returns the new value.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // Sets `key` to `desired` if its value is `expected` (or it is missing and `expected` is
  // empty); returns the value after the call.
  virtual Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) = 0;
  // True if every key exists (does not wait).
  virtual bool check(const std::vector<std::string>& keys) = 0;
  // Waits until every key exists, or throws after `timeout`.
  virtual void wait(const std::vector<std::string>& keys, Milliseconds timeout) = 0;
  void wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }
  // Removes `key`; returns whether it existed.
  virtual bool delete_key(const std::string& key) = 0;
  virtual int64_t num_keys() = 0;

  // Strings in and out, for convenience.
  void set(const std::string& key, const std::string& value) { set(key, Bytes(value.begin(), value.end())); }
  std::string get_string(const std::string& key) {
    Bytes b = get(key);
    return {b.begin(), b.end()};
  }

  Milliseconds timeout() const { return timeout_; }
  void set_timeout(Milliseconds timeout) { timeout_ = timeout; }
  // Who is using this store ("rank 1"), for error messages.
  const std::string& label() const { return label_; }
  void set_label(std::string label) { label_ = std::move(label); }

 protected:
  Milliseconds timeout_ = kDefaultStoreTimeout;
  std::string label_ = "this process";
};

}  // namespace gr::distributed
