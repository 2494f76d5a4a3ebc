// serialize::OutputArchive / InputArchive: libtorch's keyed archives of tensors
// (and nested archives), which samplers and stateful datasets save themselves
// into, and save(value, path or stream) / load(value, path or stream) for any
// value with archive operators. The bytes are a safetensors file (nested keys
// joined with '.'), whose metadata holds the string values. It lives in data/
// because samplers and datasets are its only users so far.
#pragma once

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "engine/tensor.h"

namespace gradiens::serialize {

class OutputArchive {
 public:
  OutputArchive() = default;

  // is_buffer is libtorch's distinction of buffers from parameters; both are stored alike.
  void write(const std::string& key, const Tensor& tensor, bool is_buffer = false);
  void write(const std::string& key, const std::string& value);
  // The nested archive's entries under "key.".
  void write(const std::string& key, OutputArchive& nested);

  void save_to(const std::string& filename) const;
  void save_to(std::ostream& stream) const;
  // func(data, size) is called with the bytes; it returns how many it took.
  void save_to(const std::function<size_t(const void*, size_t)>& func) const;

  std::string bytes() const;
  bool empty() const { return tensors_.empty() && strings_.empty(); }

 private:
  std::map<std::string, Tensor> tensors_;
  std::map<std::string, std::string> strings_;
};

class InputArchive {
 public:
  InputArchive() = default;

  // Throws gradiens::Error naming the key when the archive has no such entry.
  void read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  void read(const std::string& key, std::string& value);
  void read(const std::string& key, InputArchive& nested);
  // False, leaving `tensor` as it was, when the key is missing.
  bool try_read(const std::string& key, Tensor& tensor, bool is_buffer = false);
  bool try_read(const std::string& key, std::string& value);

  void load_from(const std::string& filename);
  void load_from(std::istream& stream);
  void load_from(const char* data, size_t size);

  std::vector<std::string> keys() const;

 private:
  std::map<std::string, Tensor> tensors_;
  std::map<std::string, std::string> strings_;
};

}  // namespace gradiens::serialize

namespace gradiens {

namespace detail {
template <class Value>
concept Archivable = requires(serialize::OutputArchive& archive, const Value& value) { archive << value; };
template <class Value>
concept Unarchivable = requires(serialize::InputArchive& archive, Value& value) { archive >> value; };
}  // namespace detail

// libtorch's torch::save(value, filename or stream): the value writes itself
// into an archive (operator<<), which is written out.
template <detail::Archivable Value, class... SaveToArgs>
void save(const Value& value, SaveToArgs&&... args) {
  serialize::OutputArchive archive;
  archive << value;
  archive.save_to(std::forward<SaveToArgs>(args)...);
}

// libtorch's torch::load(value, filename or stream).
template <detail::Unarchivable Value, class... LoadFromArgs>
void load(Value& value, LoadFromArgs&&... args) {
  serialize::InputArchive archive;
  archive.load_from(std::forward<LoadFromArgs>(args)...);
  archive >> value;
}

}  // namespace gradiens
