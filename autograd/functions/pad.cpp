// Padding with backward: constant_pad_nd (its adjoint is the opposite pad, a crop) and the
// reflect/replicate/circular pads as tap tables whose transposes scatter-add the gradient of
// every mirrored or repeated position back to its source (Note [Taps], Note [Linear maps]).
#include <algorithm>

#include "autograd/function.h"
#include "autograd/functions/linear_map.h"
#include "autograd/ops.h"
#include "core/factory.h"
#include "core/native/copy/copy.h"

namespace gr {

namespace {

enum class PadMode { kReflect, kReplicate, kCircular };

// The input position output o reads along a dim of length n padded by l on the left and r on
// the right. Circular padding wraps around what is left after negative pads crop, as torch.
int64_t pad_source(int64_t o, int64_t l, int64_t r, int64_t n, PadMode mode) {
  const int64_t x = o - l;
  switch (mode) {
    case PadMode::kReflect:
      return x < 0 ? -x : (x >= n ? 2 * (n - 1) - x : x);
    case PadMode::kReplicate:
      return std::clamp<int64_t>(x, 0, n - 1);
    case PadMode::kCircular: {
      const int64_t first = std::max<int64_t>(-l, 0), kept = n - first - std::max<int64_t>(-r, 0);
      return first + (((o - std::max<int64_t>(l, 0)) % kept) + kept) % kept;
    }
  }
  return x;
}

native::TapTable pad_table(int64_t n, int64_t l, int64_t r, PadMode mode) {
  native::TapTable t;
  t.cols = n;
  for (int64_t o = 0; o < n + l + r; ++o) {
    t.add(pad_source(o, l, r, n, mode), 1.0);
    t.end_row();
  }
  return t;
}

// The (l, r) pairs of `pad` for the last pad.size() / 2 dims, checked as torch checks them.
std::vector<autograd::DimTaps> pad_taps(const char* op, const Tensor& self, IntArrayRef pad, PadMode mode) {
  std::vector<autograd::DimTaps> taps;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const int64_t d = self.dim() - 1 - static_cast<int64_t>(i), n = self.size(d);
    const int64_t l = pad[2 * i], r = pad[2 * i + 1];
    if (mode == PadMode::kReflect)
      GR_CHECK(l < n && r < n, op,
               ": padding size should be less than the corresponding input dimension, but got: ", "padding (", l, ", ",
               r, ") at dimension ", d, " of input ", self.sizes());
    if (mode == PadMode::kCircular) {
      GR_CHECK(l <= n && r <= n, op, ": padding value causes wrapping around more than once: padding (", l, ", ", r,
               ") at dimension ", d, " of input ", self.sizes());
      GR_CHECK(n + l + r == 0 || (n + l + r > 0 && n + std::min<int64_t>(l, 0) + std::min<int64_t>(r, 0) > 0), op,
               ": negative padding value is resulting in an empty dimension: padding (", l, ", ", r, ") at dimension ",
               d, " of input ", self.sizes());
    } else {
      GR_CHECK(n + l + r >= 1, op, ": input (size ", n, " at dimension ", d, ") is too small for padding (", l, ", ", r,
               "): calculated output size ", n + l + r);
    }
    taps.push_back({d, pad_table(n, l, r, mode)});
  }
  return taps;
}

// reflection_pad{k}d / replication_pad{k}d: padding 2k values, input [C, ...] or [N, C, ...]
// with k trailing dims, all non-empty but the batch.
Tensor pad_nd(const char* op, const char* name, const char* adjoint_name, const Tensor& self, IntArrayRef padding,
              int64_t k, PadMode mode) {
  GR_CHECK(self.defined(), op, ": input is undefined");
  GR_CHECK(static_cast<int64_t>(padding.size()) == 2 * k, op, ": padding size is expected to be ", 2 * k, ", got ",
           padding);
  bool ok = self.dim() == k + 1 || self.dim() == k + 2;
  for (int64_t d = self.dim() == k + 2 ? 1 : 0; ok && d < self.dim(); ++d) ok = self.size(d) != 0;
  GR_CHECK(ok, op, ": expected a ", k + 1, "-D or ", k + 2, "-D (batch mode) input with non-zero sizes but the ",
           "batch, got shape ", self.sizes());
  GR_CHECK(self.scalar_type() == kFloat32 || self.scalar_type() == kFloat64, op,
           ": expected a float32 or float64 input, got ", self.scalar_type());
  return autograd::apply_taps(name, adjoint_name, self, pad_taps(op, self, padding, mode));
}

}  // namespace

Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value) {
  GR_CHECK(self.defined(), "constant_pad_nd: input is undefined");
  GR_CHECK(pad.size() % 2 == 0, "constant_pad_nd: length of pad must be even but instead it equals ", pad.size());
  GR_CHECK(static_cast<int64_t>(pad.size()) <= 2 * self.dim(),
           "constant_pad_nd: length of pad should be no more than twice the number of dimensions of the input. ",
           "Pad length is ", pad.size(), " while the input has ", self.dim(), " dimensions");
  std::vector<int64_t> sizes = self.sizes().vec();
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const int64_t d = self.dim() - 1 - static_cast<int64_t>(i), l = pad[2 * i], r = pad[2 * i + 1];
    GR_CHECK(sizes[d] + l + r >= 0, "constant_pad_nd: the input size ", sizes[d], ", plus negative padding ", l,
             " and ", r, " resulted in a negative output size, which is invalid. Check dimension ", d,
             " of your input");
    sizes[d] += l + r;
  }
  Tensor out = full(sizes, value, self.options());
  // The kept part of the input goes where it lands in the output (negative pads crop).
  Tensor src = self.detach(), dst = out;
  bool overlap = true;
  for (size_t i = 0; i < pad.size() / 2 && overlap; ++i) {
    const int64_t d = self.dim() - 1 - static_cast<int64_t>(i), l = pad[2 * i], r = pad[2 * i + 1];
    const int64_t kept = self.size(d) + std::min<int64_t>(l, 0) + std::min<int64_t>(r, 0);
    overlap = kept > 0;
    if (!overlap) break;
    src = src.narrow(d, std::max<int64_t>(-l, 0), kept);
    dst = dst.narrow(d, std::max<int64_t>(l, 0), kept);
  }
  if (overlap && src.numel() > 0) native::copy_(dst, src);
  if (autograd::needs_grad(self)) {
    std::vector<int64_t> crop(pad.begin(), pad.end());
    for (int64_t& p : crop) p = -p;
    autograd::record("ConstantPadNdBackward0", {self}, {out}, [crop](const TensorList& g, const std::vector<bool>&) {
      return TensorList{constant_pad_nd(g[0], crop, 0)};
    });
  }
  return out;
}

