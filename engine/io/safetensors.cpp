// The safetensors reader and writer: a strict header parser that checks every
// field against the file before any tensor is allocated, and an atomic writer.
#include "engine/io/safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <system_error>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>

#include "engine/autograd/grad_mode.h"
#include "engine/functions.h"

// Note [Safetensors layout]
// A file is: N as a little-endian u64 | N bytes of UTF-8 JSON | the data.
// The JSON object maps each tensor name to {"dtype": "F32", "shape": [2, 3],
// "data_offsets": [begin, end]} (offsets into the data, which follows the
// header), and may hold a "__metadata__" object of strings. The reference
// writer (the Rust crate behind Python's safetensors.torch.save_file) orders
// the tensors by dtype, widest first in the order of its Dtype enum (for our
// dtypes: I64, F64, F32, I32, BF16, F16, U8, BOOL), then by name (bytewise);
// lays out their bytes back to back in that order; writes compact JSON with
// "__metadata__" first, then the tensors in data order, each as dtype, shape,
// data_offsets; and pads the JSON with spaces to a multiple of 8 bytes so
// every tensor's data is aligned for its dtype. We write the same bytes. (The
// reference keeps the metadata in a hash map, so its key order is arbitrary;
// ours is sorted.)
//
// Note [Safetensors validation]
// A file is untrusted input. Before a tensor is allocated the reader checks:
// the file holds the 8 length bytes; N <= 100,000,000 (the reference's
// MAX_HEADER_SIZE) and 8 + N <= the file size; the header is valid UTF-8 JSON
// whose root is an object without duplicate keys; "__metadata__" maps strings
// to strings; every other entry has exactly the keys dtype (a dtype we know),
// shape (at most kMaxDims non-negative integers whose product, counting 0 as
// 1 as strides do, fits in int64) and data_offsets (two integers, begin <=
// end); end - begin equals the element count times the item size (computed
// with overflow checks); and the tensors, in offset order, tile the data
// exactly: the first begins at 0, each begins where the previous ended, the
// last ends at the end of the file. The checks run in that order, so each bad
// file gets one specific message.

