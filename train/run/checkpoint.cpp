// CheckpointManager: atomic checkpoint directories, manifest verification and
// keep-last / keep-best pruning (see Note [Checkpoint atomicity]).
#include "train/run/checkpoint.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <system_error>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernels/error.h"
#include "train/run/files.h"

namespace gradiens::train {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kManifest = "manifest.json";
constexpr const char* kStateFile = "checkpointer.json";
constexpr const char* kManifestFormat = "gradiens-checkpoint";
constexpr const char* kStateFormat = "gradiens-checkpointer";

// A monitored value (NaN and infinities as strings; absent: null).
json monitored_to_json(const std::optional<double>& value) { return value ? double_to_json(*value) : json(nullptr); }

std::optional<double> monitored_from_json(const json& value) {
  if (value.is_null()) return std::nullopt;
  return double_from_json(value, "a monitored value");
}

// The step a canonical checkpoint directory name stands for; nullopt for any
// other name (including "step-N.tmp" and non-canonical digit counts).
std::optional<int64_t> step_of_dir_name(const std::string& name) {
  constexpr std::string_view prefix = "step-";
  if (name.size() < prefix.size() + 9 || name.size() > prefix.size() + 18 || name.compare(0, prefix.size(), prefix) != 0)
    return std::nullopt;
  int64_t step = 0;
  for (size_t i = prefix.size(); i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9') return std::nullopt;
    step = step * 10 + (name[i] - '0');
  }
  if (checkpoint_dir_name(step) != name) return std::nullopt;
  return step;
}

// A name that stays inside the checkpoint directory and is not one of the
// manager's own files.
bool is_valid_file_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos && name != kManifest && name != kStateFile;
}

json state_to_json(const CheckpointPolicy& policy, const std::vector<CheckpointManager::Entry>& entries) {
  json checkpoints = json::array();
  for (const CheckpointManager::Entry& entry : entries)
    checkpoints.push_back({{"step", entry.step}, {"monitored", monitored_to_json(entry.monitored)}});
  return {{"format", kStateFormat},      {"version", 1},          {"monitor", policy.monitor},
          {"maximize", policy.maximize}, {"checkpoints", checkpoints}};
}

std::vector<CheckpointManager::Entry> state_from_json(const std::string& text) {
  json state = json::parse(text);
  if (!state.is_object() || state.value("format", "") != kStateFormat)
    throw Error(fmt::format("format is not \"{}\"", kStateFormat));
  if (state.value("version", 0) != 1) throw Error(fmt::format("version {} is not supported", state["version"].dump()));
  const json& checkpoints = state.at("checkpoints");
  if (!checkpoints.is_array()) throw Error("\"checkpoints\" is not an array");
  std::vector<CheckpointManager::Entry> entries;
  for (const json& item : checkpoints) {
    if (!item.is_object() || !item.at("step").is_number_integer())
      throw Error(fmt::format("checkpoint entry {} has no integer \"step\"", item.dump()));
    entries.push_back({item["step"].get<int64_t>(), monitored_from_json(item.at("monitored"))});
  }
  return entries;
}

