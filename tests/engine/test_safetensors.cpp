// safetensors save/load: bit-exact round trips for every dtype, the reference
// writer's exact bytes, metadata, views, atomic writes, and one specific error
// for each corrupt file of the regression corpus (safetensors_corpus/).
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "engine/io/safetensors.h"
#include "gradiens.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace fs = std::filesystem;
using gd::Tensor;
using gd::testing::error_of;
using gd::testing::values_of;
using namespace std::string_literals;

namespace {

// The raw little-endian bytes of `values`.
template <class T>
std::string raw(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), values.begin(), out.size());
  return out;
}

// A tensor holding exactly `bytes` (row-major).
Tensor from_bytes(const std::string& bytes, std::vector<int64_t> shape, gd::ScalarType dtype) {
  Tensor t = gd::empty(shape, dtype);
  REQUIRE(static_cast<size_t>(t.numel()) * t.element_size() == bytes.size());
  if (!bytes.empty()) std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return t;
}

// The row-major bytes of a tensor.
std::string bytes_of(const Tensor& t) {
  Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), static_cast<size_t>(c.numel()) * c.element_size());
}

// 8-byte little-endian length, then the header text.
std::string with_length(const std::string& header) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + header;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

// A fresh directory, removed with its contents at the end of the test.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    static int counter = 0;
    path = fs::temp_directory_path() / ("gradiens_safetensors_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() { fs::remove_all(path); }
};

// "" when `got` has the dtype, shape and bytes of `want`.
std::string mismatch(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype()) return "dtype " + std::string(gd::dtype_name(got.dtype()));
  if (got.sizes() != want.sizes()) return "shape differs";
  if (bytes_of(got) != bytes_of(want)) return "bytes differ";
  return "";
}

struct DtypeCase {
  gd::ScalarType dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

// NaNs with payloads (quiet and signalling), -0.0, subnormals, infinities and
// integer extremes: a round trip must keep every bit.
std::vector<DtypeCase> dtype_cases() {
  return {
      {gd::kFloat32, {2, 3}, raw<uint32_t>({0x7fc00001, 0xff800001, 0x80000000, 0x00000001, 0x7f7fffff, 0xff800000})},
      {gd::kFloat64, {4}, raw<uint64_t>({0x7ff8000000000123, 0xfff0000000000001, 0x8000000000000000, 1})},
      {gd::kFloat16, {5}, raw<uint16_t>({0x7e01, 0xfc01, 0x8000, 0x0001, 0x7bff})},
      {gd::kBFloat16, {2, 2}, raw<uint16_t>({0x7fc1, 0xff81, 0x8000, 0x0001})},
      {gd::kInt32, {4}, raw<int32_t>({std::numeric_limits<int32_t>::min(), -1, 0, std::numeric_limits<int32_t>::max()})},
      {gd::kInt64, {2, 2}, raw<int64_t>({std::numeric_limits<int64_t>::min(), -1, 0, std::numeric_limits<int64_t>::max()})},
      {gd::kUInt8, {4}, raw<uint8_t>({0, 1, 128, 255})},
      {gd::kBool, {3}, raw<uint8_t>({1, 0, 1})},
  };
}

}  // namespace

TEST_CASE("safetensors: every dtype round trips bit-exactly, in memory and on disk") {
  ScratchDir dir;
  std::map<std::string, Tensor> all;
  for (const DtypeCase& c : dtype_cases()) {
    std::string name(gd::dtype_name(c.dtype));
    CAPTURE(name);
    Tensor x = from_bytes(c.bytes, c.shape, c.dtype);
    all[name] = x;
    CHECK(mismatch(gd::load_from_bytes(gd::save_to_bytes({{"x", x}})).at("x"), x) == "");
    fs::path path = dir.path / (name + ".safetensors");
    gd::save({{"x", x}}, path.string());
    auto loaded = gd::load(path.string());
    REQUIRE(loaded.size() == 1);
    CHECK(mismatch(loaded.at("x"), x) == "");
  }
  // All dtypes in one file.
  auto loaded = gd::load_from_bytes(gd::save_to_bytes(all));
  REQUIRE(loaded.size() == all.size());
  for (const auto& entry : all) CHECK_MESSAGE(mismatch(loaded.at(entry.first), entry.second) == "", entry.first);
}

