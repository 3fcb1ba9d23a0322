// Nearest, nearest-exact and (bi/tri)linear interpolation with backward, as tap tables per
// spatial dim (Note [Taps]) whose weights and source indices follow torch's CPU coordinate
// rules to the float (Note [Interpolation coordinates]); differentiable to any order (Note [Linear maps]).
#include <cmath>

#include "autograd/function.h"
#include "autograd/functions/linear_map.h"
#include "autograd/ops.h"

namespace gr {

namespace {

// Note [Interpolation coordinates]
// torch computes the source coordinates in float for nearest (whatever the dtype) and in the
// op's math type for linear (float for float32, double for float64), from 1 / scale when the
// caller gave a scale factor and from in / out otherwise; align_corners maps the corner
// pixels' centres onto each other ((in - 1) / (out - 1)). Reproducing each cast is what makes
// the outputs equal torch's bit for bit, e.g. nearest's floorf(o * scale) in float and
// nearest-exact's floorf of a double product. torch's 2-D nearest kernel alone short-cuts
// out == in (a copy) and out == 2 * in (o / 2), which differs from the formula when a scale
// factor was given (5 -> 10 by 2.1); its 1-D and 3-D kernels do not (so on torch 1.13 and 2.x;
// the reference data covers each).
template <class T>
T scale_of(std::optional<double> scale, int64_t in, int64_t out) {  // torch's compute_scales_value
  return scale.has_value() && *scale > 0 ? static_cast<T>(1.0 / *scale) : static_cast<T>(in) / static_cast<T>(out);
}

enum class Nearest { kFloor, kFloorShortCuts, kExact };

native::TapTable nearest_table(int64_t in, int64_t out, std::optional<double> scale, Nearest kind) {
  const float s = scale_of<float>(scale, in, out);
  native::TapTable t;
  t.cols = in;
  for (int64_t o = 0; o < out; ++o) {
    int64_t i;
    if (kind == Nearest::kExact)
      i = static_cast<int64_t>(std::floor(static_cast<float>((o + 0.5) * s)));
    else if (kind == Nearest::kFloorShortCuts && out == in)
      i = o;
    else if (kind == Nearest::kFloorShortCuts && out == 2 * in)
      i = o >> 1;
    else
      i = static_cast<int64_t>(std::floor(static_cast<float>(o) * s));
    t.add(std::min(i, in - 1), 1.0);
    t.end_row();
  }
  return t;
}

// Two taps per output: (i0, 1 - lambda) and (i1, lambda), both kept even when equal or zero
// so that NaN and infinity propagate as in torch.
template <class T>
native::TapTable linear_table(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  const T ratio =
      align_corners ? (out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0)) : scale_of<T>(scale, in, out);
  native::TapTable t;
  t.cols = in;
  for (int64_t o = 0; o < out; ++o) {
    int64_t i0 = o, i1 = o;
    T lambda = 0;
    if (out != in) {
      T real = align_corners ? ratio * static_cast<T>(o) : ratio * (static_cast<T>(o) + T(0.5)) - T(0.5);
      if (!align_corners && real < 0) real = 0;
      i0 = std::min(static_cast<int64_t>(std::floor(static_cast<float>(real))), in - 1);
      lambda = std::min(std::max(real - static_cast<T>(i0), T(0)), T(1));
      i1 = i0 + (i0 < in - 1 ? 1 : 0);
    }
    t.add(i0, static_cast<double>(T(1) - lambda));
    t.add(i1, static_cast<double>(lambda));
    t.end_row();
  }
  return t;
}

enum class Mode { kNearest, kNearestExact, kLinear };

// Checks like torch's upsample_{1,2,3}d_common_check and builds one table per spatial dim, the
// last dim first.
Tensor upsample(const char* op, const char* name, const char* adjoint_name, const Tensor& self, IntArrayRef output_size,
                const std::vector<std::optional<double>>& scales, Mode mode, bool align_corners = false) {
  const int64_t k = static_cast<int64_t>(scales.size());
  GR_CHECK(self.defined(), op, ": input is undefined");
  GR_CHECK(static_cast<int64_t>(output_size.size()) == k, op, ": it is expected output_size equals to ", k,
           ", but got size ", output_size.size());
  bool ok = self.dim() == k + 2;
  for (int64_t d = 1; ok && d < self.dim(); ++d) ok = self.size(d) > 0;
  GR_CHECK(ok, op, ": non-empty ", k + 2, "D data tensor expected but got a tensor with sizes ", self.sizes());
  for (int64_t i = 0; i < k; ++i)
    GR_CHECK(output_size[i] > 0, op, ": input and output sizes should be greater than 0, but got input ", self.sizes(),
             " and output ", output_size);
  GR_CHECK(self.scalar_type() == kFloat32 || self.scalar_type() == kFloat64, op,
           ": expected a float32 or float64 input, got ", self.scalar_type());
  std::vector<autograd::DimTaps> taps;
  for (int64_t i = k - 1; i >= 0; --i) {
    const int64_t d = 2 + i, in = self.size(d), out = output_size[i];
    native::TapTable t;
    if (mode == Mode::kNearest)
      t = nearest_table(in, out, scales[i], k == 2 ? Nearest::kFloorShortCuts : Nearest::kFloor);
    else if (mode == Mode::kNearestExact)
      t = nearest_table(in, out, scales[i], Nearest::kExact);
    else if (self.scalar_type() == kFloat64)
      t = linear_table<double>(in, out, align_corners, scales[i]);
    else
      t = linear_table<float>(in, out, align_corners, scales[i]);
    taps.push_back({d, std::move(t)});
  }
  return autograd::apply_taps(name, adjoint_name, self, std::move(taps));
}

}  // namespace