Tensor reflection_pad1d(const Tensor& self, IntArrayRef padding) {
  return pad_nd("reflection_pad1d", "ReflectionPad1DBackward0", "ReflectionPad1DBackwardBackward0", self, padding, 1,
                PadMode::kReflect);
}
Tensor reflection_pad2d(const Tensor& self, IntArrayRef padding) {
  return pad_nd("reflection_pad2d", "ReflectionPad2DBackward0", "ReflectionPad2DBackwardBackward0", self, padding, 2,
                PadMode::kReflect);
}
Tensor reflection_pad3d(const Tensor& self, IntArrayRef padding) {
  return pad_nd("reflection_pad3d", "ReflectionPad3DBackward0", "ReflectionPad3DBackwardBackward0", self, padding, 3,
                PadMode::kReflect);
}
Tensor replication_pad1d(const Tensor& self, IntArrayRef padding) {
  return pad_nd("replication_pad1d", "ReplicationPad1DBackward0", "ReplicationPad1DBackwardBackward0", self, padding, 1,
                PadMode::kReplicate);
}
Tensor replication_pad2d(const Tensor& self, IntArrayRef padding) {
  return pad_nd("replication_pad2d", "ReplicationPad2DBackward0", "ReplicationPad2DBackwardBackward0", self, padding, 2,
                PadMode::kReplicate);
}
Tensor replication_pad3d(const Tensor& self, IntArrayRef padding) {
  return pad_nd("replication_pad3d", "ReplicationPad3DBackward0", "ReplicationPad3DBackwardBackward0", self, padding, 3,
                PadMode::kReplicate);
}

Tensor _pad_circular(const Tensor& self, IntArrayRef pad) {
  GR_CHECK(self.defined(), "_pad_circular: input is undefined");
  const int64_t padded = static_cast<int64_t>(pad.size() / 2), unpadded = self.dim() - padded;
  GR_CHECK(pad.size() % 2 == 0 && (unpadded == 1 || unpadded == 2),
           "_pad_circular: invalid padding size, expected 1 or 2 non-padded dimensions, which would be equivalent ",
           "to padding of length ", (self.dim() - 1) * 2, " or ", (self.dim() - 2) * 2, " respectively but got ",
           pad.size());
  GR_CHECK(self.scalar_type() == kFloat32 || self.scalar_type() == kFloat64,
           "_pad_circular: expected a float32 or float64 input, got ", self.scalar_type());
  return autograd::apply_taps("PadCircularBackward", "PadCircularBackwardBackward", self,
                              pad_taps("_pad_circular", self, pad, PadMode::kCircular));
}

Tensor pad(const Tensor& self, IntArrayRef pad, std::string_view mode, std::optional<double> value) {
  GR_CHECK(self.defined(), "pad: input is undefined");
  GR_CHECK(pad.size() % 2 == 0, "pad: padding length must be divisible by 2, got ", pad.size());
  GR_CHECK(static_cast<int64_t>(pad.size()) <= self.dim() * 2,
           "pad: padding length should be less than or equal to two times the input dimension but got padding ",
           "length ", pad.size(), " and input of dimension ", self.dim());
  if (mode == "constant") return constant_pad_nd(self, pad, value.value_or(0.0));
  GR_CHECK(mode == "reflect" || mode == "replicate" || mode == "circular", "pad: unrecognised padding mode \"", mode,
           "\" (expected constant, reflect, replicate or circular)");
  GR_CHECK(!value.has_value() || *value == 0, "pad: padding mode \"", mode, "\" doesn't take in value argument");
  const int64_t k = static_cast<int64_t>(pad.size() / 2);
  GR_CHECK(k >= 1 && k <= 3 && (self.dim() == k + 1 || self.dim() == k + 2),
           "pad: only 2D, 3D, 4D, 5D padding with non-constant padding are supported: mode \"", mode,
           "\" with padding length ", pad.size(), " needs a ", k + 1, "-D or ", k + 2, "-D input, got shape ",
           self.sizes());
  if (mode == "circular") return _pad_circular(self, pad);
  static constexpr Tensor (*reflect[])(const Tensor&, IntArrayRef) = {reflection_pad1d, reflection_pad2d,
                                                                      reflection_pad3d};
  static constexpr Tensor (*replicate[])(const Tensor&, IntArrayRef) = {replication_pad1d, replication_pad2d,
                                                                        replication_pad3d};
  return (mode == "reflect" ? reflect : replicate)[k - 1](self, pad);
}

}  // namespace gr