namespace gradiens {

static_assert(std::endian::native == std::endian::little,
              "safetensors data is little-endian; a big-endian host would need byte swaps");

namespace {

using Json = nlohmann::json;

constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// More dimensions than any real tensor has; bounds the memory a hostile shape can claim.
constexpr size_t kMaxDims = 64;

// ---- dtypes ----

struct DtypeEntry {
  ScalarType type;
  std::string_view name;
  int reference_order;  // position in the reference's Dtype enum (increasing alignment)
};

constexpr DtypeEntry kDtypes[] = {
    {kBool, "BOOL", 0},     {kUInt8, "U8", 1},     {kInt8, "I8", 2},      {kInt16, "I16", 5},
    {kFloat16, "F16", 7},   {kBFloat16, "BF16", 8}, {kInt32, "I32", 9},    {kFloat32, "F32", 11},
    {kFloat64, "F64", 12},  {kInt64, "I64", 13},
};
// Valid safetensors dtypes that gradiens has no ScalarType for.
constexpr std::string_view kForeignDtypes[] = {"U16", "U32", "U64", "F8_E5M2", "F8_E4M3"};

const DtypeEntry& dtype_entry(ScalarType type) {
  for (const DtypeEntry& d : kDtypes)
    if (d.type == type) return d;
  throw Error(fmt::format("safetensors: dtype {} has no safetensors name", dtype_name(type)));
}

// ---- messages ----

// A name or string taken from a file, quoted and cut short so that a hostile
// header cannot make an error message huge or unprintable.
std::string shown_name(std::string_view s) {
  constexpr size_t kMaxShown = 64;
  size_t shown = s.size();
  if (shown > kMaxShown) {
    shown = kMaxShown;
    while (shown > 0 && (static_cast<unsigned char>(s[shown]) & 0xC0) == 0x80) --shown;  // keep UTF-8 whole
  }
  std::string out = "'";
  for (char c : s.substr(0, shown)) {
    auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 || u == 0x7F) ? '?' : c;
  }
  if (shown < s.size()) out += "...";
  return out + "'";
}

std::string shape_string(const std::vector<int64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

[[noreturn]] void fail(const std::string& message) { throw Error("safetensors: " + message); }

// ---- the header parser ----

struct Entry {
  std::string name;
  ScalarType dtype = kFloat32;
  std::vector<int64_t> shape;
  std::vector<uint64_t> offsets;  // begin, end
  uint64_t nbytes = 0;            // filled in by validate_layout
};

struct Header {
  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;
};

// Builds the Header from nlohmann's SAX events, rejecting anything a
// safetensors header cannot contain the moment it appears. No JSON tree is
// built, and nesting deeper than an entry's arrays stops the parse at once.
class HeaderParser final : public Json::json_sax_t {
 public:
  // The parsed header, or the first problem found.
  Header header;
  std::string error;

  bool null() override {
    // The reference reads "__metadata__": null as no metadata.
    if (where_ == Where::Root && key_ == "__metadata__") return true;
    return unexpected("null");
  }
  bool boolean(bool) override { return unexpected("a boolean"); }
  bool number_integer(number_integer_t value) override {
    if (value >= 0) return number_unsigned(static_cast<number_unsigned_t>(value));
    return unexpected(fmt::format("the negative integer {}", value));
  }
  bool number_unsigned(number_unsigned_t value) override {
    if (where_ == Where::Shape) {
      if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return fail_with(fmt::format("tensor {}: shape entry {} is {}, larger than the largest int64", shown_name(entry_.name),
                                     entry_.shape.size(), value));
      if (entry_.shape.size() == kMaxDims)
        return fail_with(fmt::format("tensor {}: shape has more than {} dimensions", shown_name(entry_.name), kMaxDims));
      entry_.shape.push_back(static_cast<int64_t>(value));
      return true;
    }
    if (where_ == Where::Offsets) {
      if (entry_.offsets.size() == 2)
        return fail_with(fmt::format("tensor {}: data_offsets must be [begin, end], got more than two numbers",
                                     shown_name(entry_.name)));
      entry_.offsets.push_back(value);
      return true;
    }
    return unexpected("a number");
  }
  bool number_float(number_float_t, const string_t& text) override {
    return unexpected(fmt::format("the number {}", text.substr(0, 32)));
  }
  bool binary(binary_t&) override { return unexpected("binary data"); }

  bool string(string_t& value) override {
    if (where_ == Where::Metadata) {
      header.metadata[key_] = std::move(value);
      return true;
    }
    if (where_ == Where::Entry && field_ == Field::Dtype) {
      for (const DtypeEntry& d : kDtypes) {
        if (d.name == value) {
          entry_.dtype = d.type;
          return true;
        }
      }
      if (std::find(std::begin(kForeignDtypes), std::end(kForeignDtypes), value) != std::end(kForeignDtypes))
        return fail_with(fmt::format("tensor {}: dtype {} is not supported by gradiens", shown_name(entry_.name), value));
      return fail_with(fmt::format("tensor {}: unknown dtype {}", shown_name(entry_.name), shown_name(value)));
    }
    return unexpected("a string");
  }

  bool start_object(std::size_t) override {
    if (where_ == Where::Start) {
      where_ = Where::Root;
      return true;
    }
    if (where_ == Where::Root) {
      if (key_ == "__metadata__") {
        where_ = Where::Metadata;
      } else {
        where_ = Where::Entry;
        entry_ = Entry{};
        entry_.name = key_;
        seen_ = 0;
      }
      return true;
    }
    return unexpected("an object");
  }

  bool key(string_t& key) override {
    if (where_ == Where::Root) {
      if (!root_keys_.insert(key).second) return fail_with(fmt::format("duplicate entry {} in the header", shown_name(key)));
      key_ = std::move(key);
      return true;
    }
    if (where_ == Where::Metadata) {
      if (header.metadata.count(key))
        return fail_with(fmt::format("duplicate key {} in __metadata__", shown_name(key)));
      key_ = std::move(key);
      return true;
    }
    // Where::Entry, the only other place a key can appear.
    if (key == "dtype") {
      field_ = Field::Dtype;
    } else if (key == "shape") {
      field_ = Field::Shape;
    } else if (key == "data_offsets") {
      field_ = Field::Offsets;
    } else {
      return fail_with(fmt::format("tensor {}: unknown key {} (an entry holds dtype, shape and data_offsets)",
                                   shown_name(entry_.name), shown_name(key)));
    }
    unsigned bit = 1u << static_cast<unsigned>(field_);
    if (seen_ & bit) return fail_with(fmt::format("tensor {}: duplicate key {}", shown_name(entry_.name), shown_name(key)));
    seen_ |= bit;
    return true;
  }

  bool end_object() override {
    if (where_ == Where::Entry) {
      for (auto [field, name] : {std::pair{Field::Dtype, "dtype"}, std::pair{Field::Shape, "shape"},
                                 std::pair{Field::Offsets, "data_offsets"}}) {
        if (!(seen_ & (1u << static_cast<unsigned>(field))))
          return fail_with(fmt::format("tensor {}: missing key '{}'", shown_name(entry_.name), name));
      }
      header.entries.push_back(std::move(entry_));
      where_ = Where::Root;
    } else if (where_ == Where::Metadata) {
      where_ = Where::Root;
    } else {  // Where::Root
      where_ = Where::Done;
    }
    return true;
  }

  bool start_array(std::size_t) override {
    if (where_ == Where::Entry && field_ == Field::Shape) {
      where_ = Where::Shape;
      return true;
    }
    if (where_ == Where::Entry && field_ == Field::Offsets) {
      where_ = Where::Offsets;
      return true;
    }
    return unexpected("an array");
  }

  bool end_array() override {
    if (where_ == Where::Offsets && entry_.offsets.size() != 2)
      return fail_with(fmt::format("tensor {}: data_offsets must be [begin, end], got {} number{}", shown_name(entry_.name),
                                   entry_.offsets.size(), entry_.offsets.size() == 1 ? "" : "s"));
    where_ = Where::Entry;
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    // nlohmann's text names the position and what it expected; drop its
    // "[json.exception.parse_error.101] " prefix and cap the echo of the input.
    std::string text = e.what();
    if (auto close = text.find("] "); text.rfind("[json.exception", 0) == 0 && close != std::string::npos)
      text.erase(0, close + 2);
    if (text.size() > 200) {
      size_t cut = 200;
      while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // keep UTF-8 whole
      text = text.substr(0, cut) + "...";
    }
    return fail_with("the header is not valid JSON: " + text);
  }

 private:
  enum class Where { Start, Root, Metadata, Entry, Shape, Offsets, Done };
  enum class Field { Dtype, Shape, Offsets };

  bool fail_with(std::string message) {
    if (error.empty()) error = std::move(message);
    return false;
  }

  // A value of the wrong kind: the message says what this place holds.
  bool unexpected(const std::string& got) {
    switch (where_) {
      case Where::Start: return fail_with("the header must be a JSON object, got " + got);
      case Where::Root:
        if (key_ == "__metadata__") return fail_with("__metadata__ must be an object of strings, got " + got);
        return fail_with(fmt::format("tensor {}: expected an object with dtype, shape and data_offsets, got {}",
                                     shown_name(key_), got));
      case Where::Metadata:
        return fail_with(fmt::format("__metadata__ value of {} must be a string, got {}", shown_name(key_), got));
      case Where::Entry:
        switch (field_) {
          case Field::Dtype: return fail_with(fmt::format("tensor {}: dtype must be a string, got {}", shown_name(entry_.name), got));
          case Field::Shape:
            return fail_with(fmt::format("tensor {}: shape must be an array of non-negative integers, got {}",
                                         shown_name(entry_.name), got));
          case Field::Offsets:
            return fail_with(fmt::format("tensor {}: data_offsets must be [begin, end], got {}", shown_name(entry_.name), got));
        }
        break;
      case Where::Shape:
        return fail_with(fmt::format("tensor {}: shape entry {} must be a non-negative integer, got {}",
                                     shown_name(entry_.name), entry_.shape.size(), got));
      case Where::Offsets:
        return fail_with(fmt::format("tensor {}: data_offsets entry {} must be a non-negative integer, got {}",
                                     shown_name(entry_.name), entry_.offsets.size(), got));
      case Where::Done: break;
    }
    return fail_with("unexpected " + got + " in the header");
  }

  Where where_ = Where::Start;
  Field field_ = Field::Dtype;
  std::string key_;  // the current key of the root object or of __metadata__
  std::set<std::string> root_keys_;
  Entry entry_;
  unsigned seen_ = 0;  // bit per Field already given in entry_
};

// The offset of the first byte of `text` that is not part of well-formed
// UTF-8 (no overlong forms, surrogates or code points past U+10FFFF), or npos.
size_t invalid_utf8_offset(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
    unsigned char b = byte(i);
    size_t length;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (b < 0x80) {
      ++i;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      length = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      length = 3;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      length = 4;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (text.size() - i < length) return i;
    if (byte(i + 1) < lo || byte(i + 1) > hi) return i;
    for (size_t k = 2; k < length; ++k)
      if ((byte(i + k) & 0xC0) != 0x80) return i;
    i += length;
  }
  return std::string_view::npos;
}

Header parse_header(std::string_view text) {
  // The reference rejects a header that is not UTF-8 before parsing it. A NUL
  // byte is never valid JSON, but nlohmann's lexer takes it for the end of
  // the input and would ignore everything after it.
  if (size_t bad = invalid_utf8_offset(text); bad != std::string_view::npos)
    fail(fmt::format("the header is not valid UTF-8: byte {:#04x} at offset {}", static_cast<unsigned char>(text[bad]),
                     bad));
  if (size_t nul = text.find('\0'); nul != std::string_view::npos)
    fail(fmt::format("the header is not valid JSON: it holds a NUL byte at offset {}", nul));
  HeaderParser parser;
  bool ok = false;
  try {
    ok = Json::sax_parse(text.begin(), text.end(), &parser);
  } catch (const Json::exception& e) {
    fail(fmt::format("the header is not valid JSON: {}", e.what()));
  }
  if (!ok) fail(parser.error.empty() ? std::string("the header is not valid JSON") : parser.error);
  return std::move(parser.header);
}

// Checks sizes and offsets (Note [Safetensors validation]) and sorts the
// entries by offset.
void validate_layout(std::vector<Entry>& entries, uint64_t data_bytes) {
  for (Entry& e : entries) {
    int64_t extent = 1;  // the product with 0 counted as 1: what contiguous strides reach
    for (int64_t d : e.shape) {
      if (__builtin_mul_overflow(extent, std::max<int64_t>(d, 1), &extent))
        fail(fmt::format("tensor {}: shape {} has too many elements (their count overflows int64)", shown_name(e.name),
                         shape_string(e.shape)));
    }
    uint64_t numel = 1;
    for (int64_t d : e.shape) numel *= static_cast<uint64_t>(d);  // <= extent, cannot overflow
    if (__builtin_mul_overflow(numel, element_size(e.dtype), &e.nbytes))
      fail(fmt::format("tensor {}: shape {} of {} needs more than 2^64 bytes", shown_name(e.name), shape_string(e.shape),
                       dtype_entry(e.dtype).name));
    if (e.offsets[0] > e.offsets[1])
      fail(fmt::format("tensor {}: data_offsets [{}, {}] end before they begin", shown_name(e.name), e.offsets[0],
                       e.offsets[1]));
    if (e.offsets[1] - e.offsets[0] != e.nbytes)
      fail(fmt::format("tensor {}: data_offsets [{}, {}] span {} bytes, but shape {} of {} needs {}", shown_name(e.name),
                       e.offsets[0], e.offsets[1], e.offsets[1] - e.offsets[0], shape_string(e.shape),
                       dtype_entry(e.dtype).name, e.nbytes));
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.offsets, a.name) < std::tie(b.offsets, b.name);
  });
  uint64_t expected = 0;
  const Entry* previous = nullptr;
  for (const Entry& e : entries) {
    uint64_t begin = e.offsets[0], end = e.offsets[1];
    if (begin != expected) {
      if (previous == nullptr)
        fail(fmt::format("tensor {}: data_offsets [{}, {}] leave a gap: the first tensor's data must begin at 0",
                         shown_name(e.name), begin, end));
      if (begin < expected)
        fail(fmt::format("tensor {}: data_offsets [{}, {}] overlap tensor {} (data_offsets [{}, {}])", shown_name(e.name),
                         begin, end, shown_name(previous->name), previous->offsets[0], previous->offsets[1]));
      fail(fmt::format("tensor {}: data_offsets [{}, {}] leave a {}-byte gap after tensor {}, which ends at {}",
                       shown_name(e.name), begin, end, begin - expected, shown_name(previous->name), expected));
    }
    if (end > data_bytes)
      fail(fmt::format("tensor {}: data_offsets [{}, {}] run past the end of the data ({} bytes): the file is truncated",
                       shown_name(e.name), begin, end, data_bytes));
    expected = end;
    previous = &e;
  }
  if (expected != data_bytes)
    fail(fmt::format("the data holds {} bytes but the tensors cover {}: {} bytes after the last tensor belong to none",
                     data_bytes, expected, data_bytes - expected));
}

