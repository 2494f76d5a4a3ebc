// einsum: parses the equation with PyTorch's rules and messages ([a-zA-Z]
// subscripts, one ellipsis per operand, implicit or explicit output), aligns every
// operand to one shared dim order, and contracts the operands pairwise, left to
// right, each pair as one (batched) GEMM. Built from differentiable ops (diagonal,
// permute, reshape, sum, mul, matmul), so it has no backward of its own.
#include <fmt/format.h>

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "engine/functions.h"
#include "engine/ops/elementwise.h"

namespace gradiens {

namespace {

// Subscripts map to labels 0..51 ('A'..'Z', then 'a'..'z'): the implicit output
// lists its labels in this order, as NumPy and PyTorch do.
constexpr int kNumLabels = 52;
constexpr int kEllipsis = kNumLabels;

bool is_subscript(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
int label_of(char c) { return c <= 'Z' ? c - 'A' : c - 'a' + 26; }
char subscript_of(int label) { return static_cast<char>(label < 26 ? 'A' + label : 'a' + (label - 26)); }

bool is_identity(IntArrayRef perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

Tensor permute_unless_identity(const Tensor& t, IntArrayRef perm) { return is_identity(perm) ? t : t.permute(perm); }

// The diagonal of dims `first` and `second` (first < second), left where `first` was.
Tensor diagonal_in_place_of(const Tensor& t, int64_t first, int64_t second) {
  Tensor diag = t.diagonal(0, first, second);  // the diagonal comes last
  int64_t last = diag.dim() - 1;
  DimVector perm;
  for (int64_t d = 0; d < last; ++d) {
    if (d == first) perm.push_back(last);
    perm.push_back(d);
  }
  if (first == last) perm.push_back(last);
  return permute_unless_identity(diag, perm);
}

// Note [einsum pairwise contraction]
// Both operands have the shared dim order, with size 1 where a label is absent.
// Each dim is one of: contracted now (`sum_dims`, size != 1 in both), batch
// (size != 1 in both, kept), left (only in a), right (only in b), or size 1 in
// both. a is permuted and reshaped to [batch..., left, sum] and b to
// [batch..., sum, right], so the whole contraction is one matmul (batched over
// the batch dims, which it reads in place), and the product is reshaped and
// permuted back to the shared order with the contracted dims left as size 1.
Tensor sumproduct_pair(const Tensor& a, const Tensor& b, const DimVector& sum_dims) {
  if (sum_dims.empty()) return a * b;  // nothing to contract: a broadcast product
  const int64_t ndim = a.dim();
  std::vector<bool> summed(static_cast<size_t>(ndim), false);
  for (int64_t d : sum_dims) summed[static_cast<size_t>(d)] = true;
  DimVector batch, left, right, neither;
  for (int64_t d = 0; d < ndim; ++d) {
    if (summed[static_cast<size_t>(d)]) continue;
    const bool in_a = a.size(d) != 1, in_b = b.size(d) != 1;
    (in_a && in_b ? batch : in_a ? left : in_b ? right : neither).push_back(d);
  }
  auto sizes_of = [](const Tensor& t, const DimVector& dims) {
    DimVector sizes;
    for (int64_t d : dims) sizes.push_back(t.size(d));
    return sizes;
  };
  auto numel_of = [](const DimVector& sizes) {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  };
  const DimVector batch_sizes = sizes_of(a, batch), left_sizes = sizes_of(a, left), right_sizes = sizes_of(b, right);
  const int64_t left_numel = numel_of(left_sizes), right_numel = numel_of(right_sizes),
                sum_numel = numel_of(sizes_of(a, sum_dims));

  auto append = [](DimVector& to, const DimVector& from) {
    for (int64_t v : from) to.push_back(v);
  };
  DimVector a_perm = batch, b_perm = batch;
  append(a_perm, left);
  append(a_perm, sum_dims);
  append(a_perm, right);
  append(a_perm, neither);
  append(b_perm, sum_dims);
  append(b_perm, right);
  append(b_perm, left);
  append(b_perm, neither);
  DimVector a_shape = batch_sizes, b_shape = batch_sizes;
  a_shape.push_back(left_numel);
  a_shape.push_back(sum_numel);
  b_shape.push_back(sum_numel);
  b_shape.push_back(right_numel);
  Tensor product = matmul(permute_unless_identity(a, a_perm).reshape(a_shape),
                          permute_unless_identity(b, b_perm).reshape(b_shape));

  // product is [batch..., left..., right...] followed by size-1 dims for the
  // contracted dims and `neither`; `order` says which shared dim each position holds.
  DimVector out_shape = batch_sizes, order = batch;
  append(out_shape, left_sizes);
  append(out_shape, right_sizes);
  append(out_shape, DimVector(sum_dims.size() + neither.size(), 1));
  append(order, left);
  append(order, right);
  append(order, sum_dims);
  append(order, neither);
  DimVector inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i) inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  return permute_unless_identity(product.reshape(out_shape), inverse);
}

}  // namespace

Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands) {
  GD_CHECK(!operands.empty(), "einsum(): must provide at least one operand");
  const size_t num_ops = operands.size();

  // ---- the operands' subscripts ----
  const size_t arrow = equation.find("->");
  const std::string_view lhs = equation.substr(0, arrow);
  std::vector<std::vector<int>> op_labels(num_ops);
  bool found_ell = false;
  size_t curr_op = 0;
  for (size_t i = 0; i < lhs.size(); ++i) {
    const char c = lhs[i];
    if (c == ' ') continue;
    if (c == '.') {
      GD_CHECK(!found_ell,
               fmt::format("einsum(): found '.' for operand {} for which an ellipsis was already found", curr_op));
      GD_CHECK(i + 2 < lhs.size() && lhs[i + 1] == '.' && lhs[i + 2] == '.',
               fmt::format("einsum(): found '.' for operand {} that is not part of any ellipsis", curr_op));
      i += 2;
      op_labels[curr_op].push_back(kEllipsis);
      found_ell = true;
    } else if (c == ',') {
      ++curr_op;
      GD_CHECK(curr_op < num_ops, "einsum(): fewer operands were provided than specified in the equation");
      found_ell = false;
    } else {
      GD_CHECK(is_subscript(c), fmt::format("einsum(): invalid subscript given at index {} in the equation string, "
                                            "subscripts must be in [a-zA-Z]",
                                            i));
      op_labels[curr_op].push_back(label_of(c));
    }
  }
  GD_CHECK(curr_op == num_ops - 1, "einsum(): more operands were provided than specified in the equation");

  for (size_t i = 1; i < num_ops; ++i) {
    GD_CHECK(operands[i].dtype() == operands[0].dtype(),
             fmt::format("einsum(): expected scalar type {} but found {} for operand {}",
                         c10_type_name(operands[0].dtype()), c10_type_name(operands[i].dtype()), i));
    check_same_device(operands[0], operands[i], "einsum");
  }

  // How often each label appears, and how many dims the ellipsis covers at most.
  std::array<int64_t, kNumLabels> label_count{};
  int64_t ell_num_dim = 0;
  for (size_t i = 0; i < num_ops; ++i) {
    const int64_t ndim = operands[i].dim();
    int64_t num_subscripts = static_cast<int64_t>(op_labels[i].size());
    bool has_ellipsis = false;
    for (int label : op_labels[i]) {
      if (label == kEllipsis) {
        --num_subscripts;
        has_ellipsis = true;
      } else {
        ++label_count[static_cast<size_t>(label)];
      }
    }
    if (has_ellipsis) {
      GD_CHECK(num_subscripts <= ndim,
               fmt::format("einsum(): the number of subscripts in the equation ({}) is more than the number of "
                           "dimensions ({}) for operand {}",
                           num_subscripts, ndim, i));
      ell_num_dim = std::max(ell_num_dim, ndim - num_subscripts);
    } else {
      GD_CHECK(num_subscripts == ndim,
               fmt::format("einsum(): the number of subscripts in the equation ({}) does not match the number of "
                           "dimensions ({}) for operand {} and no ellipsis was given",
                           num_subscripts, ndim, i));
    }
  }

  // ---- the shared dim order: the output dims, then the contracted ones ----
  std::array<int64_t, kNumLabels> label_perm_index;
  label_perm_index.fill(-1);
  int64_t perm_index = 0, ell_index = 0;
  found_ell = false;
  if (arrow == std::string_view::npos) {
    // Implicit output: the ellipsis dims, then the labels that appear exactly once.
    perm_index = ell_num_dim;
    found_ell = true;
    for (int label = 0; label < kNumLabels; ++label)
      if (label_count[static_cast<size_t>(label)] == 1) label_perm_index[static_cast<size_t>(label)] = perm_index++;
  } else {
    const std::string_view rhs = equation.substr(arrow + 2);
    for (size_t i = 0; i < rhs.size(); ++i) {
      const char c = rhs[i];
      if (c == ' ') continue;
      if (c == '.') {
        GD_CHECK(!found_ell, "einsum(): found '.' for output but an ellipsis (...) was already found");
        GD_CHECK(i + 2 < rhs.size() && rhs[i + 1] == '.' && rhs[i + 2] == '.',
                 "einsum(): found '.' for output that is not part of any ellipsis (...)");
        i += 2;
        ell_index = perm_index;
        perm_index += ell_num_dim;
        found_ell = true;
        continue;
      }
      GD_CHECK(is_subscript(c), fmt::format("einsum(): invalid subscript given at index {} in the equation string, "
                                            "subscripts must be in [a-zA-Z]",
                                            lhs.size() + 2 + i));
      const size_t label = static_cast<size_t>(label_of(c));
      GD_CHECK(label_count[label] > 0 && label_perm_index[label] == -1,
               fmt::format("einsum(): output subscript {}{}", c,
                           label_perm_index[label] > -1 ? " appears more than once in the output"
                                                        : " does not appear in the equation for any input operand"));
      label_perm_index[label] = perm_index++;
    }
  }
  const int64_t out_size = perm_index;
  if (!found_ell) {  // ellipsis dims missing from an explicit output are summed
    ell_index = perm_index;
    perm_index += ell_num_dim;
  }
  for (size_t label = 0; label < kNumLabels; ++label)
    if (label_count[label] > 0 && label_perm_index[label] == -1) label_perm_index[label] = perm_index++;

  // ---- align: diagonals for repeated labels, size-1 dims for missing ones, permute ----
  // dim_counts[d]: how many operands have size != 1 at shared dim d (a contracted
  // dim is summed once only one operand still has it).
  std::array<int64_t, kNumLabels> label_size;
  label_size.fill(1);
  DimVector ell_sizes(static_cast<size_t>(ell_num_dim), 1);
  DimVector dim_counts(static_cast<size_t>(perm_index), 0);
  std::vector<Tensor> aligned;
  for (size_t i = 0; i < num_ops; ++i) {
    Tensor op = operands[i];
    DimVector permutation(static_cast<size_t>(perm_index), -1);
    int64_t dim = 0;
    for (int label : op_labels[i]) {
      if (label == kEllipsis) {
        const int64_t ndim = operands[i].dim() - (static_cast<int64_t>(op_labels[i].size()) - 1);
        for (int64_t j = ell_num_dim - ndim; j < ell_num_dim; ++j) {
          const size_t jj = static_cast<size_t>(j);
          if (op.size(dim) != 1) {
            GD_CHECK(ell_sizes[jj] == 1 || ell_sizes[jj] == op.size(dim),
                     fmt::format("einsum(): dimension {} covered by ellipsis in operand {} has size {} which does not "
                                 "broadcast with previously seen ellipsis with size {} for the respective dimension",
                                 dim, i, op.size(dim), ell_sizes[jj]));
            ell_sizes[jj] = op.size(dim);
            ++dim_counts[static_cast<size_t>(ell_index + j)];
          }
          permutation[static_cast<size_t>(ell_index + j)] = dim++;
        }
        continue;
      }
      const size_t l = static_cast<size_t>(label);
      const size_t target = static_cast<size_t>(label_perm_index[l]);
      if (permutation[target] == -1) {
        if (op.size(dim) != 1) {
          GD_CHECK(label_size[l] == 1 || label_size[l] == op.size(dim),
                   fmt::format("einsum(): subscript {} has size {} for operand {} which does not broadcast with "
                               "previously seen size {}",
                               subscript_of(label), op.size(dim), i, label_size[l]));
          label_size[l] = op.size(dim);
          ++dim_counts[target];
        }
        permutation[target] = dim++;
      } else {
        const int64_t previous = permutation[target];
        GD_CHECK(op.size(dim) == op.size(previous),
                 fmt::format("einsum(): subscript {} is repeated for operand {} but the sizes don't match, {} != {}",
                             subscript_of(label), i, op.size(dim), op.size(previous)));
        op = diagonal_in_place_of(op, previous, dim);
      }
    }
    for (int64_t& index : permutation) {
      if (index == -1) {
        op = op.unsqueeze(dim);
        index = dim++;
      }
    }
    aligned.push_back(permute_unless_identity(op, permutation));
  }

  // ---- contract ----
  // A contracted dim that only one operand has is summed before any product.
  for (Tensor& op : aligned) {
    DimVector sum_dims;
    for (int64_t d = out_size; d < perm_index; ++d)
      if (op.size(d) != 1 && dim_counts[static_cast<size_t>(d)] == 1) {
        sum_dims.push_back(d);
        dim_counts[static_cast<size_t>(d)] = 0;
      }
    if (!sum_dims.empty()) op = op.sum(sum_dims, true);
  }
  // Left to right (PyTorch's order without opt_einsum); see Note [einsum pairwise contraction].
  Tensor result = aligned[0];
  for (size_t i = 1; i < num_ops; ++i) {
    Tensor a = result, b = aligned[i];
    DimVector sum_dims;
    for (int64_t d = out_size; d < perm_index; ++d) {
      int64_t& count = dim_counts[static_cast<size_t>(d)];
      if (a.size(d) != 1 && b.size(d) != 1) {
        if (--count == 1) {
          sum_dims.push_back(d);
          count = 0;
        }
      } else if (count == 1) {
        if (a.size(d) != 1) a = a.sum({d}, true);
        else if (b.size(d) != 1) b = b.sum({d}, true);
        count = 0;
      }
    }
    result = sumproduct_pair(a, b, sum_dims);
  }
  // Every contracted dim is size 1 now.
  IntArrayRef sizes = result.sizes();
  return result.reshape(DimVector(sizes.begin(), sizes.begin() + out_size));
}

}  // namespace gradiens
