// The run-directory I/O of gradiens-train: SHA-256 test vectors, atomic
// writes, checkpoint save/verify/prune/resume, metrics logs, plots, progress
// output and the stop-signal guard.
#include <doctest/doctest.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernels/error.h"
#include "train/run/checkpoint.h"
#include "train/run/files.h"
#include "train/run/metrics_log.h"
#include "train/run/plots.h"
#include "train/run/progress.h"
#include "train/run/signals.h"

namespace fs = std::filesystem;
namespace tr = gradiens::train;
using namespace std::string_literals;

namespace {

// A fresh directory under the system temp directory, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "gradiens-run-io-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

std::set<std::string> names_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const gradiens::Error& e) {
    return e.what();
  }
  return "(no error)";
}

tr::CheckpointPolicy keep_last(int64_t count) {
  tr::CheckpointPolicy policy;
  policy.keep_last = count;
  return policy;
}

const std::map<std::string, std::string> files_at(int step) {
  return {{"model.bin", "weights\0of step "s + std::to_string(step)}, {"optim.bin", std::string(1000, char(step))}};
}

// Everything a FILE* received, through open_memstream.
struct MemoryFile {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* file = ::open_memstream(&buffer, &size);
  ~MemoryFile() {
    if (file) std::fclose(file);
    std::free(buffer);
  }
  std::string text() {
    std::fflush(file);
    return std::string(buffer, size);
  }
};

}  // namespace