TEST_CASE("safetensors: the reference writer's bytes") {
  // Expected bytes from the reference implementation's own tests
  // (huggingface/safetensors, safetensors/src/tensor.rs: test_serialization,
  // test_serialization_forced_alignement, test_empty): compact JSON, entry keys
  // in the order dtype, shape, data_offsets, padded with spaces to 8 bytes.
  const std::string floats = raw<float>({0, 1, 2, 3, 4, 5});
  struct Case {
    const char* what;
    std::map<std::string, Tensor> tensors;
    std::map<std::string, std::string> metadata;
    std::string bytes;
  };
  const Case cases[] = {
      {"64-byte header, no padding",
       {{"attn.0", from_bytes(floats, {1, 2, 3}, gd::kFloat32)}},
       {},
       "\x40\0\0\0\0\0\0\0"s + R"({"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}})" + floats},
      {"header padded by 7 spaces",
       {{"attn0", from_bytes(floats, {1, 1, 2, 3}, gd::kFloat32)}},
       {},
       "\x48\0\0\0\0\0\0\0"s + R"({"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}})" + "       " + floats},
      {"no tensors", {}, {}, "\x08\0\0\0\0\0\0\0"s + "{}      "},
      {"metadata only", {}, {{"framework", "pt"}}, "\x28\0\0\0\0\0\0\0"s + R"({"__metadata__":{"framework":"pt"}})" + "     "},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK(gd::save_to_bytes(c.tensors, c.metadata) == c.bytes);
    ScratchDir dir;
    gd::save(c.tensors, (dir.path / "x.safetensors").string(), c.metadata);
    CHECK(read_file(dir.path / "x.safetensors") == c.bytes);
    gd::SafetensorsFile loaded = gd::load_from_bytes_with_metadata(c.bytes);
    CHECK(loaded.metadata == c.metadata);
    REQUIRE(loaded.tensors.size() == c.tensors.size());
    for (const auto& [name, x] : c.tensors) CHECK(mismatch(loaded.tensors.at(name), x) == "");
  }
  // Loading reads the values the reference wrote: 0..5 as float32.
  CHECK(values_of(gd::load_from_bytes(cases[1].bytes).at("attn0")) == std::vector<double>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("safetensors: tensors are laid out by dtype alignment, then by name, as the reference orders them") {
  // The reference sorts by its Dtype enum, descending (I64 > F64 > F32 > I32 >
  // BF16 > F16 > U8 > BOOL for our dtypes), then by name; "__metadata__" comes first.
  std::map<std::string, Tensor> tensors = {
      {"a", from_bytes(raw<float>({1}), {1}, gd::kFloat32)},      {"b", from_bytes(raw<int64_t>({2}), {1}, gd::kInt64)},
      {"c", from_bytes(raw<uint8_t>({3}), {1}, gd::kUInt8)},      {"d", from_bytes(raw<double>({4}), {1}, gd::kFloat64)},
      {"e", from_bytes(raw<uint8_t>({1}), {1}, gd::kBool)},       {"f", from_bytes(raw<uint16_t>({0x3f80}), {1}, gd::kBFloat16)},
      {"g", from_bytes(raw<uint16_t>({0x3c00}), {1}, gd::kFloat16)}, {"h", from_bytes(raw<int32_t>({5}), {1}, gd::kInt32)},
      {"a2", from_bytes(raw<float>({6}), {1}, gd::kFloat32)},
  };
  std::string json = R"({"__metadata__":{"a":"1","b":"2"},)"
                     R"("b":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},)"
                     R"("d":{"dtype":"F64","shape":[1],"data_offsets":[8,16]},)"
                     R"("a":{"dtype":"F32","shape":[1],"data_offsets":[16,20]},)"
                     R"("a2":{"dtype":"F32","shape":[1],"data_offsets":[20,24]},)"
                     R"("h":{"dtype":"I32","shape":[1],"data_offsets":[24,28]},)"
                     R"("f":{"dtype":"BF16","shape":[1],"data_offsets":[28,30]},)"
                     R"("g":{"dtype":"F16","shape":[1],"data_offsets":[30,32]},)"
                     R"("c":{"dtype":"U8","shape":[1],"data_offsets":[32,33]},)"
                     R"("e":{"dtype":"BOOL","shape":[1],"data_offsets":[33,34]}})";
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string data = raw<int64_t>({2}) + raw<double>({4}) + raw<float>({1, 6}) + raw<int32_t>({5}) +
                     raw<uint16_t>({0x3f80, 0x3c00}) + raw<uint8_t>({3, 1});
  CHECK(gd::save_to_bytes(tensors, {{"b", "2"}, {"a", "1"}}) == with_length(json) + data);
}

TEST_CASE("safetensors: a header may list tensors in any order; offsets decide the layout") {
  std::string file = with_length(R"({"second":{"dtype":"I32","shape":[1],"data_offsets":[4,8]},)"
                                 R"("first":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})") +
                     raw<int32_t>({11, 22});
  auto loaded = gd::load_from_bytes(file);
  CHECK(values_of(loaded.at("first")) == std::vector<double>{11});
  CHECK(values_of(loaded.at("second")) == std::vector<double>{22});
  // The reference reads a null "__metadata__" as none.
  CHECK(gd::load_from_bytes_with_metadata(with_length(R"({"__metadata__":null})")).metadata.empty());
}

TEST_CASE("safetensors: views, zero-size and 0-dim tensors are saved as their row-major values") {
  Tensor base = gd::testing::sample({4, 5}, -1, 1, 7);
  Tensor shared = gd::testing::sample({6}, -1, 1, 8);
  struct Case {
    const char* what;
    Tensor x;
  };
  const Case cases[] = {
      {"transposed", base.t()},
      {"narrowed (storage offset)", base.narrow(0, 1, 2).narrow(1, 2, 3)},
      {"expanded (stride 0)", shared.narrow(0, 0, 1).expand({3, 4})},
      {"zero-size", gd::empty({0, 3}, gd::kFloat32)},
      {"0-dim", gd::testing::scalar_of(-0.0)},
      {"requires grad", gd::testing::sample({3}, -1, 1, 9).requires_grad_()},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    Tensor y = gd::load_from_bytes(gd::save_to_bytes({{"y", c.x}})).at("y");
    CHECK(mismatch(y, c.x) == "");
    CHECK(y.is_contiguous());
    CHECK_FALSE(y.requires_grad());
  }
  // Two views of one storage become two independent tensors.
  auto loaded = gd::load_from_bytes(gd::save_to_bytes({{"head", shared.narrow(0, 0, 4)}, {"tail", shared.narrow(0, 2, 4)}}));
  CHECK(mismatch(loaded.at("head"), shared.narrow(0, 0, 4)) == "");
  CHECK(mismatch(loaded.at("tail"), shared.narrow(0, 2, 4)) == "");
  loaded.at("head").fill_(5.0);
  CHECK(mismatch(loaded.at("tail"), shared.narrow(0, 2, 4)) == "");
  CHECK(gd::load_from_bytes(gd::save_to_bytes({})).empty());
}

TEST_CASE("safetensors: metadata round trips through files") {
  ScratchDir dir;
  std::string path = (dir.path / "m.safetensors").string();
  std::map<std::string, std::string> metadata = {
      {"format", "pt"}, {"note", "line\nbreak \"quoted\" \\ tab\t \xc3\xa9 \x01"}, {"", "empty key"}};
  gd::save({{"w", gd::ones({2}, gd::kFloat32)}}, path, metadata);
  gd::SafetensorsFile loaded = gd::load_with_metadata(path);
  CHECK(loaded.metadata == metadata);
  CHECK(values_of(loaded.tensors.at("w")) == std::vector<double>{1, 1});
  // The escapes serde_json writes: \n, \", \\, \t and \u0001, UTF-8 kept as is.
  CHECK(read_file(path).find(R"("note":"line\nbreak \"quoted\" \\ tab\t )"
                             "\xc3\xa9"
                             R"( \u0001")") != std::string::npos);
  gd::save({{"w", gd::ones({2}, gd::kFloat32)}}, path);
  CHECK(gd::load_with_metadata(path).metadata.empty());
}

TEST_CASE("safetensors: what cannot be saved") {
  struct Case {
    const char* what;
    std::map<std::string, Tensor> tensors;
    std::map<std::string, std::string> metadata;
    std::string message;
  };
  const Case cases[] = {
      {"reserved name", {{"__metadata__", gd::ones({1})}}, {}, "safetensors: '__metadata__' is reserved and cannot name a tensor"},
      {"undefined tensor", {{"w", Tensor()}}, {}, "safetensors: tensor 'w' is undefined"},
      {"name not UTF-8", {{"w\xff", gd::ones({1})}}, {}, "safetensors: tensor name 'w\xff' is not valid UTF-8"},
      {"metadata not UTF-8", {}, {{"k", "\xc3"}}, "safetensors: metadata value '\xc3' is not valid UTF-8"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    CHECK(error_of([&] { gd::save_to_bytes(c.tensors, c.metadata); }) == c.message);
  }
}

TEST_CASE("safetensors: each corrupt file of the corpus gives its own error") {
  const fs::path corpus = GRADIENS_SAFETENSORS_CORPUS;
  struct Case {
    const char* file;
    const char* message;
  };
  // Each file is described by its name; the header text is in the file.
  const Case cases[] = {
      {"empty_file", "the file is 0 bytes, too short for the 8-byte header length"},
      {"short_length", "the file is 5 bytes, too short for the 8-byte header length"},
      {"header_over_limit", "the header length 100000001 exceeds the limit of 100000000 bytes"},
      {"header_length_max_u64", "the header length 18446744073709551615 exceeds the limit of 100000000 bytes"},
      {"header_past_end", "the header length 64 runs past the end of the file (20 bytes after the length): the file is truncated"},
      {"empty_header", "the header is not valid JSON: parse error at line 1, column 1: syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal"},
      {"not_json", "the header is not valid JSON: parse error at line 1, column 33: syntax error while parsing object key - unexpected end of input; expected string literal"},
      {"invalid_utf8", "the header is not valid UTF-8: byte 0xff at offset 3"},
      {"nul_padding", "the header is not valid JSON: it holds a NUL byte at offset 2"},
      {"trailing_text", "the header is not valid JSON: parse error at line 1, column 4: syntax error while parsing value - unexpected '{'; expected end of input"},
      {"root_array", "the header must be a JSON object, got an array"},
      {"entry_not_object", "tensor 'w': expected an object with dtype, shape and data_offsets, got a number"},
      {"unknown_dtype", "tensor 'w': unknown dtype 'F128'"},
      {"unsupported_dtype", "tensor 'w': dtype U16 is not supported by gradiens"},
      {"dtype_not_string", "tensor 'w': dtype must be a string, got a number"},
      {"negative_dim", "tensor 'w': shape entry 0 must be a non-negative integer, got the negative integer -1"},
      {"fractional_dim", "tensor 'w': shape entry 0 must be a non-negative integer, got the number 2.0"},
      {"dim_beyond_int64", "tensor 'w': shape entry 0 is 9223372036854775808, larger than the largest int64"},
      {"too_many_dims", "tensor 'w': shape has more than 64 dimensions"},
      {"nested_shape", "tensor 'w': shape entry 0 must be a non-negative integer, got an array"},
      {"missing_data_offsets", "tensor 'w': missing key 'data_offsets'"},
      {"unknown_key", "tensor 'w': unknown key 'strides' (an entry holds dtype, shape and data_offsets)"},
      {"duplicate_tensor", "duplicate entry 'w' in the header"},
      {"duplicate_field", "tensor 'w': duplicate key 'dtype'"},
      {"duplicate_metadata_key", "duplicate key 'a' in __metadata__"},
      {"metadata_not_string", "__metadata__ value of 'epoch' must be a string, got a number"},
      {"metadata_not_object", "__metadata__ must be an object of strings, got a string"},
      {"three_offsets", "tensor 'w': data_offsets must be [begin, end], got more than two numbers"},
      {"one_offset", "tensor 'w': data_offsets must be [begin, end], got 1 number"},
      {"reversed_offsets", "tensor 'w': data_offsets [8, 0] end before they begin"},
      {"size_mismatch", "tensor 'w': data_offsets [0, 12] span 12 bytes, but shape [2, 2] of F32 needs 16"},
      {"shape_2p32_squared", "tensor 'w': shape [4294967296, 4294967296] has too many elements (their count overflows int64)"},
      {"byte_count_overflow", "tensor 'w': shape [1073741824, 1073741824, 4] of F32 needs more than 2^64 bytes"},
      {"first_not_at_zero", "tensor 'w': data_offsets [4, 8] leave a gap: the first tensor's data must begin at 0"},
      {"gap_between", "tensor 'b': data_offsets [8, 12] leave a 4-byte gap after tensor 'a', which ends at 4"},
      {"overlap", "tensor 'b': data_offsets [4, 12] overlap tensor 'a' (data_offsets [0, 8])"},
      {"truncated_data", "tensor 'w': data_offsets [0, 16] run past the end of the data (12 bytes): the file is truncated"},
      {"trailing_bytes", "the data holds 8 bytes but the tensors cover 4: 4 bytes after the last tensor belong to none"},
      {"bool_byte_2", "tensor 'm': BOOL element 2 is the byte 0x02; a BOOL must be 0 or 1"},
  };
  std::set<std::string> listed;
  for (const Case& c : cases) {
    fs::path path = corpus / (std::string(c.file) + ".safetensors");
    CAPTURE(path);
    listed.insert(path.filename().string());
    REQUIRE(fs::exists(path));
    std::string expected = "safetensors: "s + c.message;
    CHECK(error_of([&] { gd::load(path.string()); }) == expected);
    CHECK(error_of([&] { gd::load_from_bytes(read_file(path)); }) == expected);
  }
  // A file added to the corpus (say, a fuzzer's find) needs its row above.
  for (const std::string& name : listing(corpus)) {
    if (name.ends_with(".safetensors")) CHECK_MESSAGE(listed.count(name), name << " has no row in this table");
  }
}

TEST_CASE("safetensors: the header must be well-formed UTF-8") {
  struct Case {
    const char* what;
    std::string name;  // a tensor name written raw into the header, at offset 2
    std::string message;
  };
  const Case cases[] = {
      {"2, 3 and 4-byte characters", "\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e", ""},
      {"overlong '/'", "\xc0\xaf", "byte 0xc0 at offset 2"},
      {"UTF-16 surrogate", "\xed\xa0\x80", "byte 0xed at offset 2"},
      {"past U+10FFFF", "\xf4\x90\x80\x80", "byte 0xf4 at offset 2"},
      {"cut short", "a\xe2\x82", "byte 0xe2 at offset 3"},
      {"lone continuation byte", "\x80", "byte 0x80 at offset 2"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    std::string file = with_length(R"({")" + c.name + R"(":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})") + "\x07";
    std::string error = error_of([&] { gd::load_from_bytes(file); });
    CHECK(error == (c.message.empty() ? "" : "safetensors: the header is not valid UTF-8: " + c.message));
    if (c.message.empty()) CHECK(values_of(gd::load_from_bytes(file).at(c.name)) == std::vector<double>{7});
  }
}

TEST_CASE("safetensors: a shape whose element count wraps 64 bits is an error, not a small tensor") {
  // [2^32, 2^32] of F32 wraps to 0 elements (and 0 bytes) in unchecked uint64 arithmetic.
  for (const char* shape : {"[4294967296,4294967296]", "[4294967296,4294967296,0]", "[0,4294967296,4294967296]"}) {
    CAPTURE(shape);
    std::string file = with_length(R"({"w":{"dtype":"F32","shape":)"s + shape + R"(,"data_offsets":[0,0]}})");
    CHECK(error_of([&] { gd::load_from_bytes(file); }).find("has too many elements") != std::string::npos);
  }
  // A zero-size tensor with a huge dimension is fine when the strides fit.
  std::string ok = with_length(R"({"w":{"dtype":"F32","shape":[0,4611686018427387904],"data_offsets":[0,0]}})");
  CHECK(gd::load_from_bytes(ok).at("w").sizes() == gd::IntArrayRef({0, int64_t{1} << 62}));
}

TEST_CASE("safetensors: every truncation of a valid file is an error") {
  std::string file = gd::save_to_bytes({{"a", gd::testing::sample({3, 2}, -1, 1, 1)},
                                        {"b", gd::ones({4}, gd::kInt32)}},
                                       {{"k", "v"}});
  for (size_t n = 0; n < file.size(); ++n) {
    CAPTURE(n);
    CHECK(error_of([&] { gd::load_from_bytes(std::string_view(file).substr(0, n)); }) != "");
  }
  CHECK(error_of([&] { gd::load_from_bytes(std::string_view(file).substr(0, file.size() - 1)); }) ==
        "safetensors: tensor 'b': data_offsets [48, 64] run past the end of the data (63 bytes): the file is truncated");
  CHECK(error_of([&] { gd::load_from_bytes(std::string_view(file).substr(0, 20)); }).find("runs past the end of the file") !=
        std::string::npos);
}

TEST_CASE("safetensors: writes are atomic") {
  ScratchDir dir;
  const std::map<std::string, Tensor> first = {{"w", gd::ones({3}, gd::kFloat32)}};
  const std::map<std::string, Tensor> second = {{"w", gd::zeros({5}, gd::kFloat64)}};
  std::string target = (dir.path / "model.safetensors").string();

  // Success leaves the target and nothing else; a second save replaces it.
  gd::save(first, target);
  CHECK(listing(dir.path) == std::set<std::string>{"model.safetensors"});
  gd::save(second, target);
  CHECK(listing(dir.path) == std::set<std::string>{"model.safetensors"});
  CHECK(read_file(target) == gd::save_to_bytes(second));

  // A save that fails leaves the old file as it was and no temporary file.
  std::string before = read_file(target);
  CHECK(error_of([&] { gd::save({{"__metadata__", gd::ones({1})}}, target); }) != "");
  CHECK(read_file(target) == before);
  CHECK(listing(dir.path) == std::set<std::string>{"model.safetensors"});

  // A directory that does not exist.
  std::string missing = (dir.path / "no_such_dir" / "x.safetensors").string();
  CHECK(error_of([&] { gd::save(first, missing); }) ==
        "safetensors: cannot write '" + missing + "': creating a temporary file failed: No such file or directory");
  CHECK(listing(dir.path) == std::set<std::string>{"model.safetensors"});

  // The rename fails when the target is a non-empty directory: the temporary
  // file, fully written by then, must be removed.
  fs::create_directories(dir.path / "taken" / "inside");
  std::string taken = (dir.path / "taken").string();
  CHECK(error_of([&] { gd::save(first, taken); }).starts_with("safetensors: cannot write '" + taken +
                                                              "': renaming the temporary file over it failed"));
  CHECK(listing(dir.path) == std::set<std::string>{"model.safetensors", "taken"});
  CHECK(listing(dir.path / "taken") == std::set<std::string>{"inside"});
}

TEST_CASE("safetensors: loading a path that is not a readable file") {
  ScratchDir dir;
  std::string missing = (dir.path / "absent.safetensors").string();
  CHECK(error_of([&] { gd::load(missing); }) == "safetensors: cannot open '" + missing + "': No such file or directory");
  CHECK(error_of([&] { gd::load(dir.path.string()); }) ==
        "safetensors: cannot read '" + dir.path.string() + "': not a regular file");
}
