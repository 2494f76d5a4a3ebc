// save/load of named tensors in the safetensors format (the files PyTorch's
// safetensors.torch.save_file writes and load_file reads), on disk and in memory.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "engine/tensor.h"

namespace gradiens {

// The contents of a safetensors file: its tensors and the string map stored
// under "__metadata__" (empty when the file has none).
struct SafetensorsFile {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;
};

// Writes `tensors` to `path` atomically: the bytes go to a temporary file in
// the same directory, which is fsynced and then renamed over `path`, so a
// failed save leaves `path` as it was. The layout is the reference writer's
// (see Note [Safetensors layout]); non-contiguous tensors are written
// row-major, tensors on another device are copied to the CPU first, and
// tensors that share storage are written as separate copies. An empty
// `metadata` writes no "__metadata__" entry.
void save(const std::map<std::string, Tensor>& tensors, const std::string& path,
          const std::map<std::string, std::string>& metadata = {});

// Reads every tensor of a safetensors file into new CPU tensors (which own
// their memory and do not require grad). A malformed file throws
// gradiens::Error naming the problem; nothing is allocated for the tensors
// before the whole header has been checked against the file's size.
std::map<std::string, Tensor> load(const std::string& path);
SafetensorsFile load_with_metadata(const std::string& path);

// The same format in memory: save_to_bytes returns exactly the bytes save
// writes to the file.
std::string save_to_bytes(const std::map<std::string, Tensor>& tensors,
                          const std::map<std::string, std::string>& metadata = {});
std::map<std::string, Tensor> load_from_bytes(std::string_view bytes);
SafetensorsFile load_from_bytes_with_metadata(std::string_view bytes);

}  // namespace gradiens