// Reads a whole file through read_at(offset, destination, bytes), which is
// only called for ranges inside [0, size).
template <class ReadAt>
SafetensorsFile read_safetensors(uint64_t size, ReadAt&& read_at) {
  if (size < 8) fail(fmt::format("the file is {} bytes, too short for the 8-byte header length", size));
  unsigned char length_bytes[8];
  read_at(0, length_bytes, 8);
  uint64_t header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | length_bytes[i];
  if (header_bytes > kMaxHeaderBytes)
    fail(fmt::format("the header length {} exceeds the limit of {} bytes", header_bytes, kMaxHeaderBytes));
  if (header_bytes > size - 8)
    fail(fmt::format("the header length {} runs past the end of the file ({} bytes after the length): the file is "
                     "truncated",
                     header_bytes, size - 8));
  std::string text(header_bytes, '\0');
  read_at(8, text.data(), header_bytes);
  Header header = parse_header(text);
  const uint64_t data_start = 8 + header_bytes;
  validate_layout(header.entries, size - data_start);

  SafetensorsFile out;
  out.metadata = std::move(header.metadata);
  for (const Entry& e : header.entries) {
    Tensor t = empty(e.shape, e.dtype);
    if (e.nbytes > 0) read_at(data_start + e.offsets[0], t.cpu_data_ptr(), e.nbytes);
    if (e.dtype == kBool) {
      // Any other byte would be a bool with no valid value in C++.
      const auto* bytes = static_cast<const unsigned char*>(t.cpu_data_ptr());
      for (uint64_t i = 0; i < e.nbytes; ++i) {
        if (bytes[i] > 1)
          fail(fmt::format("tensor {}: BOOL element {} is the byte {:#04x}; a BOOL must be 0 or 1", shown_name(e.name), i,
                           bytes[i]));
      }
    }
    out.tensors.emplace(e.name, std::move(t));
  }
  return out;
}

