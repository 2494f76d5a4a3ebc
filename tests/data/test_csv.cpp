// CSVDataset: quoting per RFC 4180, target column choice, dtypes, and the
// errors for malformed files.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/datasets/csv.h"
#include "tests/engine/op_registry.h"

namespace gd = gradiens;
namespace ds = gradiens::data::datasets;
using gd::testing::error_of;
using gd::testing::values_of;

namespace {

// Writes `contents` to a fresh file under the test directory and returns its path.
std::string csv_file(const std::string& name, const std::string& contents) {
  auto dir = std::filesystem::path(GRADIENS_DATA_TEST_DIR) / "csv";
  std::filesystem::create_directories(dir);
  auto path = dir / name;
  std::ofstream(path, std::ios::binary) << contents;
  return path.string();
}

std::vector<int64_t> shape(const gd::Tensor& t) { return {t.sizes().begin(), t.sizes().end()}; }

}  // namespace

TEST_CASE("CSVDataset parses numbers, quotes and line endings") {
  struct Row {
    const char* kind;
    std::string contents;
    ds::CSVOptions options;
    std::vector<double> features;  // row-major [N, F]
    std::vector<double> targets;
    std::vector<std::string> names;
  };
  // The expected values are the file's numbers read by hand.
  const Row rows[] = {
      {"plain, target last", "a,b,y\n1,2,3\n4,5,6\n", {}, {1, 2, 4, 5}, {3, 6}, {"a", "b", "y"}},
      {"target by name", "a,b,y\n1,2,3\n4,5,6\n", ds::CSVOptions().target_column("a"), {2, 3, 5, 6}, {1, 4},
       {"a", "b", "y"}},
      {"target by index", "a,b,y\n1,2,3\n4,5,6\n", ds::CSVOptions().target_column(1), {1, 3, 4, 6}, {2, 5},
       {"a", "b", "y"}},
      {"negative index", "a,b,y\n1,2,3\n", ds::CSVOptions().target_column(-3), {2, 3}, {1}, {"a", "b", "y"}},
      {"no header", "1,2\n3,4", ds::CSVOptions().header(false), {1, 3}, {2, 4}, {"0", "1"}},
      {"CRLF, blank lines, no final newline", "x,y\r\n\r\n1,2\r\n\n3,4", {}, {1, 3}, {2, 4}, {"x", "y"}},
      {"lone CR", "x,y\r1,2\r", {}, {1}, {2}, {"x", "y"}},
      {"quoted fields", "\"a,1\",\"say \"\"y\"\"\"\n\"1.5\",\" -2 \"\n", {}, {1.5}, {-2}, {"a,1", "say \"y\""}},
      {"line break inside quotes", "\"multi\nline\",y\n1,2\n", {}, {1}, {2}, {"multi\nline", "y"}},
      {"spaces, signs, exponents", "a,y\n  +1e3 ,\t-0.25\n.5,7.\n", {}, {1000, 0.5}, {-0.25, 7}, {"a", "y"}},
      {"byte order mark", "\xEF\xBB\xBFp,q\n1,2\n", {}, {1}, {2}, {"p", "q"}},
      {"header only", "a,b\n", {}, {}, {}, {"a", "b"}},
      {"target only", "y\n1\n2\n", {}, {}, {1, 2}, {"y"}},
  };
  for (const Row& row : rows) {
    CAPTURE(row.kind);
    ds::CSVDataset set(csv_file("parse.csv", row.contents), row.options);
    const auto n = static_cast<int64_t>(row.targets.size());
    CHECK(set.size() == row.targets.size());
    CHECK(shape(set.features()) == std::vector<int64_t>{n, static_cast<int64_t>(row.names.size()) - 1});
    CHECK(values_of(set.features()) == row.features);
    CHECK(values_of(set.targets()) == row.targets);
    CHECK(set.column_names() == row.names);
  }
}

TEST_CASE("CSVDataset: delimiter, dtypes and samples") {
  ds::CSVDataset semis(csv_file("semis.csv", "a;b;label\n1;2.5;0\n-3;4;2\n"),
                       ds::CSVOptions().delimiter(';').dtype(gd::kFloat64).target_dtype(gd::kInt64));
  CHECK(semis.features().dtype() == gd::kFloat64);
  CHECK(semis.targets().dtype() == gd::kInt64);
  CHECK(semis.target_index() == 2);
  auto sample = semis.get(1);
  CHECK(shape(sample.data) == std::vector<int64_t>{2});
  CHECK(values_of(sample.data) == std::vector<double>{-3, 4});
  CHECK(sample.target.dim() == 0);
  CHECK(sample.target.item<int64_t>() == 2);
  CHECK(error_of([&] { semis.get(2); }) == "index 2 is out of bounds for dimension 0 with size 2");

  // float32 by default: 0.1 is rounded to float.
  ds::CSVDataset floats(csv_file("floats.csv", "a,y\n0.1,1\n"));
  CHECK(floats.features().dtype() == gd::kFloat32);
  CHECK(values_of(floats.features()) == std::vector<double>{static_cast<double>(0.1f)});
}

