// OrderedDict: the insertion-ordered map libtorch returns from
// named_parameters(), named_buffers(), named_children() and state_dict().
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/error.h"

namespace gradiens {

template <class Key, class Value>
class OrderedDict {
 public:
  class Item {
   public:
    Item(Key key, Value value) : pair_(std::move(key), std::move(value)) {}
    const Key& key() const { return pair_.first; }
    Value& value() { return pair_.second; }
    const Value& value() const { return pair_.second; }
    Value* operator->() { return &pair_.second; }
    const Value* operator->() const { return &pair_.second; }
    Value& operator*() { return pair_.second; }
    const Value& operator*() const { return pair_.second; }
    const std::pair<Key, Value>& pair() const { return pair_; }

   private:
    std::pair<Key, Value> pair_;
  };

  OrderedDict() = default;
  explicit OrderedDict(std::string key_description) : key_description_(std::move(key_description)) {}
  // OrderedDict<std::string, int> dict = {{"a", 1}, {"b", 2}}, as libtorch (a repeated key is an error).
  OrderedDict(std::initializer_list<Item> items) {
    for (const Item& item : items) insert(item.key(), item.value());
  }

  // Adds a new entry; a key that is already present is an error, as in libtorch.
  Value& insert(Key key, Value value) {
    GD_CHECK(index_.count(key) == 0, key_description_ + " '" + std::string(key) + "' already defined");
    index_.emplace(key, items_.size());
    items_.emplace_back(std::move(key), std::move(value));
    return items_.back().value();
  }
  // Inserts or replaces, keeping the original position of a replaced key.
  Value& insert_or_assign(Key key, Value value) {
    if (auto it = index_.find(key); it != index_.end()) return items_[it->second].value() = std::move(value);
    return insert(std::move(key), std::move(value));
  }

  Value* find(const Key& key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  const Value* find(const Key& key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &items_[it->second].value();
  }
  bool contains(const Key& key) const { return index_.count(key) != 0; }
  Value& operator[](const Key& key) {
    Value* v = find(key);
    GD_CHECK(v != nullptr, key_description_ + " '" + std::string(key) + "' is not defined");
    return *v;
  }
  const Value& operator[](const Key& key) const {
    const Value* v = find(key);
    GD_CHECK(v != nullptr, key_description_ + " '" + std::string(key) + "' is not defined");
    return *v;
  }
  Item& operator[](size_t index) {
    GD_CHECK(index < items_.size(), "OrderedDict index out of range");
    return items_[index];
  }
  const Item& operator[](size_t index) const {
    GD_CHECK(index < items_.size(), "OrderedDict index out of range");
    return items_[index];
  }
  Item& front() {
    GD_CHECK(!items_.empty(), "Called front() on an empty OrderedDict");
    return items_.front();
  }
  const Item& front() const {
    GD_CHECK(!items_.empty(), "Called front() on an empty OrderedDict");
    return items_.front();
  }
  Item& back() {
    GD_CHECK(!items_.empty(), "Called back() on an empty OrderedDict");
    return items_.back();
  }
  const Item& back() const {
    GD_CHECK(!items_.empty(), "Called back() on an empty OrderedDict");
    return items_.back();
  }
  // Inserts every item of `other`, in its order; a key already here is an error.
  void update(const OrderedDict& other) {
    for (const Item& item : other) insert(item.key(), item.value());
  }
  // What a key is called in error messages ("Key", "Parameter", ...).
  const std::string& key_description() const { return key_description_; }
  void reserve(size_t capacity) {
    items_.reserve(capacity);
    index_.reserve(capacity);
  }

  std::vector<Key> keys() const {
    std::vector<Key> out;
    for (const auto& item : items_) out.push_back(item.key());
    return out;
  }
  std::vector<Value> values() const {
    std::vector<Value> out;
    for (const auto& item : items_) out.push_back(item.value());
    return out;
  }
  const std::vector<Item>& items() const { return items_; }
  size_t size() const { return items_.size(); }
  bool is_empty() const { return items_.empty(); }
  // Removes `key` and returns its value; a missing key is an error. Later
  // entries keep their relative order.
  Value erase(const Key& key) {
    auto it = index_.find(key);
    GD_CHECK(it != index_.end(), key_description_ + " '" + std::string(key) + "' is not defined");
    size_t position = it->second;
    Value value = std::move(items_[position].value());
    items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(position));
    index_.erase(it);
    for (auto& [k, i] : index_)
      if (i > position) --i;
    return value;
  }
  void clear() {
    items_.clear();
    index_.clear();
  }

  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }

 private:
  std::vector<Item> items_;
  std::unordered_map<Key, size_t> index_;
  std::string key_description_ = "Key";
};

}  // namespace gradiens
