// operator<<(ostream, Tensor): PyTorch's repr (torch/_tensor_str.py: precision 4,
// linewidth 80, threshold 1000, edgeitems 3), with dtypes written without "torch.".
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/autograd/node.h"
#include "engine/tensor.h"

namespace gradiens {
namespace {

constexpr int kPrecision = 4;
constexpr int kLineWidth = 80;
constexpr int64_t kThreshold = 1000;  // more elements than this are summarized
constexpr int64_t kEdgeItems = 3;     // elements kept at each end of a summarized dim

// An element as Python sees it after .item(): a double for floating dtypes, an
// integer otherwise (bool as 0/1).
double read_floating(const char* p, ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Float32: { float v; std::memcpy(&v, p, sizeof v); return v; }
    case ScalarType::Float64: { double v; std::memcpy(&v, p, sizeof v); return v; }
    case ScalarType::Float16: { Half v; std::memcpy(&v, p, sizeof v); return v; }
    case ScalarType::BFloat16: { BFloat16 v; std::memcpy(&v, p, sizeof v); return v; }
    default: return 0;
  }
}

int64_t read_integral(const char* p, ScalarType dtype) {
  switch (dtype) {
    case ScalarType::UInt8: return *reinterpret_cast<const uint8_t*>(p);
    case ScalarType::Int8: return *reinterpret_cast<const int8_t*>(p);
    case ScalarType::Int16: { int16_t v; std::memcpy(&v, p, sizeof v); return v; }
    case ScalarType::Bool: return *reinterpret_cast<const uint8_t*>(p) != 0;
    case ScalarType::Int32: { int32_t v; std::memcpy(&v, p, sizeof v); return v; }
    case ScalarType::Int64: { int64_t v; std::memcpy(&v, p, sizeof v); return v; }
    default: return 0;
  }
}

// A strided window on the tensor's memory; select() steps into dim 0 as t[i] does.
struct View {
  const char* data;
  ScalarType dtype;
  IntArrayRef sizes;
  IntArrayRef strides;  // in elements

  int64_t dim() const { return static_cast<int64_t>(sizes.size()); }
  int64_t size0() const { return sizes[0]; }
  View select(int64_t i) const {
    const int64_t step = strides[0] * static_cast<int64_t>(element_size(dtype));
    return {data + i * step, dtype, IntArrayRef(sizes.data() + 1, sizes.size() - 1),
            IntArrayRef(strides.data() + 1, strides.size() - 1)};
  }
};

// Python's number formatting: '{:.Nf}', '{:.Ne}', with nan/inf spelled as Python does.
std::string python_float(double v, char conversion, int precision) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buffer[512];
  std::snprintf(buffer, sizeof buffer, conversion == 'e' ? "%.*e" : "%.*f", precision, v);
  return buffer;
}

std::string pad_left(std::string s, size_t width) { return s.size() >= width ? s : std::string(width - s.size(), ' ') + s; }

// torch._tensor_str._Formatter: decides integer, fixed or scientific mode and the
// common width from the (summarized) values, then formats each element.
class Formatter {
 public:
  explicit Formatter(const View& data, bool summarize) : dtype_(data.dtype), floating_(is_floating_point(data.dtype)) {
    collect(data, summarize);
    if (!floating_) {
      for (int64_t v : integral_values_) max_width_ = std::max(max_width_, integral_string(v).size());
      return;
    }
    std::vector<double> finite;  // the nonzero finite values
    for (double v : floating_values_)
      if (std::isfinite(v) && v != 0) finite.push_back(v);
    if (finite.empty()) return;
    double min_abs = std::abs(finite[0]), max_abs = min_abs;
    for (double v : finite) {
      min_abs = std::min(min_abs, std::abs(v));
      max_abs = std::max(max_abs, std::abs(v));
      if (v != std::ceil(v)) int_mode_ = false;
    }
    const bool wide_range = max_abs / min_abs > 1000. || max_abs > 1.e8;
    sci_mode_ = int_mode_ ? wide_range : wide_range || min_abs < 1.e-4;
    for (double v : finite) {
      size_t width = sci_mode_   ? python_float(v, 'e', kPrecision).size()
                     : int_mode_ ? python_float(v, 'f', 0).size() + 1  // room for the trailing "."
                                 : python_float(v, 'f', kPrecision).size();
      max_width_ = std::max(max_width_, width);
    }
  }

  size_t width() const { return max_width_; }

  // The element at `p`, right-aligned to the common width.
  std::string format(const char* p) const {
    std::string s;
    if (!floating_) {
      s = integral_string(read_integral(p, dtype_));
    } else {
      const double v = read_floating(p, dtype_);
      if (sci_mode_) {
        s = python_float(v, 'e', kPrecision);
      } else if (int_mode_) {
        s = python_float(v, 'f', 0);
        if (std::isfinite(v)) s += '.';
      } else {
        s = python_float(v, 'f', kPrecision);
      }
    }
    return pad_left(std::move(s), max_width_);
  }

 private:
  std::string integral_string(int64_t v) const {
    if (dtype_ == kBool) return v ? "True" : "False";
    return std::to_string(v);
  }

  // torch._tensor_str.get_summarized_data: only the edge items of long dims count.
  void collect(const View& v, bool summarize) {
    if (v.dim() == 0) {
      if (floating_) floating_values_.push_back(read_floating(v.data, dtype_));
      else integral_values_.push_back(read_integral(v.data, dtype_));
      return;
    }
    const int64_t n = v.size0();
    for (int64_t i = 0; i < n; ++i) {
      if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) i = n - kEdgeItems;
      collect(v.select(i), summarize);
    }
  }

  ScalarType dtype_;
  bool floating_;
  bool int_mode_ = true;
  bool sci_mode_ = false;
  size_t max_width_ = 1;
  std::vector<double> floating_values_;
  std::vector<int64_t> integral_values_;
};