TEST_CASE("CSVDataset rejects malformed files, naming line and column") {
  struct Row {
    const char* kind;
    std::string contents;
    ds::CSVOptions options;
    std::string error;  // after "<path>: "
  };
  const Row rows[] = {
      {"empty file", "", {}, "empty CSV file: no header and no rows"},
      {"blank lines only", "\n\r\n\n", {}, "empty CSV file: no header and no rows"},
      {"not a number", "a,b,y\n1,2,3\n4,x5,6\n", {}, "line 3, column 2 ('b'): 'x5' is not a number"},
      {"not a number, no header", "1,2\n3,4 5\n", ds::CSVOptions().header(false),
       "line 2, column 2: '4 5' is not a number"},
      {"empty field", "a,y\n1,\n", {}, "line 2, column 2 ('y'): an empty field is not a number"},
      {"trailing delimiter", "a,y\n1,2,\n", {}, "line 2: 3 fields, but the header on line 1 has 2"},
      {"ragged row", "a,b,y\n1,2,3\n\n4,5\n", {}, "line 4: 2 fields, but the header on line 1 has 3"},
      {"ragged row, no header", "\n1,2\n3\n", ds::CSVOptions().header(false), "line 3: 1 fields, but line 2 has 2"},
      {"row after a multi-line field", "\"a\nb\",y\n1,2\n3\n", {}, "line 4: 1 fields, but the header on line 1 has 2"},
      {"unknown target", "a,b\n1,2\n", ds::CSVOptions().target_column("c"),
       "unknown target column 'c'; the columns are: a, b"},
      {"ambiguous target", "a,b,a\n1,2,3\n", ds::CSVOptions().target_column("a"),
       "target column 'a' is ambiguous: columns 1, 3 share that name"},
      {"name without header", "1,2\n", ds::CSVOptions().header(false).target_column("y"),
       "target column 'y' is a name, but the file has no header (header(false)); give its index"},
      {"index out of range", "a,b\n1,2\n", ds::CSVOptions().target_column(2),
       "target column index 2 is out of range for 2 columns"},
      {"unclosed quote", "a,y\n1,\"2\n3,4\n", {}, "line 2, column 2: the quoted field that starts here is not closed"},
      {"text after quote", "a,y\n\"1\"x,2\n", {}, "line 2, column 1: unexpected character 'x' after the closing quote"},
      {"quote in plain field", "a,y\n1,2\"\n", {},
       "line 2, column 2: a quote inside an unquoted field (quote the whole field and double the quote)"},
      {"fractional class", "a,y\n1,2.5\n", ds::CSVOptions().target_dtype(gd::kInt64),
       "line 2, column 2 ('y'): cannot store '2.5' as the target: int64 needs whole numbers"},
      {"out of range", "a,y\n300,1\n", ds::CSVOptions().dtype(gd::kUInt8),
       "line 2, column 1 ('a'): cannot store '300' as a feature: it is out of the range of uint8"},
      {"nan class", "a,y\n1,nan\n", ds::CSVOptions().target_dtype(gd::kInt32),
       "line 2, column 2 ('y'): cannot store 'nan' as the target: int32 needs whole numbers"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.kind);
    const std::string path = csv_file("bad.csv", row.contents);
    CHECK(error_of([&] { ds::CSVDataset(path, row.options); }) == path + ": " + row.error);
  }
  const std::string missing = (std::filesystem::path(GRADIENS_DATA_TEST_DIR) / "csv" / "missing.csv").string();
  CHECK(error_of([&] { ds::CSVDataset{missing}; }) == missing + ": cannot open: No such file or directory");
}

TEST_CASE("CSVDataset accepts nan and inf in float columns") {
  ds::CSVDataset set(csv_file("special.csv", "a,b,y\nnan,-inf,1e400\n"), ds::CSVOptions().dtype(gd::kFloat64));
  auto v = values_of(set.features());
  CHECK(std::isnan(v[0]));
  CHECK(v[1] == -INFINITY);
  CHECK(values_of(set.targets())[0] == INFINITY);  // beyond double, as strtod rounds it
}
