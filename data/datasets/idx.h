// read_idx: the IDX format of MNIST and Fashion-MNIST (a magic number, big-endian
// dimensions, then the array), gzipped or not, into a CPU tensor.
#pragma once

#include <string>
#include <string_view>

#include "engine/tensor.h"

namespace gradiens::data::datasets {

// Reads the IDX file at `path`; a gzip file (found by its magic bytes, not its
// name) is decompressed on the way. The result has the file's dimensions and
// its type: unsigned byte (0x08) -> uint8, int (0x0C) -> int32, float (0x0D)
// -> float32, double (0x0E) -> float64; signed byte (0x09) and short (0x0B)
// widen to int32, which holds them exactly (there is no int8/int16 dtype). A
// malformed or truncated file throws gradiens::Error naming the file.
Tensor read_idx(const std::string& path);

// The same for the bytes of a file in memory; `name` is what errors call it.
Tensor read_idx_from_bytes(std::string_view bytes, std::string_view name = "<memory>");

}  // namespace gradiens::data::datasets
