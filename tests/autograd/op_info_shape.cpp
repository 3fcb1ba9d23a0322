// OpInfo entries of the shape branch (padding and interpolation), gradchecked and
// gradgradchecked in float64 by test_op_info.cpp. Every one is a linear map (plus a constant
// for constant_pad_nd), so the checks are exact up to rounding; shapes make every mirrored,
// repeated or interpolated position count more than once.
#include "op_info.h"

namespace gr::testing {

GR_OP_INFOS(add_pad_op_infos) {
  auto one = [&ops](const char* name, std::vector<int64_t> shape, uint64_t seed, std::function<Tensor(const Tensor&)> f) {
    ops.push_back({name, [shape, seed] { return TensorList{op_input(shape, seed)}; },
                   [f](const TensorList& t) { return f(t[0]); }});
  };
  one("constant_pad_nd", {2, 3, 4}, 3001, [](const Tensor& x) { return constant_pad_nd(x, {1, 2, -1, 1}, 0.5); });
  one("reflection_pad1d", {2, 3, 5}, 3002, [](const Tensor& x) { return reflection_pad1d(x, {3, 4}); });
  one("reflection_pad2d", {1, 2, 4, 3}, 3003, [](const Tensor& x) { return reflection_pad2d(x, {2, 1, 3, 2}); });
  one("reflection_pad3d", {1, 2, 3, 3, 2}, 3004, [](const Tensor& x) { return reflection_pad3d(x, {1, 1, 2, 0, 1, 2}); });
  one("replication_pad1d", {3, 4}, 3005, [](const Tensor& x) { return replication_pad1d(x, {5, 2}); });
  one("replication_pad2d", {2, 2, 3, 3}, 3006, [](const Tensor& x) { return replication_pad2d(x, {2, 3, -1, 4}); });
  one("replication_pad3d", {1, 2, 2, 3, 2}, 3007, [](const Tensor& x) { return replication_pad3d(x, {1, 2, 2, 1, 0, 1}); });
  one("_pad_circular", {2, 3, 4}, 3008, [](const Tensor& x) { return _pad_circular(x, {4, 3}); });
  one("_pad_circular", {1, 2, 3, 4}, 3009, [](const Tensor& x) { return _pad_circular(x, {1, 2, 3, -1}); });
  one("pad", {2, 3, 4}, 3010, [](const Tensor& x) { return pad(x, {2, 3}, "reflect"); });
}

GR_OP_INFOS(add_upsample_op_infos) {
  auto one = [&ops](const char* name, std::vector<int64_t> shape, uint64_t seed, std::function<Tensor(const Tensor&)> f) {
    ops.push_back({name, [shape, seed] { return TensorList{op_input(shape, seed)}; },
                   [f](const TensorList& t) { return f(t[0]); }});
  };
  one("upsample_nearest1d", {2, 2, 3}, 3021, [](const Tensor& x) { return upsample_nearest1d(x, {7}); });
  one("upsample_nearest1d", {2, 2, 5}, 3022, [](const Tensor& x) { return upsample_nearest1d(x, {3}); });
  one("upsample_nearest2d", {1, 2, 3, 4}, 3023, [](const Tensor& x) { return upsample_nearest2d(x, {5, 7}); });
  one("upsample_nearest2d", {1, 2, 3, 4}, 3024,
      [](const Tensor& x) { return upsample_nearest2d(x, {6, 6}, 2.0, 1.5); });
  one("upsample_nearest3d", {1, 1, 2, 3, 2}, 3025, [](const Tensor& x) { return upsample_nearest3d(x, {3, 4, 4}); });
  one("_upsample_nearest_exact2d", {1, 2, 3, 4}, 3026,
      [](const Tensor& x) { return _upsample_nearest_exact2d(x, {5, 3}); });
  one("upsample_linear1d", {2, 2, 4}, 3027, [](const Tensor& x) { return upsample_linear1d(x, {9}, false); });
  one("upsample_linear1d", {2, 2, 4}, 3028, [](const Tensor& x) { return upsample_linear1d(x, {7}, true); });
  one("upsample_linear1d", {2, 2, 7}, 3029, [](const Tensor& x) { return upsample_linear1d(x, {3}, false); });
  one("upsample_bilinear2d", {1, 2, 3, 4}, 3030, [](const Tensor& x) { return upsample_bilinear2d(x, {5, 7}, false); });
  one("upsample_bilinear2d", {1, 2, 3, 4}, 3031, [](const Tensor& x) { return upsample_bilinear2d(x, {5, 7}, true); });
  one("upsample_bilinear2d", {1, 2, 4, 5}, 3032,
      [](const Tensor& x) { return upsample_bilinear2d(x, {8, 7}, false, 2.0, 1.5); });
  one("upsample_trilinear3d", {1, 1, 2, 3, 2}, 3033,
      [](const Tensor& x) { return upsample_trilinear3d(x, {3, 4, 3}, false); });
}

}  // namespace gr::testing