// ---- the writer ----

std::string json_string(const std::string& s, std::string_view what) {
  try {
    // Compact, non-ASCII kept as UTF-8, control characters escaped as \n or
    // \u001f: the same text serde_json writes.
    return Json(s).dump();
  } catch (const Json::exception&) {
    fail(fmt::format("{} {} is not valid UTF-8", what, shown_name(s)));
  }
}

struct PlannedTensor {
  const std::string* name;
  const Tensor* tensor;
  uint64_t nbytes;
};

struct Plan {
  std::string header;  // the 8 length bytes and the padded JSON
  std::vector<PlannedTensor> tensors;  // in data order
};

Plan plan_file(const std::map<std::string, Tensor>& tensors, const std::map<std::string, std::string>& metadata) {
  Plan plan;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__") fail("'__metadata__' is reserved and cannot name a tensor");
    if (!t.defined()) fail(fmt::format("tensor {} is undefined", shown_name(name)));
    plan.tensors.push_back({&name, &t, static_cast<uint64_t>(t.numel()) * t.element_size()});
  }
  // The map gives name order; a stable sort by dtype keeps it within each dtype.
  std::stable_sort(plan.tensors.begin(), plan.tensors.end(), [](const PlannedTensor& a, const PlannedTensor& b) {
    return dtype_entry(a.tensor->dtype()).reference_order > dtype_entry(b.tensor->dtype()).reference_order;
  });

  std::string json = "{";
  if (!metadata.empty()) {
    json += "\"__metadata__\":{";
    bool first = true;
    for (const auto& [key, value] : metadata) {
      if (!first) json += ',';
      first = false;
      json += json_string(key, "metadata key");
      json += ':';
      json += json_string(value, "metadata value");
    }
    json += '}';
  }
  uint64_t offset = 0;
  for (const PlannedTensor& p : plan.tensors) {
    if (json.size() > 1) json += ',';
    json += json_string(*p.name, "tensor name");
    json += fmt::format(":{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}", dtype_entry(p.tensor->dtype()).name,
                        fmt::join(p.tensor->sizes(), ","), offset, offset + p.nbytes);
    offset += p.nbytes;
  }
  json += '}';
  json.append((8 - json.size() % 8) % 8, ' ');

  plan.header.resize(8);
  uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) plan.header[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  plan.header += json;
  return plan;
}

