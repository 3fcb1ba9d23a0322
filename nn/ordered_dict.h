// OrderedDict: name -> value in insertion order, with lookup by name (like torch's).
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.h"

namespace gr {

template <class V>
class OrderedDict {
 public:
  // libtorch's item: key() and value(), and still a pair (.first, .second, structured bindings).
  struct Item : std::pair<std::string, V> {
    using std::pair<std::string, V>::pair;
    const std::string& key() const { return this->first; }
    V& value() { return this->second; }
    const V& value() const { return this->second; }
    std::pair<std::string, V>& pair() { return *this; }
    const std::pair<std::string, V>& pair() const { return *this; }
  };
  using Key = std::string;
  using Value = V;

  // Adds a new key; a duplicate key is an error.
  V& insert(std::string key, V value) {
    GR_CHECK(index_.count(key) == 0, "OrderedDict: key '", key, "' already exists");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().second;
  }
  // Adds or replaces.
  V& insert_or_assign(const std::string& key, V value) {
    if (V* v = find(key)) return *v = std::move(value);
    return insert(key, std::move(value));
  }
  V* find(const std::string& key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  const V* find(const std::string& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].second;
  }
  bool contains(const std::string& key) const { return index_.count(key) > 0; }
  const V& operator[](const std::string& key) const {
    const V* v = find(key);
    GR_CHECK(v != nullptr, "OrderedDict: no key '", key, "'");
    return *v;
  }
  V& operator[](const std::string& key) {
    V* v = find(key);
    GR_CHECK(v != nullptr, "OrderedDict: no key '", key, "'");
    return *v;
  }

  // The index-th item in insertion order.
  Item& operator[](size_t index) {
    GR_CHECK(index < items_.size(), "OrderedDict: index ", index, " is out of range (size ", items_.size(), ")");
    return items_[index];
  }
  const Item& operator[](size_t index) const {
    GR_CHECK(index < items_.size(), "OrderedDict: index ", index, " is out of range (size ", items_.size(), ")");
    return items_[index];
  }
  const Item& front() const { return (*this)[0]; }
  const Item& back() const { return (*this)[items_.size() - 1]; }
  // Inserts or assigns every item of `other`, in its order.
  void update(const OrderedDict& other) {
    for (const auto& item : other) insert_or_assign(item.key(), item.value());
  }
  void clear() {
    items_.clear();
    index_.clear();
  }

  const std::vector<Item>& items() const { return items_; }
  std::vector<std::string> keys() const {
    std::vector<std::string> k;
    for (const auto& it : items_) k.push_back(it.first);
    return k;
  }
  std::vector<V> values() const {
    std::vector<V> v;
    for (const auto& it : items_) v.push_back(it.second);
    return v;
  }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  bool is_empty() const { return items_.empty(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }

 private:
  std::vector<Item> items_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace gr
