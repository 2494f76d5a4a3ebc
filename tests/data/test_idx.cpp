// The IDX reader (raw and gzipped, valid and corrupt), the MNIST and
// FashionMNIST datasets on small files, and on the real Fashion-MNIST if installed.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/datasets/idx.h"
#include "data/datasets/mnist.h"
#include "data/libtorch_loader.h"
#include "data/transforms.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace ds = gradiens::data::datasets;
using gd::testing::error_of;
using gd::testing::values_of;

namespace {

using Bytes = std::string;

// An IDX file: magic 0x0000TTNN, the sizes big-endian, then `data` as given.
Bytes idx(uint8_t type, const std::vector<uint32_t>& dims, const Bytes& data) {
  Bytes out = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int shift : {24, 16, 8, 0}) out += static_cast<char>((d >> shift) & 0xff);
  return out + data;
}

Bytes bytes(std::initializer_list<int> values) {
  Bytes out;
  for (int v : values) out += static_cast<char>(v);
  return out;
}

// CRC-32 as gzip's trailer needs it (polynomial 0xEDB88320, bit by bit).
uint32_t crc32(const Bytes& data) {
  uint32_t crc = 0xffffffffu;
  for (char c : data) {
    crc ^= static_cast<uint8_t>(c);
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

Bytes little_endian_u32(uint32_t v) {
  return bytes({int(v & 0xff), int(v >> 8 & 0xff), int(v >> 16 & 0xff), int(v >> 24)});
}

// A one-member gzip file (RFC 1952) holding `data` in one stored deflate block
// (RFC 1951 BTYPE 00), so the test needs no compressor.
Bytes gzip_stored(const Bytes& data) {
  Bytes out = bytes({0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff});
  const auto n = static_cast<uint16_t>(data.size());
  out += bytes({1, n & 0xff, n >> 8, ~n & 0xff, (~n >> 8) & 0xff});
  out += data;
  return out + little_endian_u32(crc32(data)) + little_endian_u32(static_cast<uint32_t>(data.size()));
}

std::filesystem::path test_dir(const std::string& sub) {
  auto dir = std::filesystem::path(GRADIENS_DATA_TEST_DIR) / sub;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

void write_file(const std::filesystem::path& path, const Bytes& contents) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << contents;
}

}  // namespace

TEST_CASE("read_idx reads each IDX element type, big-endian, into its dtype") {
  struct Row {
    const char* name;
    Bytes file;
    gd::ScalarType dtype;
    std::vector<int64_t> shape;
    std::vector<double> values;
  };
  // Values by hand from the IDX spec: big-endian two's complement and IEEE 754.
  const Row rows[] = {
      {"ubyte 1-d", idx(0x08, {3}, bytes({1, 2, 255})), gd::kUInt8, {3}, {1, 2, 255}},
      {"ubyte 3-d", idx(0x08, {2, 1, 2}, bytes({1, 2, 3, 4})), gd::kUInt8, {2, 1, 2}, {1, 2, 3, 4}},
      {"ubyte empty", idx(0x08, {0, 5}, ""), gd::kUInt8, {0, 5}, {}},
      {"signed byte", idx(0x09, {3}, bytes({0xff, 0x80, 0x7f})), gd::kInt32, {3}, {-1, -128, 127}},
      {"short", idx(0x0B, {2}, bytes({0xff, 0xfe, 0x01, 0x02})), gd::kInt32, {2}, {-2, 258}},
      {"int", idx(0x0C, {2}, bytes({0x80, 0, 0, 0, 0, 0, 0x01, 0x02})), gd::kInt32, {2}, {-2147483648.0, 258}},
      {"float", idx(0x0D, {2}, bytes({0x3f, 0xc0, 0, 0, 0xc0, 0, 0, 0})), gd::kFloat32, {2}, {1.5, -2}},
      {"double", idx(0x0E, {1, 1}, bytes({0x3f, 0xb9, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a})), gd::kFloat64, {1, 1},
       {0.1}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.name);
    for (bool gzipped : {false, true}) {
      CAPTURE(gzipped);
      gd::Tensor t = ds::read_idx_from_bytes(gzipped ? gzip_stored(row.file) : row.file);
      CHECK(t.dtype() == row.dtype);
      CHECK(std::vector<int64_t>(t.sizes().begin(), t.sizes().end()) == row.shape);
      CHECK(values_of(t) == row.values);
    }
  }
}

TEST_CASE("read_idx rejects each kind of corrupt file with a message naming it") {
  struct Row {
    const char* kind;
    Bytes file;
    const char* error;
  };
  const Row rows[] = {
      {"empty", "", "f: not an IDX file: the file has 0 bytes, fewer than the 4 of the magic number"},
      {"short magic", bytes({0, 0, 8}),
       "f: not an IDX file: the file has 3 bytes, fewer than the 4 of the magic number"},
      {"bad magic", bytes({0x1f, 0x00, 8, 1, 0, 0, 0, 0}),
       "f: not an IDX file: bad magic number 0x1F000801 (its first two bytes must be zero)"},
      {"unknown type", idx(0x0A, {1}, "x"),
       "f: bad IDX magic number 0x00000A01: unknown data type 0x0A (expected 0x08, 0x09, 0x0B, 0x0C, 0x0D or 0x0E)"},
      {"no dimensions", idx(0x08, {}, "x"),
       "f: bad IDX magic number 0x00000800: 0 dimensions (1 to 64 are supported)"},
      {"too many dimensions", bytes({0, 0, 8, 65}),
       "f: bad IDX magic number 0x00000841: 65 dimensions (1 to 64 are supported)"},
      {"truncated sizes", bytes({0, 0, 8, 3, 0, 0, 0, 1, 0, 0, 0}),
       "f: truncated IDX header: 3 dimensions need 12 bytes after the magic number, the file has 7"},
      {"truncated data", idx(0x08, {2, 2}, "abc"),
       "f: truncated IDX file: IDX dimensions [2, 2] of unsigned byte (1 bytes each) need 4 bytes of data, but the "
       "file holds 3"},
      {"extra data", idx(0x0C, {1}, "abcde"),
       "f: IDX file too long: IDX dimensions [1] of int (4 bytes each) need 4 bytes of data, but the file holds 5"},
      {"sizes that disagree", idx(0x0E, {3}, Bytes(16, 'x')),
       "f: truncated IDX file: IDX dimensions [3] of double (8 bytes each) need 24 bytes of data, but the file "
       "holds 16"},
      {"overflowing sizes", idx(0x0D, {0xffffffff, 0xffffffff, 2}, ""),
       "f: IDX dimensions [4294967295, 4294967295, 2] overflow: more than 2^63 bytes of data"},
      {"overflow by element size", idx(0x0E, {0x80000000, 0x80000000}, ""),
       "f: IDX dimensions [2147483648, 2147483648] overflow: more than 2^63 bytes of data"},
      // Found by fuzz_idx: no elements, but the strides of the other sizes overflow.
      {"empty with overflowing strides", idx(0x08, {0, 0xffffffff, 0xffffffff, 2}, ""),
       "f: IDX dimensions [0, 4294967295, 4294967295, 2] are too large: a tensor of that shape has strides beyond "
       "2^63"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.kind);
    CHECK(error_of([&] { ds::read_idx_from_bytes(row.file, "f"); }) == row.error);
  }
}

TEST_CASE("read_idx: gzip members, padding, and corrupt or truncated gzip") {
  const Bytes valid = idx(0x08, {3}, bytes({7, 8, 9}));
  const Bytes gz = gzip_stored(valid);
  Bytes bad_crc = gz;
  bad_crc[bad_crc.size() - 8] ^= 1;
  Bytes bad_length = gz;
  bad_length[bad_length.size() - 4] ^= 1;
  Bytes bad_block = gz;
  bad_block[10] = 0x07;  // BTYPE 11, reserved
  struct Row {
    const char* kind;
    Bytes file;
    const char* error;  // "" for a file that reads as [7, 8, 9]
  };
  const Row rows[] = {
      {"one member", gz, ""},
      {"two members split mid-header", gzip_stored(valid.substr(0, 6)) + gzip_stored(valid.substr(6)), ""},
      {"zero padding", gz + Bytes(5, '\0'), ""},
      {"empty last member", gz + gzip_stored(""), ""},
      {"trailing garbage", gz + "junk", "f: 4 bytes of data that is not gzip follow the gzip stream"},
      {"truncated stream", gz.substr(0, gz.size() - 3), "f: truncated gzip file (the compressed stream ends early)"},
      {"truncated mid-data", gz.substr(0, 20), "f: truncated gzip file (the compressed stream ends early)"},
      {"gzip header only", gz.substr(0, 10), "f: truncated gzip file (the compressed stream ends early)"},
      {"bad crc", bad_crc, "f: corrupt gzip data (incorrect data check)"},
      {"bad length", bad_length, "f: corrupt gzip data (incorrect length check)"},
      {"bad block type", bad_block, "f: corrupt gzip data (invalid block type)"},
      {"empty content", gzip_stored(""),
       "f: not an IDX file: the decompressed file has 0 bytes, fewer than the 4 of the magic number"},
      {"data shorter than sizes", gzip_stored(idx(0x08, {5}, "abc")),
       "f: truncated IDX file: IDX dimensions [5] of unsigned byte (1 bytes each) need 5 bytes of data, but the "
       "decompressed file holds 3"},
      {"data longer than sizes", gzip_stored(idx(0x08, {2}, "abc")),
       "f: the decompressed file is longer than its IDX header and data (10 bytes)"},
      // 2^31 bytes cannot come out of 31 compressed bytes: rejected before allocating.
      {"sizes beyond deflate's ratio", gzip_stored(idx(0x08, {0x80000000}, "")),
       "f: truncated gzip IDX file: IDX dimensions [2147483648] of unsigned byte (1 bytes each) need 2147483648 "
       "bytes of data, more than 31 compressed bytes can hold"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.kind);
    if (*row.error == '\0') {
      CHECK(values_of(ds::read_idx_from_bytes(row.file, "f")) == std::vector<double>{7, 8, 9});
    } else {
      CHECK(error_of([&] { ds::read_idx_from_bytes(row.file, "f"); }) == row.error);
    }
  }
}

TEST_CASE("read_idx reads files, gzipped or not whatever their name, and names the file in errors") {
  auto dir = test_dir("idx_files");
  const Bytes valid = idx(0x0B, {2, 1}, bytes({0x80, 0x00, 0x00, 0x05}));
  write_file(dir / "raw.idx", valid);
  write_file(dir / "packed.idx", gzip_stored(valid));  // gzip found by its magic, not a .gz name
  write_file(dir / "bad.gz", gzip_stored(valid).substr(0, 15));
  for (const char* name : {"raw.idx", "packed.idx"}) {
    CAPTURE(name);
    gd::Tensor t = ds::read_idx((dir / name).string());
    CHECK(t.sizes().size() == 2);
    CHECK(values_of(t) == std::vector<double>{-32768, 5});
  }
  const std::string bad = (dir / "bad.gz").string();
  CHECK(error_of([&] { ds::read_idx(bad); }) == bad + ": truncated gzip file (the compressed stream ends early)");
  const std::string missing = (dir / "missing").string();
  CHECK(error_of([&] { ds::read_idx(missing); }) == missing + ": cannot open: No such file or directory");
}

TEST_CASE("MNIST and FashionMNIST read a small set as ToTensor does, and check their files") {
  auto root = test_dir("mnist");
  // Two 2x3 images, labels 9 and 0; the training images are gzipped.
  write_file(root / "train-images-idx3-ubyte.gz", gzip_stored(idx(0x08, {2, 2, 3}, bytes({0, 1, 2, 3, 4, 5, 255, 254,
                                                                                           128, 127, 51, 17}))));
  write_file(root / "train-labels-idx1-ubyte", idx(0x08, {2}, bytes({9, 0})));
  ds::FashionMNIST train(root.string(), /*train=*/true);
  REQUIRE(train.size() == 2);
  CHECK(train.is_train());
  CHECK(train.classes().size() == 10);
  CHECK(train.classes()[9] == "Ankle boot");
  auto sample = train.get(1);
  CHECK(sample.data.dtype() == gd::kFloat32);
  CHECK(std::vector<int64_t>(sample.data.sizes().begin(), sample.data.sizes().end()) == std::vector<int64_t>{1, 2, 3});
  // torch.tensor([255, 254, 128, 127, 51, 17], dtype=torch.uint8).float().div(255).tolist()
  CHECK(values_of(sample.data) == std::vector<double>{1.0, 0.9960784316062927, 0.501960813999176,
                                                       0.49803921580314636, 0.20000000298023224,
                                                       0.06666667014360428});
  CHECK(sample.target.dtype() == gd::kInt64);
  CHECK(sample.target.dim() == 0);
  CHECK(sample.target.item<int64_t>() == 0);
  CHECK(values_of(train.targets()) == std::vector<double>{9, 0});
  CHECK(train.images().sizes().size() == 4);
  CHECK(error_of([&] { train.get(2); }) == "index 2 is out of bounds for dimension 0 with size 2");

  // libtorch's form: Mode, .map(Normalize).map(Stack), make_data_loader.
  auto pipeline = ds::MNIST(root.string(), ds::MNIST::Mode::kTrain)
                      .map(gd::data::transforms::Normalize<>(0.5, 0.5))
                      .map(gd::data::transforms::Stack<>());
  CHECK(pipeline.size() == std::optional<size_t>(2));
  auto loader = gd::data::make_data_loader<gd::data::samplers::SequentialSampler>(std::move(pipeline), 2);
  const auto batch = *loader->begin();
  CHECK(batch.data.sizes() == gd::IntArrayRef({2, 1, 2, 3}));
  CHECK(values_of(batch.target) == std::vector<double>{9, 0});
  CHECK(values_of(batch.data.select(0, 1)) == values_of((train.get(1).data - 0.5) / 0.5));

  // torchvision's layout, root/MNIST/raw, for MNIST.
  write_file(root / "MNIST" / "raw" / "t10k-images-idx3-ubyte", idx(0x08, {1, 1, 1}, bytes({51})));
  write_file(root / "MNIST" / "raw" / "t10k-labels-idx1-ubyte.gz", gzip_stored(idx(0x08, {1}, bytes({3}))));
  ds::MNIST test(root.string(), /*train=*/false);
  CHECK(test.size() == 1);
  CHECK(test.classes()[3] == "3 - three");
  CHECK(values_of(test.get(0).data) == std::vector<double>{0.20000000298023224});
}

TEST_CASE("MNIST errors: missing files, mismatched counts, wrong shapes, bad labels") {
  const std::string root = test_dir("mnist_bad").string();
  auto write = [&](const char* name, const Bytes& contents) {
    write_file(std::filesystem::path(root) / name, contents);
  };
  CHECK(error_of([&] { ds::FashionMNIST(root, false); }) ==
        "FashionMNIST: cannot find t10k-images-idx3-ubyte or t10k-images-idx3-ubyte.gz in " + root + " (nor in " +
            root + "/FashionMNIST/raw) (on Debian and Ubuntu, the dataset-fashion-mnist package installs them in "
                   "/usr/share/datasets/fashion-mnist)");
  write("t10k-images-idx3-ubyte", idx(0x08, {3, 1, 1}, bytes({1, 2, 3})));
  CHECK(error_of([&] { ds::MNIST(root, false); })
            .starts_with("MNIST: cannot find t10k-labels-idx1-ubyte or t10k-labels-idx1-ubyte.gz in " + root));
  write("t10k-labels-idx1-ubyte", idx(0x08, {2}, bytes({1, 2})));
  CHECK(error_of([&] { ds::MNIST(root, false); }) == "MNIST: " + root + "/t10k-images-idx3-ubyte holds 3 images but " +
                                                          root + "/t10k-labels-idx1-ubyte holds 2 labels");
  write("t10k-labels-idx1-ubyte", idx(0x08, {3}, bytes({1, 10, 2})));
  CHECK(error_of([&] { ds::MNIST(root, false); }) ==
        "MNIST: " + root + "/t10k-labels-idx1-ubyte: label 10 of sample 1 is not a class index in [0, 10)");
  write("t10k-labels-idx1-ubyte", idx(0x08, {3, 1}, bytes({1, 2, 3})));
  CHECK(error_of([&] { ds::MNIST(root, false); }) ==
        root + "/t10k-labels-idx1-ubyte: expected labels (an unsigned-byte IDX file with 1 dimensions, magic "
               "0x00000801), got uint8 data of shape [3, 1]");
  write("t10k-labels-idx1-ubyte", idx(0x0C, {1}, bytes({0, 0, 0, 1})));
  CHECK(error_of([&] { ds::MNIST(root, false); }) ==
        root + "/t10k-labels-idx1-ubyte: expected labels (an unsigned-byte IDX file with 1 dimensions, magic "
               "0x00000801), got int32 data of shape [1]");
  write("t10k-labels-idx1-ubyte", idx(0x08, {4}, bytes({1, 2, 3})));
  CHECK(error_of([&] { ds::MNIST(root, false); }) ==
        root + "/t10k-labels-idx1-ubyte: truncated IDX file: IDX dimensions [4] of unsigned byte (1 bytes each) "
               "need 4 bytes of data, but the file holds 3");
}

TEST_CASE("FashionMNIST: the real files, where Debian's dataset-fashion-mnist puts them") {
  const std::string root = ds::FashionMNIST::kDefaultRoot;
  if (!std::filesystem::exists(root + "/t10k-labels-idx1-ubyte.gz") &&
      !std::filesystem::exists(root + "/t10k-labels-idx1-ubyte")) {
    MESSAGE("skipped: Fashion-MNIST is not installed in " << root << " (Debian package dataset-fashion-mnist)");
    return;
  }
  // Reference: numpy over the gzip files, and torchvision's ToTensor scaling:
  //   a = np.frombuffer(gzip.open(f).read(), np.uint8, offset=16).reshape(-1, 28, 28)
  //   torch.from_numpy(a[0]).float().div(255)[14, 10:15].tolist(); labels likewise (offset=8)
  struct Row {
    bool train;
    size_t size;
    std::vector<double> first_labels;
    std::vector<double> image0_row14;  // pixels [0, 14, 10:15]
  };
  const Row rows[] = {
      {true, 60000, {9, 0, 0, 3, 0}, {0.0, 0.0, 0.929411768913269, 0.886274516582489, 0.8509804010391235}},
      {false, 10000, {9, 2, 1, 1, 6}, {0.0, 0.0, 0.3843137323856354, 0.5333333611488342, 0.4313725531101227}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.train);
    ds::FashionMNIST set(root, row.train);
    REQUIRE(set.size() == row.size);
    CHECK(values_of(set.targets().slice(0, 0, 5)) == row.first_labels);
    CHECK(values_of(set.get(0).data.index({0, 14, gd::indexing::Slice(10, 15)})) == row.image0_row14);
    // 6000 (train) or 1000 (test) samples of each class: np.bincount(labels).
    gd::Tensor counts = gd::zeros({10}, gd::TensorOptions().dtype(gd::kInt64));
    const int64_t* target = set.targets().data_ptr<int64_t>();
    for (size_t i = 0; i < set.size(); ++i) counts.data_ptr<int64_t>()[target[i]] += 1;
    CHECK(values_of(counts) == std::vector<double>(10, static_cast<double>(row.size / 10)));
  }
}