// The tensor's elements row-major on the CPU (the tensor itself when it already is).
Tensor dense_cpu(const Tensor& t) {
  NoGradGuard no_grad;
  Tensor c = t.detach();
  if (!c.is_cpu()) c = c.cpu();
  return c.contiguous();
}

std::string system_message() { return std::error_code(errno, std::generic_category()).message(); }

// A path the caller gave, shown whole (unlike names read from a file).
std::string path_string(const std::string& path) { return "'" + path + "'"; }

// A temporary file beside `target` that becomes `target` on commit() and is
// removed if anything fails before that.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& target) : target_(target) {
    static std::atomic<uint64_t> counter{0};
    for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
      temp_ = fmt::format("{}.tmp{}.{}", target, ::getpid(), counter++);
      fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && errno != EEXIST) break;
    }
    if (fd_ < 0) fail(fmt::format("cannot write {}: creating a temporary file failed: {}", path_string(target), system_message()));
  }
  ~AtomicFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temp_.c_str());
  }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, uint64_t size) {
    const char* p = static_cast<const char*>(data);
    while (size > 0) {
      ssize_t n = ::write(fd_, p, std::min<uint64_t>(size, 1u << 30));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(fmt::format("cannot write {}: {}", path_string(target_), n < 0 ? system_message() : "no progress"));
      p += n;
      size -= static_cast<uint64_t>(n);
    }
  }

  void commit() {
    if (::fsync(fd_) != 0) fail(fmt::format("cannot write {}: fsync failed: {}", path_string(target_), system_message()));
    int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(fmt::format("cannot write {}: close failed: {}", path_string(target_), system_message()));
    if (::rename(temp_.c_str(), target_.c_str()) != 0)
      fail(fmt::format("cannot write {}: renaming the temporary file over it failed: {}", path_string(target_),
                       system_message()));
    committed_ = true;
    // Make the rename itself durable. Best effort: some file systems cannot
    // fsync a directory, and the data is already safely in place.
    std::string dir = std::filesystem::path(target_).parent_path().string();
    int dir_fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd >= 0) {
      (void)::fsync(dir_fd);
      ::close(dir_fd);
    }
  }

 private:
  std::string target_, temp_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

