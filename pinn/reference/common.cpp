// Point tensors in, CSV grids out: the plumbing the reference solutions share.
#include "pinn/reference/common.h"

#include <fmt/format.h>

#include <cstdio>
#include <memory>

#include "kernels/error.h"

namespace gradiens::pinn {

Tensor reference_points(const Tensor& points, const std::string& who) {
  GD_CHECK(points.defined(), who + ": the points tensor is undefined");
  GD_CHECK(points.dim() == 2 && points.size(1) == 2,
           fmt::format("{}: points must be [N, 2] (columns x, t), got [{}]", who, fmt::join(points.sizes(), ", ")));
  GD_CHECK(points.is_floating_point(), who + ": points must be a floating-point tensor");
  return points.detach().cpu().to(kFloat64).contiguous();
}

void write_grid_csv(const std::string& path, const std::vector<double>& t, const std::vector<double>& x,
                    const Tensor& u) {
  const auto nt = static_cast<int64_t>(t.size()), nx = static_cast<int64_t>(x.size());
  GD_CHECK(u.defined() && u.dim() == 2 && u.size(0) == nt && u.size(1) == nx,
           fmt::format("write_grid_csv: u must be [{}, {}] (t by x)", nt, nx));
  const Tensor values = u.detach().cpu().to(kFloat64).contiguous();
  const double* data = values.cpu_data_ptr<double>();
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "w"), &std::fclose);
  GD_CHECK(file != nullptr, "write_grid_csv: cannot open " + path + " for writing");
  std::fputs("t,x,u\n", file.get());
  for (int64_t i = 0; i < nt; ++i)
    for (int64_t j = 0; j < nx; ++j)
      fmt::print(file.get(), "{:.17g},{:.17g},{:.17g}\n", t[static_cast<size_t>(i)], x[static_cast<size_t>(j)],
                 data[i * nx + j]);
  GD_CHECK(std::fflush(file.get()) == 0 && !std::ferror(file.get()), "write_grid_csv: writing " + path + " failed");
}

}  // namespace gradiens::pinn
