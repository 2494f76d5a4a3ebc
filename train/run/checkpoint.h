// Checkpoint directories (step-<9 digits>/ with manifest.json) written
// atomically, verified on load, and pruned by a keep-last / keep-best policy.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gradiens::train {

struct CheckpointPolicy {
  int64_t keep_last = 3;  // the newest N are kept; 0 keeps all
  int64_t keep_best = 0;  // the K best by `monitor` are kept as well
  std::string monitor;    // metric name, e.g. "val/accuracy" (informational)
  bool maximize = false;
};

struct Checkpoint {
  int64_t step = 0;
  std::filesystem::path dir;
  std::map<std::string, std::string> files;  // excludes manifest.json and checkpointer.json
};

// The directory name of a checkpoint: "step-000000100".
std::string checkpoint_dir_name(int64_t step);

// Note [Checkpoint atomicity]
// A save writes everything into step-N.tmp, manifest.json last, and renames
// the directory into place only when complete; `latest` and pruning follow
// the rename. A crash at any point leaves every earlier checkpoint intact,
// and load_latest never trusts a directory without verifying its manifest,
// so a half-written or hand-edited checkpoint is passed over, not loaded.
class CheckpointManager {
 public:
  CheckpointManager(std::filesystem::path checkpoints_dir, CheckpointPolicy policy);

  // Saves `files` as checkpoint `step` and prunes (see Note [Checkpoint
  // atomicity]). `monitored` is the value of policy.monitor at this step;
  // nullopt or NaN never counts as best. Pruning removes every step-* directory
  // not kept by the policy, including ones this manager does not know (passed
  // over as corrupt, or written after the checkpoint a run resumed from), so
  // call load_latest first when the directory already holds checkpoints.
  std::filesystem::path save(int64_t step, const std::map<std::string, std::string>& files,
                             std::optional<double> monitored);

  // The newest checkpoint that verifies; each newer one that does not is
  // appended to `skipped` as "<dir>: <what is wrong>". Restores the manager's
  // state (the kept checkpoints and their monitored values) from it.
  std::optional<Checkpoint> load_latest(std::vector<std::string>& skipped);

  // The best kept checkpoint's directory by monitored value (ties: the earlier step).
  std::optional<std::filesystem::path> best() const;

  const std::filesystem::path& dir() const { return dir_; }

  // Called after each file of a save is written and fsynced, before the
  // rename; for tests and fault injection.
  void set_after_file_hook(std::function<void(const std::string&)> hook) { after_file_hook_ = std::move(hook); }

  struct Entry {
    int64_t step = 0;
    std::optional<double> monitored;
  };
  // The kept checkpoints, oldest first.
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> kept_after_adding(const Entry& entry) const;
  void prune(const std::vector<Entry>& kept) const;

  std::filesystem::path dir_;
  CheckpointPolicy policy_;
  std::vector<Entry> entries_;
  std::function<void(const std::string&)> after_file_hook_;
};

}  // namespace gradiens::train
