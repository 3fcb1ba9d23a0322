// PrefixStore: every key of the view is "prefix/key" in the underlying store.
#include "distributed/store/prefix_store.h"

#include "core/error.h"

namespace gr::distributed {

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> store)
    : prefix_(std::move(prefix)), store_(std::move(store)) {
  GR_CHECK(store_ != nullptr, "PrefixStore: the underlying store is null (prefix '", prefix_, "')");
  timeout_ = store_->timeout();
  label_ = store_->label();
}

std::vector<std::string> PrefixStore::full(const std::vector<std::string>& keys) const {
  std::vector<std::string> out;
  out.reserve(keys.size());
  for (const auto& k : keys) out.push_back(full(k));
  return out;
}

void PrefixStore::set(const std::string& key, const Bytes& value) { store_->set(full(key), value); }

Bytes PrefixStore::get(const std::string& key) {
  // The view's own timeout governs when it differs from the underlying store's.
  if (timeout_ != store_->timeout()) store_->wait({full(key)}, timeout_);
  return store_->get(full(key));
}

int64_t PrefixStore::add(const std::string& key, int64_t delta) { return store_->add(full(key), delta); }

Bytes PrefixStore::compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) {
  return store_->compare_set(full(key), expected, desired);
}

bool PrefixStore::check(const std::vector<std::string>& keys) { return store_->check(full(keys)); }

void PrefixStore::wait(const std::vector<std::string>& keys, Milliseconds timeout) { store_->wait(full(keys), timeout); }

bool PrefixStore::delete_key(const std::string& key) { return store_->delete_key(full(key)); }

int64_t PrefixStore::num_keys() { return store_->num_keys(); }

}  // namespace gr::distributed