// open + parts joined by separator + close.
std::string join(const std::vector<std::string>& parts, std::string_view separator, std::string_view open = "",
                 std::string_view close = "") {
  std::string out(open);
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += separator;
    out += parts[i];
  }
  out += close;
  return out;
}

// torch._tensor_str._vector_str: elements wrapped to the line width.
std::string vector_string(const View& v, int64_t indent, bool summarize, const Formatter& formatter) {
  const int64_t element_length = static_cast<int64_t>(formatter.width()) + 2;
  const int64_t per_line = std::max<int64_t>(
      1, static_cast<int64_t>(std::floor(static_cast<double>(kLineWidth - indent) / static_cast<double>(element_length))));
  std::vector<std::string> data;
  const int64_t n = v.size0();
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      data.push_back(" ...");
      i = n - kEdgeItems;
    }
    data.push_back(formatter.format(v.select(i).data));
  }
  std::vector<std::string> lines;
  for (size_t i = 0; i < data.size(); i += static_cast<size_t>(per_line)) {
    std::vector<std::string> line(data.begin() + static_cast<std::ptrdiff_t>(i),
                                  data.begin() + static_cast<std::ptrdiff_t>(std::min(data.size(), i + static_cast<size_t>(per_line))));
    lines.push_back(join(line, ", "));
  }
  std::string separator = ",\n";
  separator.append(static_cast<size_t>(indent + 1), ' ');
  return join(lines, separator, "[", "]");
}

// torch._tensor_str._tensor_str_with_formatter: nested brackets, one blank line
// between blocks per dimension beyond the second.
std::string tensor_string(const View& v, int64_t indent, bool summarize, const Formatter& formatter) {
  if (v.dim() == 0) return formatter.format(v.data);
  if (v.dim() == 1) return vector_string(v, indent, summarize, formatter);
  std::vector<std::string> slices;
  const int64_t n = v.size0();
  for (int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) {
      slices.push_back("...");
      i = n - kEdgeItems;
    }
    slices.push_back(tensor_string(v.select(i), indent + 1, summarize, formatter));
  }
  std::string separator = ",";
  separator.append(static_cast<size_t>(v.dim() - 1), '\n');
  separator.append(static_cast<size_t>(indent + 1), ' ');
  return join(slices, separator, "[", "]");
}

// torch._tensor_str._add_suffixes, including its count of the last line's length.
std::string add_suffixes(const std::string& body, const std::vector<std::string>& suffixes, int64_t indent) {
  std::string out = body;
  const size_t newline = body.rfind('\n');
  int64_t last_line_length = static_cast<int64_t>(body.size()) -
                             (newline == std::string::npos ? -1 : static_cast<int64_t>(newline)) + 1;
  for (const std::string& suffix : suffixes) {
    const int64_t length = static_cast<int64_t>(suffix.size());
    if (last_line_length + length + 2 > kLineWidth) {
      out += ",\n";
      out.append(static_cast<size_t>(indent), ' ');
      out += suffix;
      last_line_length = indent + length;
    } else {
      out += ", ";
      out += suffix;
      last_line_length += length + 2;
    }
  }
  return out + ")";
}

std::string tensor_repr(const Tensor& tensor) {
  const std::string prefix = "tensor(";
  const int64_t indent = static_cast<int64_t>(prefix.size());
  std::vector<std::string> suffixes;
  if (!tensor.device().is_cpu()) suffixes.push_back(fmt::format("device='{}'", tensor.device().str()));
  const Tensor t = tensor.device().is_cpu() ? tensor : tensor.to(Device(kCPU));

  std::string body;
  if (t.numel() == 0) {
    // NumPy's habit: the shape is shown unless it is (0,); the dtype always is,
    // since no element hints at it.
    if (t.dim() != 1) {
      std::vector<std::string> sizes;
      for (int64_t s : t.sizes()) sizes.push_back(std::to_string(s));
      suffixes.push_back(join(sizes, ", ", "size=(", ")"));
    }
    if (t.dtype() != kFloat32) suffixes.push_back(fmt::format("dtype={}", dtype_name(t.dtype())));
    body = "[]";
  } else {
    if (t.dtype() != kFloat32 && t.dtype() != kInt64 && t.dtype() != kBool)
      suffixes.push_back(fmt::format("dtype={}", dtype_name(t.dtype())));
    const View view{static_cast<const char*>(t.cpu_data_ptr()), t.dtype(), t.sizes(), t.strides()};
    const bool summarize = t.numel() > kThreshold;
    const Formatter formatter(view, summarize);
    body = tensor_string(view, indent, summarize, formatter);
  }

  if (tensor.grad_fn()) {
    suffixes.push_back(fmt::format("grad_fn=<{}>", tensor.grad_fn()->name()));
  } else if (tensor.requires_grad()) {
    suffixes.push_back("requires_grad=True");
  }
  return add_suffixes(prefix + body, suffixes, indent);
}

}  // namespace

std::ostream& operator<<(std::ostream& out, const Tensor& tensor) {
  if (!tensor.defined()) return out << "[ Tensor (undefined) ]";
  return out << tensor_repr(tensor);
}

}  // namespace gradiens
