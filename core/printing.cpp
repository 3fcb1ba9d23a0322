// operator<< for tensors, in libtorch's layout: values, then "[ CPUFloatType{2,3} ]".
#include <cmath>
#include <iomanip>
#include <sstream>

#include "core/native/copy/copy.h"

namespace gr {

namespace {

struct Format {
  bool integral = true;  // every value is a whole number
  bool scientific = false;
  int width = 1;
  int precision = 4;
};

Format choose_format(const double* v, int64_t n) {
  Format f;
  double max_abs = 0, min_abs = INFINITY;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i])) continue;
    if (v[i] != std::floor(v[i])) f.integral = false;
    double a = std::fabs(v[i]);
    max_abs = std::max(max_abs, a);
    if (a > 0) min_abs = std::min(min_abs, a);
  }
  if (!f.integral && (max_abs >= 1e5 || (min_abs < 1e-4 && min_abs > 0))) f.scientific = true;
  if (f.integral) f.scientific = max_abs >= 1e9;
  std::ostringstream probe;
  for (int64_t i = 0; i < n; ++i) {
    std::ostringstream s;
    if (f.scientific) s << std::scientific << std::setprecision(f.precision) << v[i];
    else if (f.integral) s << static_cast<long long>(v[i]);
    else s << std::fixed << std::setprecision(f.precision) << v[i];
    if (!std::isfinite(v[i])) s.str(std::isnan(v[i]) ? "nan" : (v[i] > 0 ? "inf" : "-inf"));
    f.width = std::max<int>(f.width, static_cast<int>(s.str().size()));
  }
  return f;
}

void put(std::ostream& out, double v, const Format& f) {
  std::ostringstream s;
  if (std::isnan(v)) s << "nan";
  else if (std::isinf(v)) s << (v > 0 ? "inf" : "-inf");
  else if (f.scientific) s << std::scientific << std::setprecision(f.precision) << v;
  else if (f.integral) s << static_cast<long long>(v);
  else s << std::fixed << std::setprecision(f.precision) << v;
  out << ' ' << std::setw(f.width) << s.str();
}

// Prints the last two dims of `v` (row-major, shape `sizes`) starting at `base`.
void put_matrix(std::ostream& out, const double* v, int64_t rows, int64_t cols, const Format& f) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) put(out, v[r * cols + c], f);
    out << '\n';
  }
}

}  // namespace

std::ostream& operator<<(std::ostream& out, const Tensor& t) {
  if (!t.defined()) return out << "[ Tensor (undefined) ]";
  Tensor c = native::contiguous(native::to_dtype(native::to_device(t, Device(kCPU)), kFloat64));
  const double* v = c.data_ptr<double>();
  const int64_t n = c.numel();
  Format f = choose_format(v, n);
  if (t.dim() == 0) {
    put(out, v[0], f);
    out << '\n';
  } else if (t.dim() == 1) {
    for (int64_t i = 0; i < n; ++i) {
      put(out, v[i], f);
      out << '\n';
    }
  } else if (n > 0) {
    const int64_t rows = t.size(-2), cols = t.size(-1), per = rows * cols;
    for (int64_t m = 0; m < n / per; ++m) {
      if (t.dim() > 2) {  // "(i,j,.,.) = " heading for each matrix
        out << '(';
        int64_t rem = m;
        std::vector<int64_t> idx(static_cast<size_t>(t.dim() - 2));
        for (int64_t d = t.dim() - 3; d >= 0; --d) idx[d] = rem % t.size(d), rem /= t.size(d);
        for (int64_t d : idx) out << d + 1 << ',';
        out << ".,.) = \n";
      }
      put_matrix(out, v + m * per, rows, cols, f);
      if (t.dim() > 2 && m + 1 < n / per) out << '\n';
    }
  }
  out << "[ " << t.toString() << " ]";
  return out;
}

}  // namespace gr