// Verifies one checkpoint directory against its manifest. Returns what is
// wrong, or nothing and fills `checkpoint` and `state`.
std::optional<std::string> verify_checkpoint(const fs::path& dir, int64_t step, Checkpoint& checkpoint,
                                             std::vector<CheckpointManager::Entry>& state) {
  std::error_code ec;
  if (!fs::exists(dir / kManifest, ec)) return fmt::format("{}: missing", kManifest);
  json manifest;
  try {
    manifest = json::parse(read_file(dir / kManifest));
  } catch (const std::exception& e) {
    return fmt::format("{}: cannot be parsed: {}", kManifest, e.what());
  }
  if (!manifest.is_object() || manifest.value("format", json()) != kManifestFormat)
    return fmt::format("{}: format is not \"{}\"", kManifest, kManifestFormat);
  if (manifest.value("version", json()) != 1)
    return fmt::format("{}: version {} is not supported", kManifest, manifest.value("version", json()).dump());
  if (!manifest.contains("step") || !manifest["step"].is_number_integer() || manifest["step"].get<int64_t>() != step)
    return fmt::format("{}: step {} does not match the directory name", kManifest, manifest.value("step", json()).dump());
  if (!manifest.contains("files") || !manifest["files"].is_object())
    return fmt::format("{}: \"files\" is missing or not an object", kManifest);
  const json& listed = manifest["files"];
  if (!listed.contains(kStateFile)) return fmt::format("{}: does not list {}", kManifest, kStateFile);

  checkpoint = Checkpoint{step, dir, {}};
  for (const auto& [name, info] : listed.items()) {
    if (name != kStateFile && !is_valid_file_name(name))
      return fmt::format("{}: invalid file name \"{}\"", kManifest, name);
    if (!info.is_object() || !info.contains("bytes") || !info["bytes"].is_number_unsigned() ||
        !info.contains("sha256") || !info["sha256"].is_string())
      return fmt::format("{}: entry for {} needs \"bytes\" and \"sha256\"", kManifest, name);
    fs::path path = dir / name;
    if (!fs::is_regular_file(path, ec)) return fmt::format("{}: missing", name);
    uintmax_t expected = info["bytes"].get<uintmax_t>();
    uintmax_t actual = fs::file_size(path, ec);
    if (ec) return fmt::format("{}: cannot be read: {}", name, ec.message());
    if (actual != expected)
      return fmt::format("{}: {} bytes, but {} says {} (file was truncated or modified)", name, actual, kManifest,
                         expected);
    std::string bytes;
    try {
      bytes = read_file(path);
    } catch (const Error& e) {
      return fmt::format("{}: {}", name, e.what());
    }
    if (sha256_hex(bytes) != info["sha256"].get<std::string>())
      return fmt::format("{}: sha256 mismatch (file was modified or truncated)", name);
    if (name == kStateFile) {
      try {
        state = state_from_json(bytes);
      } catch (const std::exception& e) {
        return fmt::format("{}: {}", kStateFile, e.what());
      }
    } else {
      checkpoint.files.emplace(name, std::move(bytes));
    }
  }
  return std::nullopt;
}

// Filesystem calls that report failures as gradiens::Error naming the path.
void remove_all_or_throw(const fs::path& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) throw Error(fmt::format("checkpoint: cannot remove '{}': {}", path.string(), ec.message()));
}

}  // namespace

std::string checkpoint_dir_name(int64_t step) { return fmt::format("step-{:09d}", step); }

CheckpointManager::CheckpointManager(fs::path checkpoints_dir, CheckpointPolicy policy)
    : dir_(std::move(checkpoints_dir)), policy_(std::move(policy)) {
  if (policy_.keep_last < 0)
    throw Error(fmt::format("checkpoint: keep_last must be at least 0 (0 keeps all), got {}", policy_.keep_last));
  if (policy_.keep_best < 0)
    throw Error(fmt::format("checkpoint: keep_best must be at least 0, got {}", policy_.keep_best));
}

std::vector<CheckpointManager::Entry> CheckpointManager::kept_after_adding(const Entry& added) const {
  std::vector<Entry> all;
  for (const Entry& entry : entries_)
    if (entry.step != added.step) all.push_back(entry);
  all.push_back(added);
  std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) { return a.step < b.step; });

  std::set<int64_t> keep;
  size_t keep_last = policy_.keep_last == 0 ? all.size() : static_cast<size_t>(policy_.keep_last);
  for (size_t i = all.size() > keep_last ? all.size() - keep_last : 0; i < all.size(); ++i) keep.insert(all[i].step);

  std::vector<Entry> ranked;
  for (const Entry& entry : all)
    if (entry.monitored && !std::isnan(*entry.monitored)) ranked.push_back(entry);
  // stable_sort on step-ordered input: equal values keep the earlier step first.
  std::stable_sort(ranked.begin(), ranked.end(), [&](const Entry& a, const Entry& b) {
    return policy_.maximize ? *a.monitored > *b.monitored : *a.monitored < *b.monitored;
  });
  for (size_t i = 0; i < ranked.size() && i < static_cast<size_t>(policy_.keep_best); ++i) keep.insert(ranked[i].step);

  std::vector<Entry> kept;
  for (const Entry& entry : all)
    if (keep.count(entry.step)) kept.push_back(entry);
  return kept;
}

