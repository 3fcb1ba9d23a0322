// PrefixStore: a view of another store whose keys all get "prefix/" in front, so that
// independent users (several process groups, a launcher and its workers) share one store
// without colliding. Views nest: PrefixStore("b", PrefixStore("a", s)) uses "a/b/key".
#pragma once

#include <memory>
#include <string>

#include "distributed/store/store.h"

namespace gr::distributed {

class PrefixStore : public Store {
 public:
  // Takes the underlying store's timeout and label; set_timeout() on the view then governs
  // get() and wait() through it.
  PrefixStore(std::string prefix, std::shared_ptr<Store> store);

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;
  bool delete_key(const std::string& key) override;
  // The number of keys in the whole underlying store (as torch's PrefixStore).
  int64_t num_keys() override;
  using Store::set;

  const std::string& prefix() const { return prefix_; }
  const std::shared_ptr<Store>& underlying() const { return store_; }

 private:
  std::string full(const std::string& key) const { return prefix_ + "/" + key; }
  std::vector<std::string> full(const std::vector<std::string>& keys) const;

  std::string prefix_;
  std::shared_ptr<Store> store_;
};

}  // namespace gr::distributed
