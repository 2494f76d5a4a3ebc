// The tensor-building steps of default_collate, kept out of the header.
#include "data/collate.h"

#include "engine/functions.h"
#include "engine/tensor_data.h"
#include "kernels/error.h"

namespace gradiens::data::detail {

Tensor collate_tensors(const std::vector<Tensor>& batch) { return stack(batch, 0); }
Tensor collate_integers(const std::vector<int64_t>& batch) { return tensor(batch, kInt64); }
Tensor collate_floats(const std::vector<double>& batch) { return tensor(batch, kFloat64); }
Tensor collate_bools(const std::vector<bool>& batch) { return tensor(batch, kBool); }
Tensor scalar_integer(int64_t value) { return scalar_tensor(value, kInt64); }
Tensor scalar_float(double value) { return scalar_tensor(value, kFloat64); }
Tensor scalar_bool(bool value) { return scalar_tensor(value, kBool); }
void throw_collate_error(const std::string& message) { throw Error(message); }

}  // namespace gradiens::data::detail