void save(const std::map<std::string, Tensor>& tensors, const std::string& path,
          const std::map<std::string, std::string>& metadata) {
  Plan plan = plan_file(tensors, metadata);
  AtomicFile file(path);
  file.write(plan.header.data(), plan.header.size());
  for (const PlannedTensor& p : plan.tensors) {
    if (p.nbytes == 0) continue;
    Tensor dense = dense_cpu(*p.tensor);
    file.write(dense.cpu_data_ptr(), p.nbytes);
  }
  file.commit();
}

std::string save_to_bytes(const std::map<std::string, Tensor>& tensors,
                          const std::map<std::string, std::string>& metadata) {
  Plan plan = plan_file(tensors, metadata);
  std::string out = std::move(plan.header);
  for (const PlannedTensor& p : plan.tensors) {
    if (p.nbytes == 0) continue;
    Tensor dense = dense_cpu(*p.tensor);
    out.append(static_cast<const char*>(dense.cpu_data_ptr()), p.nbytes);
  }
  return out;
}

SafetensorsFile load_from_bytes_with_metadata(std::string_view bytes) {
  return read_safetensors(bytes.size(), [&](uint64_t offset, void* destination, uint64_t n) {
    GD_INTERNAL_ASSERT(offset <= bytes.size() && n <= bytes.size() - offset, "safetensors: read outside the buffer");
    std::memcpy(destination, bytes.data() + offset, n);
  });
}

std::map<std::string, Tensor> load_from_bytes(std::string_view bytes) {
  return load_from_bytes_with_metadata(bytes).tensors;
}

SafetensorsFile load_with_metadata(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(fmt::format("cannot open {}: {}", path_string(path), system_message()));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) fail(fmt::format("cannot read {}: {}", path_string(path), system_message()));
  if (!S_ISREG(info.st_mode)) fail(fmt::format("cannot read {}: not a regular file", path_string(path)));
  auto size = static_cast<uint64_t>(info.st_size);
  return read_safetensors(size, [&](uint64_t offset, void* destination, uint64_t n) {
    char* p = static_cast<char*>(destination);
    while (n > 0) {
      ssize_t got = ::pread(fd, p, std::min<uint64_t>(n, 1u << 30), static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) fail(fmt::format("cannot read {}: {}", path_string(path), system_message()));
      if (got == 0) fail(fmt::format("cannot read {}: the file shrank while it was being read", path_string(path)));
      p += got;
      offset += static_cast<uint64_t>(got);
      n -= static_cast<uint64_t>(got);
    }
  });
}

std::map<std::string, Tensor> load(const std::string& path) { return load_with_metadata(path).tensors; }

}  // namespace gradiens
