// The archives' storage: a safetensors file whose metadata holds the string
// entries (under "s:" + key, so that no key can collide with the format's own).
#include "data/serialize.h"

#include <fmt/format.h>

#include <fstream>
#include <istream>
#include <iterator>
#include <ostream>
#include <sstream>

#include "engine/autograd/grad_mode.h"
#include "engine/io/safetensors.h"
#include "kernels/error.h"

namespace gradiens::serialize {

namespace {

constexpr const char* kStringPrefix = "s:";

void check_key(const std::string& key) { GD_CHECK(!key.empty(), "serialize: an archive key cannot be empty"); }

}  // namespace

// ---- OutputArchive ----

void OutputArchive::write(const std::string& key, const Tensor& tensor, bool /*is_buffer*/) {
  check_key(key);
  GD_CHECK(tensor.defined(), fmt::format("serialize: cannot write an undefined tensor under '{}'", key));
  tensors_[key] = tensor.detach();
}

void OutputArchive::write(const std::string& key, const std::string& value) {
  check_key(key);
  strings_[key] = value;
}

void OutputArchive::write(const std::string& key, OutputArchive& nested) {
  check_key(key);
  for (const auto& [name, tensor] : nested.tensors_) tensors_[key + "." + name] = tensor;
  for (const auto& [name, value] : nested.strings_) strings_[key + "." + name] = value;
}

std::string OutputArchive::bytes() const {
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : strings_) metadata[kStringPrefix + key] = value;
  // safetensors writes no metadata for an empty map; an archive of strings only needs one entry.
  metadata["format"] = "gradiens.archive";
  return save_to_bytes(tensors_, metadata);
}

void OutputArchive::save_to(const std::string& filename) const {
  std::ofstream out(filename, std::ios::binary | std::ios::trunc);
  GD_CHECK(out.good(), fmt::format("serialize: cannot open '{}' for writing", filename));
  const std::string data = bytes();
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  GD_CHECK(out.good(), fmt::format("serialize: writing '{}' failed", filename));
}

void OutputArchive::save_to(std::ostream& stream) const {
  const std::string data = bytes();
  stream.write(data.data(), static_cast<std::streamsize>(data.size()));
  GD_CHECK(stream.good(), "serialize: writing the archive to the stream failed");
}

void OutputArchive::save_to(const std::function<size_t(const void*, size_t)>& func) const {
  const std::string data = bytes();
  const size_t written = func(data.data(), data.size());
  GD_CHECK(written == data.size(),
           fmt::format("serialize: the writer took {} of the archive's {} bytes", written, data.size()));
}

// ---- InputArchive ----

void InputArchive::read(const std::string& key, Tensor& tensor, bool is_buffer) {
  GD_CHECK(try_read(key, tensor, is_buffer), fmt::format("serialize: the archive has no tensor '{}'", key));
}

void InputArchive::read(const std::string& key, std::string& value) {
  GD_CHECK(try_read(key, value), fmt::format("serialize: the archive has no string '{}'", key));
}

bool InputArchive::try_read(const std::string& key, Tensor& tensor, bool /*is_buffer*/) {
  auto it = tensors_.find(key);
  if (it == tensors_.end()) return false;
  // libtorch copies into a defined tensor of the same shape (a parameter in place).
  if (tensor.defined() && tensor.sizes() == it->second.sizes() && tensor.scalar_type() == it->second.scalar_type()) {
    NoGradGuard no_grad;
    tensor.copy_(it->second);
  } else {
    tensor = it->second;
  }
  return true;
}

bool InputArchive::try_read(const std::string& key, std::string& value) {
  auto it = strings_.find(key);
  if (it == strings_.end()) return false;
  value = it->second;
  return true;
}

void InputArchive::read(const std::string& key, InputArchive& nested) {
  const std::string prefix = key + ".";
  InputArchive out;
  for (const auto& [name, tensor] : tensors_)
    if (name.starts_with(prefix)) out.tensors_[name.substr(prefix.size())] = tensor;
  for (const auto& [name, value] : strings_)
    if (name.starts_with(prefix)) out.strings_[name.substr(prefix.size())] = value;
  GD_CHECK(!out.tensors_.empty() || !out.strings_.empty(),
           fmt::format("serialize: the archive has no nested archive '{}'", key));
  nested = std::move(out);
}

void InputArchive::load_from(const char* data, size_t size) {
  SafetensorsFile file = load_from_bytes_with_metadata(std::string_view(data, size));
  tensors_ = std::move(file.tensors);
  strings_.clear();
  for (const auto& [key, value] : file.metadata)
    if (key.starts_with(kStringPrefix)) strings_[key.substr(std::char_traits<char>::length(kStringPrefix))] = value;
}

void InputArchive::load_from(const std::string& filename) {
  std::ifstream in(filename, std::ios::binary);
  GD_CHECK(in.good(), fmt::format("serialize: cannot open '{}' for reading", filename));
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  load_from(data.data(), data.size());
}

void InputArchive::load_from(std::istream& stream) {
  const std::string data((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
  GD_CHECK(!data.empty(), "serialize: the stream holds no archive");
  load_from(data.data(), data.size());
}

std::vector<std::string> InputArchive::keys() const {
  std::vector<std::string> out;
  for (const auto& entry : tensors_) out.push_back(entry.first);
  for (const auto& entry : strings_) out.push_back(entry.first);
  return out;
}

}  // namespace gradiens::serialize