Tensor upsample_nearest1d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales) {
  return upsample("upsample_nearest1d", "UpsampleNearest1DBackward0", "UpsampleNearest1DBackwardBackward0", self,
                  output_size, {scales}, Mode::kNearest);
}
Tensor upsample_nearest2d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_h,
                          std::optional<double> scales_w) {
  return upsample("upsample_nearest2d", "UpsampleNearest2DBackward0", "UpsampleNearest2DBackwardBackward0", self,
                  output_size, {scales_h, scales_w}, Mode::kNearest);
}
Tensor upsample_nearest3d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_d,
                          std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample("upsample_nearest3d", "UpsampleNearest3DBackward0", "UpsampleNearest3DBackwardBackward0", self,
                  output_size, {scales_d, scales_h, scales_w}, Mode::kNearest);
}
Tensor _upsample_nearest_exact1d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales) {
  return upsample("_upsample_nearest_exact1d", "UpsampleNearestExact1DBackward0",
                  "UpsampleNearestExact1DBackwardBackward0", self, output_size, {scales}, Mode::kNearestExact);
}
Tensor _upsample_nearest_exact2d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_h,
                                 std::optional<double> scales_w) {
  return upsample("_upsample_nearest_exact2d", "UpsampleNearestExact2DBackward0",
                  "UpsampleNearestExact2DBackwardBackward0", self, output_size, {scales_h, scales_w},
                  Mode::kNearestExact);
}
Tensor _upsample_nearest_exact3d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_d,
                                 std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample("_upsample_nearest_exact3d", "UpsampleNearestExact3DBackward0",
                  "UpsampleNearestExact3DBackwardBackward0", self, output_size, {scales_d, scales_h, scales_w},
                  Mode::kNearestExact);
}
Tensor upsample_linear1d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                         std::optional<double> scales) {
  return upsample("upsample_linear1d", "UpsampleLinear1DBackward0", "UpsampleLinear1DBackwardBackward0", self,
                  output_size, {scales}, Mode::kLinear, align_corners);
}
Tensor upsample_bilinear2d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h, std::optional<double> scales_w) {
  return upsample("upsample_bilinear2d", "UpsampleBilinear2DBackward0", "UpsampleBilinear2DBackwardBackward0", self,
                  output_size, {scales_h, scales_w}, Mode::kLinear, align_corners);
}
Tensor upsample_trilinear3d(const Tensor& self, IntArrayRef output_size, bool align_corners,
                            std::optional<double> scales_d, std::optional<double> scales_h,
                            std::optional<double> scales_w) {
  return upsample("upsample_trilinear3d", "UpsampleTrilinear3DBackward0", "UpsampleTrilinear3DBackwardBackward0", self,
                  output_size, {scales_d, scales_h, scales_w}, Mode::kLinear, align_corners);
}

}  // namespace gr