TEST_CASE("run_io: sha256 test vectors") {
  // FIPS 180-2 appendix B and the empty-message digest.
  CHECK(tr::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(tr::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(tr::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(tr::sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("run_io: atomic write replaces the file and leaves no temporary") {
  TempDir tmp;
  fs::path path = tmp.path / "latest";
  tr::write_file_atomic(path, "first\n");
  tr::write_file_atomic(path, "binary\0second"s);
  CHECK(tr::read_file(path) == "binary\0second"s);
  CHECK(names_in(tmp.path) == std::set<std::string>{"latest"});
  tr::fsync_path(path);
  tr::fsync_path(tmp.path);

  fs::path missing = tmp.path / "no-such-dir" / "file";
  CHECK(error_of([&] { tr::write_file_atomic(missing, "x"); }).find(missing.string()) != std::string::npos);
  CHECK(error_of([&] { tr::read_file(missing); }).find(missing.string()) != std::string::npos);
  CHECK(error_of([&] { tr::fsync_path(missing); }).find(missing.string()) != std::string::npos);
}

TEST_CASE("run_io: checkpoint save and load round trip") {
  TempDir tmp;
  fs::path dir = tmp.path / "checkpoints";
  tr::CheckpointManager manager(dir, {});
  fs::path saved = manager.save(100, files_at(100), 0.25);
  CHECK(saved == dir / "step-000000100");
  CHECK(tr::read_file(dir / "latest") == "step-000000100\n");
  CHECK(names_in(saved) == std::set<std::string>{"checkpointer.json", "manifest.json", "model.bin", "optim.bin"});

  nlohmann::json manifest = nlohmann::json::parse(tr::read_file(saved / "manifest.json"));
  CHECK(manifest["format"] == "gradiens-checkpoint");
  CHECK(manifest["version"] == 1);
  CHECK(manifest["step"] == 100);
  CHECK(manifest["files"]["model.bin"]["bytes"] == files_at(100).at("model.bin").size());
  CHECK(manifest["files"]["model.bin"]["sha256"] == tr::sha256_hex(files_at(100).at("model.bin")));
  CHECK(manifest["files"].contains("checkpointer.json"));

  std::vector<std::string> skipped;
  tr::CheckpointManager fresh(dir, {});
  std::optional<tr::Checkpoint> loaded = fresh.load_latest(skipped);
  REQUIRE(loaded);
  CHECK(skipped.empty());
  CHECK(loaded->step == 100);
  CHECK(loaded->dir == saved);
  CHECK(loaded->files == files_at(100));

  tr::CheckpointManager empty(tmp.path / "none", {});
  CHECK_FALSE(empty.load_latest(skipped));
  CHECK(error_of([&] { manager.save(200, {{"../escape", "x"}}, std::nullopt); }).find("invalid file name") !=
        std::string::npos);
  CHECK(error_of([&] { manager.save(200, {{"manifest.json", "x"}}, std::nullopt); }).find("invalid file name") !=
        std::string::npos);
}

TEST_CASE("run_io: a save interrupted after its first file leaves the previous checkpoint loadable") {
  TempDir tmp;
  fs::path dir = tmp.path / "checkpoints";
  tr::CheckpointManager manager(dir, {});
  manager.save(100, files_at(100), std::nullopt);
  int calls = 0;
  manager.set_after_file_hook([&](const std::string& name) {
    ++calls;
    if (name == "model.bin") throw std::runtime_error("injected crash");
  });
  CHECK_THROWS_AS(manager.save(200, files_at(200), std::nullopt), std::runtime_error);
  CHECK(calls == 1);
  CHECK(names_in(dir).count("step-000000200.tmp") == 1);

  std::vector<std::string> skipped;
  tr::CheckpointManager resumed(dir, {});
  std::optional<tr::Checkpoint> loaded = resumed.load_latest(skipped);
  REQUIRE(loaded);
  CHECK(loaded->step == 100);
  CHECK(skipped.empty());

  // Any save clears the leftover, not only one of the same step.
  resumed.save(150, files_at(150), std::nullopt);
  CHECK(names_in(dir) == std::set<std::string>{"latest", "step-000000100", "step-000000150"});
  resumed.save(200, files_at(200), std::nullopt);
  CHECK(resumed.load_latest(skipped)->step == 200);
  CHECK(skipped.empty());
}

TEST_CASE("run_io: truncated and hand-edited checkpoints are passed over with a message") {
  TempDir tmp;
  fs::path dir = tmp.path / "checkpoints";
  tr::CheckpointManager manager(dir, keep_last(0));
  for (int step : {100, 200, 300}) manager.save(step, files_at(step), std::nullopt);

  const std::string model = files_at(300).at("model.bin");
  fs::resize_file(dir / "step-000000300" / "model.bin", model.size() - 3);
  std::string edited = files_at(200).at("model.bin");
  edited[0] = 'W';  // same size, different bytes
  { std::ofstream(dir / "step-000000200" / "model.bin", std::ios::binary) << edited; }

  std::vector<std::string> skipped;
  tr::CheckpointManager resumed(dir, keep_last(0));
  std::optional<tr::Checkpoint> loaded = resumed.load_latest(skipped);
  REQUIRE(loaded);
  CHECK(loaded->step == 100);
  REQUIRE(skipped.size() == 2);
  CHECK(skipped[0] == fmt::format("{}: model.bin: {} bytes, but manifest.json says {} (file was truncated or modified)",
                                  (dir / "step-000000300").string(), model.size() - 3, model.size()));
  CHECK(skipped[1] ==
        (dir / "step-000000200").string() + ": model.bin: sha256 mismatch (file was modified or truncated)");

  // A removed file and a manifest naming another step are caught as well.
  fs::remove(dir / "step-000000100" / "optim.bin");
  skipped.clear();
  CHECK_FALSE(resumed.load_latest(skipped));
  CHECK(skipped.back() == (dir / "step-000000100").string() + ": optim.bin: missing");
}

TEST_CASE("run_io: keep_last=2 prunes older checkpoints") {
  TempDir tmp;
  fs::path dir = tmp.path / "checkpoints";
  tr::CheckpointManager manager(dir, keep_last(2));
  for (int step : {100, 200, 300, 400}) manager.save(step, files_at(step), std::nullopt);
  CHECK(names_in(dir) == std::set<std::string>{"latest", "step-000000300", "step-000000400"});
  CHECK(tr::read_file(dir / "latest") == "step-000000400\n");
}

TEST_CASE("run_io: keep_best=1 survives a fresh manager and load_latest") {
  TempDir tmp;
  fs::path dir = tmp.path / "checkpoints";
  tr::CheckpointPolicy policy{.keep_last = 1, .keep_best = 1, .monitor = "val/accuracy", .maximize = true};
  {
    tr::CheckpointManager manager(dir, policy);
    manager.save(100, files_at(100), 0.5);
    manager.save(200, files_at(200), 0.9);
    manager.save(300, files_at(300), 0.7);
    manager.save(400, files_at(400), std::nan(""));  // NaN never counts as best
    CHECK(names_in(dir) == std::set<std::string>{"latest", "step-000000200", "step-000000400"});
    CHECK(manager.best() == dir / "step-000000200");
  }
  tr::CheckpointManager resumed(dir, policy);
  CHECK_FALSE(resumed.best());
  std::vector<std::string> skipped;
  REQUIRE(resumed.load_latest(skipped)->step == 400);
  CHECK(resumed.best() == dir / "step-000000200");
  resumed.save(500, files_at(500), 0.9);  // a tie: the earlier step stays best
  CHECK(names_in(dir) == std::set<std::string>{"latest", "step-000000200", "step-000000500"});
  CHECK(resumed.best() == dir / "step-000000200");
  resumed.save(600, files_at(600), HUGE_VAL);
  CHECK(names_in(dir) == std::set<std::string>{"latest", "step-000000600"});

  tr::CheckpointManager again(dir, policy);
  REQUIRE(again.load_latest(skipped)->step == 600);
  REQUIRE(again.entries().size() == 1);
  CHECK(*again.entries()[0].monitored == HUGE_VAL);
  CHECK(again.best() == dir / "step-000000600");
}

TEST_CASE("run_io: metrics lines and CSV cells") {
  tr::MetricRecord record{3, 1, 0, 0.5, {{"train/loss", 0.1 + 0.2}}};
  // 0.1 + 0.2 is 0.30000000000000004 in float64: the shortest text that reads back exactly.
  CHECK(tr::to_json_line(record) == R"({"step":3,"epoch":1,"phase":0,"time":0.5,"train/loss":0.30000000000000004})");
  CHECK(tr::parse_json_line(tr::to_json_line(record)).values.at("train/loss") == 0.1 + 0.2);
  CHECK(error_of([] { tr::to_json_line({1, 0, 0, 0, {{"step", 1.0}}}); }).find("reserved") != std::string::npos);

  TempDir tmp;
  tr::MetricsLog log(tmp.path, {"train/loss", "val/accuracy"});
  log.append(record);
  CHECK(tr::read_file(tmp.path / "metrics.csv") ==
        "step,epoch,phase,time,train/loss,val/accuracy\n3,1,0,0.5,0.30000000000000004,\n");
}

TEST_CASE("run_io: truncate_after then append equals an uninterrupted log") {
  std::vector<tr::MetricRecord> records;
  for (int step = 1; step <= 6; ++step) {
    tr::MetricRecord record{step, (step - 1) / 3, 0, 0.25 * step, {{"train/loss", 1.0 / step}, {"lr", 0.1}}};
    if (step % 2 == 0) record.values["val/accuracy"] = 0.5 + 0.01 * step;
    records.push_back(record);
  }
  const std::vector<std::string> columns = {"train/loss", "val/accuracy", "lr"};
  TempDir uninterrupted, resumed;
  {
    tr::MetricsLog log(uninterrupted.path, columns);
    for (const tr::MetricRecord& record : records) log.append(record);
  }
  {
    tr::MetricsLog log(resumed.path, columns);
    for (int i = 0; i < 4; ++i) log.append(records[i]);
  }
  // A crash in the middle of a line, then a resume from the checkpoint at step 2.
  { std::ofstream(resumed.path / "metrics.jsonl", std::ios::app) << R"({"step":5,"ep)"; }
  tr::MetricsLog log(resumed.path, columns);
  log.truncate_after(2);
  for (int i = 2; i < 6; ++i) log.append(records[i]);

  std::string csv = tr::read_file(resumed.path / "metrics.csv");
  CHECK(tr::read_file(resumed.path / "metrics.jsonl") == tr::read_file(uninterrupted.path / "metrics.jsonl"));
  CHECK(csv == tr::read_file(uninterrupted.path / "metrics.csv"));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 7);
  CHECK(csv.find("step,epoch") == 0);
  CHECK(csv.find("step,epoch", 1) == std::string::npos);

  std::vector<tr::MetricRecord> read = log.read_all();
  REQUIRE(read.size() == 6);
  for (size_t i = 0; i < read.size(); ++i) {
    CHECK(read[i].step == records[i].step);
    CHECK(read[i].epoch == records[i].epoch);
    CHECK(read[i].time == records[i].time);
    CHECK(read[i].values == records[i].values);
  }
}

TEST_CASE("run_io: non-finite metric values round trip as valid JSON") {
  const double inf = std::numeric_limits<double>::infinity();
  tr::MetricRecord record{7, 0, 1, 1.5, {{"a", std::nan("")}, {"b", inf}, {"c", -inf}}};
  std::string line = tr::to_json_line(record);
  CHECK(line == R"({"step":7,"epoch":0,"phase":1,"time":1.5,"a":"nan","b":"inf","c":"-inf"})");
  CHECK_NOTHROW(nlohmann::json::parse(line));

  TempDir tmp;
  tr::MetricsLog log(tmp.path, {"a", "b", "c"});
  log.append(record);
  std::vector<tr::MetricRecord> read = log.read_all();
  REQUIRE(read.size() == 1);
  CHECK(std::isnan(read[0].values.at("a")));
  CHECK(read[0].values.at("b") == inf);
  CHECK(read[0].values.at("c") == -inf);
  CHECK(tr::read_file(tmp.path / "metrics.csv") == "step,epoch,phase,time,a,b,c\n7,0,1,1.5,nan,inf,-inf\n");
}

TEST_CASE("run_io: standard plots drawn by gnuplot as PNG and SVG") {
  std::vector<tr::MetricRecord> records;
  for (int step = 1; step <= 20; ++step) {
    tr::MetricRecord record{step, 0, 0, 0, {{"train/loss", 2.0 / step}, {"lr", 0.01 * (1.0 - step / 40.0)}}};
    if (step % 5 == 0) record.values["val/loss"] = 2.5 / step, record.values["val/accuracy"] = 0.04 * step;
    records.push_back(record);
  }
  std::vector<tr::Plot> plots =
      tr::standard_plots(records, {"train/loss", "val/loss", "val/accuracy", "lr", "never/logged"});
  REQUIRE(plots.size() == 3);
  CHECK(plots[0].name == "loss");
  CHECK(plots[0].log_y);
  CHECK(plots[0].series.size() == 2);
  CHECK(plots[0].series[1].points.size() == 4);
  CHECK(plots[1].name == "val_accuracy");
  CHECK(plots[2].name == "lr");
  plots[1].title = "accuracy's \"title\" with_underscore";

  TempDir tmp;
  fs::path plots_dir = tmp.path / "plots";
  std::vector<fs::path> written = tr::draw_plots(plots_dir, plots);
  CHECK(written.size() == 6);
  CHECK(names_in(plots_dir) == std::set<std::string>{"loss.png", "loss.svg", "val_accuracy.png", "val_accuracy.svg",
                                                      "lr.png", "lr.svg"});
  for (const fs::path& path : written) {
    std::string bytes = tr::read_file(path);
    CHECK(!bytes.empty());
    if (path.extension() == ".png") CHECK(bytes.rfind("\x89PNG\r\n\x1a\n", 0) == 0);
    if (path.extension() == ".svg") CHECK(bytes.find("<svg") != std::string::npos);
  }
  CHECK(tr::read_file(plots_dir / "val_accuracy.svg").find("with_underscore") != std::string::npos);

  CHECK(error_of([&] { tr::draw_plots(plots_dir, plots, "gnuplot-that-does-not-exist"); }).find("not installed") !=
        std::string::npos);
  CHECK(tr::draw_plots(plots_dir, {tr::Plot{"empty", "", "", "", false, {{"nothing", {}}}}}).empty());
}

TEST_CASE("run_io: progress modes") {
  CHECK(tr::parse_progress_mode("bar") == tr::ProgressMode::kBar);
  CHECK(tr::parse_progress_mode("none") == tr::ProgressMode::kNone);
  CHECK(error_of([] { tr::parse_progress_mode("fast"); }).find("auto, bar, lines, none") != std::string::npos);
  CHECK(tr::format_duration(3723) == "1h02m03s");
  CHECK(tr::format_duration(308) == "5m08s");
}

TEST_CASE("run_io: progress lines are rate-limited by steps and plain") {
  MemoryFile memory;
  double now = 0;
  {
    // A memory stream is not a terminal, so auto means lines.
    tr::Progress progress(tr::ProgressMode::kAuto, memory.file, 10, [&] { return now; });
    CHECK(progress.mode() == tr::ProgressMode::kLines);
    for (int step = 1; step <= 25; ++step) {
      now = 0.5 * step;  // 2 steps/s
      progress.update({"1/2 Adam", 1, 3, step, 25, 0.5, step >= 10 ? "val/accuracy 0.8834" : ""});
      if (step == 12) progress.message("validation done");
    }
    progress.finish();
  }
  // From step 1 at 0.5 s to step 10 at 5 s: 9 steps in 4.5 s; 15 steps left take
  // 7.5 s and 5 steps 2.5 s, shown rounded half away from zero.
  CHECK(memory.text() ==
        "[1/2 Adam] epoch 1/3 step 10/25 loss 0.5 | val/accuracy 0.8834 | 2 steps/s ETA 8s\n"
        "validation done\n"
        "[1/2 Adam] epoch 1/3 step 20/25 loss 0.5 | val/accuracy 0.8834 | 2 steps/s ETA 3s\n"
        "[1/2 Adam] epoch 1/3 step 25/25 loss 0.5 | val/accuracy 0.8834 | 2 steps/s\n");
  CHECK(memory.text().find_first_of("\r\x1b") == std::string::npos);

  MemoryFile silent;
  tr::Progress none(tr::ProgressMode::kNone, silent.file, 1, [&] { return now; });
  none.update({"", 0, 0, 1, 1, 0, ""});
  CHECK(silent.text().empty());
}

TEST_CASE("run_io: progress bar redraws at most ten times a second within the width") {
  MemoryFile memory;
  double now = 0;
  {
    tr::Progress progress(tr::ProgressMode::kBar, memory.file, 1, [&] { return now; }, 60);
    for (int step = 1; step <= 100; ++step) {
      now = step / 64.0;  // exact in binary: a redraw every 7 ticks (7/64 s >= 0.1 s)
      progress.update({"train", 0, 0, step, 100, 0.25, ""});
    }
  }
  std::string text = memory.text();
  // Draws at steps 1, 8, ..., 99 (15) and at the last step.
  CHECK(std::count(text.begin(), text.end(), '\r') == 16);
  CHECK(text.back() == '\n');
  size_t start = 0;
  while ((start = text.find('\r', start)) != std::string::npos) {
    size_t end = text.find("\x1b[K", start);
    REQUIRE(end != std::string::npos);
    CHECK(end - start - 1 <= 59);
    start = end;
  }
  CHECK(text.find("100/100") != std::string::npos);
}

namespace {
volatile std::sig_atomic_t g_test_handler_calls = 0;
extern "C" void test_handler(int) { g_test_handler_calls = g_test_handler_calls + 1; }
}  // namespace

TEST_CASE("run_io: stop signals set a flag, reset to default, and are restored") {
  // doctest has handlers of its own installed; the guard must give them back.
  struct sigaction previous {}, previous_terminate {}, custom {}, current {};
  REQUIRE(::sigaction(SIGTERM, nullptr, &previous_terminate) == 0);
  custom.sa_handler = test_handler;
  sigemptyset(&custom.sa_mask);
  REQUIRE(::sigaction(SIGINT, &custom, &previous) == 0);
  {
    tr::StopSignalGuard guard;
    CHECK_FALSE(tr::StopSignalGuard::stop_requested());
    CHECK_THROWS_AS(tr::StopSignalGuard(), gradiens::Error);
    std::raise(SIGINT);
    CHECK(tr::StopSignalGuard::stop_requested());
    CHECK(tr::StopSignalGuard::signal_number() == SIGINT);
    // The next SIGINT would take the default action; SIGTERM is still caught.
    ::sigaction(SIGINT, nullptr, &current);
    CHECK((current.sa_handler == SIG_DFL));
    ::sigaction(SIGTERM, nullptr, &current);
    CHECK((current.sa_handler != SIG_DFL));
    CHECK((current.sa_handler != previous_terminate.sa_handler));
  }
  ::sigaction(SIGINT, nullptr, &current);
  CHECK((current.sa_handler == test_handler));
  ::sigaction(SIGTERM, nullptr, &current);
  CHECK((current.sa_handler == previous_terminate.sa_handler));
  CHECK(g_test_handler_calls == 0);
  ::sigaction(SIGINT, &previous, nullptr);
}