fs::path CheckpointManager::save(int64_t step, const std::map<std::string, std::string>& files,
                                 std::optional<double> monitored) {
  if (step < 0) throw Error(fmt::format("checkpoint: step must be at least 0, got {}", step));
  for (const auto& [name, bytes] : files)
    if (!is_valid_file_name(name))
      throw Error(fmt::format("checkpoint: invalid file name \"{}\" (a plain name other than {} and {})", name,
                              kManifest, kStateFile));

  const std::string name = checkpoint_dir_name(step);
  const fs::path final_dir = dir_ / name;
  const fs::path temp_dir = dir_ / (name + ".tmp");
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw Error(fmt::format("checkpoint: cannot create '{}': {}", dir_.string(), ec.message()));
  remove_all_or_throw(temp_dir);
  fs::create_directory(temp_dir, ec);
  if (ec) throw Error(fmt::format("checkpoint: cannot create '{}': {}", temp_dir.string(), ec.message()));

  json listed = json::object();
  auto write = [&](const std::string& file_name, std::string_view bytes) {
    write_file_synced(temp_dir / file_name, bytes);
    listed[file_name] = {{"bytes", bytes.size()}, {"sha256", sha256_hex(bytes)}};
    if (after_file_hook_) after_file_hook_(file_name);
  };
  for (const auto& [file_name, bytes] : files) write(file_name, bytes);
  std::vector<Entry> kept = kept_after_adding({step, monitored});
  write(kStateFile, state_to_json(policy_, kept).dump(2) + "\n");
  json manifest = {{"format", kManifestFormat}, {"version", 1}, {"step", step}, {"files", listed}};
  write(kManifest, manifest.dump(2) + "\n");
  fsync_path(temp_dir);

  // Re-saving a step replaces it only now that the new one is complete.
  remove_all_or_throw(final_dir);
  fs::rename(temp_dir, final_dir, ec);
  if (ec)
    throw Error(fmt::format("checkpoint: cannot rename '{}' to '{}': {}", temp_dir.string(), final_dir.string(),
                            ec.message()));
  fsync_path(dir_);
  entries_ = std::move(kept);

  // `latest` is for people and scripts; load_latest scans the directories.
  write_file_atomic(dir_ / "latest", name + "\n");
  prune(entries_);
  return final_dir;
}

void CheckpointManager::prune(const std::vector<Entry>& kept) const {
  std::set<int64_t> keep;
  for (const Entry& entry : kept) keep.insert(entry.step);
  std::vector<fs::path> doomed;
  std::error_code ec;
  for (const fs::directory_entry& item : fs::directory_iterator(dir_, ec)) {
    if (!item.is_directory(ec)) continue;
    std::string name = item.path().filename().string();
    bool leftover = name.size() > 4 && name.ends_with(".tmp") && step_of_dir_name(name.substr(0, name.size() - 4));
    std::optional<int64_t> step = step_of_dir_name(name);
    if (leftover || (step && !keep.count(*step))) doomed.push_back(item.path());
  }
  if (ec) throw Error(fmt::format("checkpoint: cannot list '{}': {}", dir_.string(), ec.message()));
  for (const fs::path& path : doomed) remove_all_or_throw(path);
  if (!doomed.empty()) fsync_path(dir_);
}

std::optional<Checkpoint> CheckpointManager::load_latest(std::vector<std::string>& skipped) {
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return std::nullopt;
  std::vector<std::pair<int64_t, fs::path>> candidates;
  for (const fs::directory_entry& item : fs::directory_iterator(dir_, ec)) {
    if (!item.is_directory(ec)) continue;
    if (std::optional<int64_t> step = step_of_dir_name(item.path().filename().string()))
      candidates.emplace_back(*step, item.path());
  }
  if (ec) throw Error(fmt::format("checkpoint: cannot list '{}': {}", dir_.string(), ec.message()));
  std::sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.first > b.first; });

  for (const auto& [step, path] : candidates) {
    Checkpoint checkpoint;
    std::vector<Entry> state;
    if (std::optional<std::string> problem = verify_checkpoint(path, step, checkpoint, state)) {
      skipped.push_back(fmt::format("{}: {}", path.string(), *problem));
      continue;
    }
    // Checkpoints the state names may have been pruned since by later saves
    // that this resume rolls back; only the ones still on disk count.
    entries_.clear();
    for (const Entry& entry : state)
      if (entry.step == step || (entry.step < step && fs::exists(dir_ / checkpoint_dir_name(entry.step) / kManifest, ec)))
        entries_.push_back(entry);
    if (std::none_of(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.step == step; }))
      entries_.push_back({step, std::nullopt});
    std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return a.step < b.step; });
    return checkpoint;
  }
  return std::nullopt;
}

std::optional<fs::path> CheckpointManager::best() const {
  const Entry* best = nullptr;
  for (const Entry& entry : entries_) {  // oldest first, so a tie keeps the earlier step
    if (!entry.monitored || std::isnan(*entry.monitored)) continue;
    if (!best || (policy_.maximize ? *entry.monitored > *best->monitored : *entry.monitored < *best->monitored))
      best = &entry;
  }
  if (!best) return std::nullopt;
  return dir_ / checkpoint_dir_name(best->step);
}

}  // namespace gradiens::train
