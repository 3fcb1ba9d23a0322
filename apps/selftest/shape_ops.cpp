// gpu_selftest checks of the shape branch: reflect/replicate/circular padding and nearest /
// bilinear interpolation, forward and backward (both run the tap-table kernel of
// cuda_kernels/resample.cu; padding moves values without arithmetic, so it must be exact).
#include "selftest/checks.h"

namespace gr::selftest {

GR_SELFTEST_CHECKS(add_shape_checks) {
  c.push_back({"pad", "reflect/replicate/circular pad2d fwd+bwd f32 [4,8,17,19]",
               [] { return TensorList{grad_input({4, 8, 17, 19}, 3101)}; },
               with_grads([](const TensorList& x) {
                 return reflection_pad2d(x[0], {3, 2, 1, 4}).sum() + replication_pad2d(x[0], {5, 0, 2, 2}).mean() +
                        _pad_circular(x[0], {4, 4, 1, 2}).square().sum();
               }),
               kF32Reduce});
  c.push_back({"pad", "constant_pad_nd + reflection_pad1d f64 [3,5,33]",
               [] { return TensorList{grad_input({3, 5, 33}, 3102, kFloat64)}; },
               with_grads([](const TensorList& x) {
                 return (constant_pad_nd(x[0], {2, -3, 1, 1}, 0.5) * 2).sum() + reflection_pad1d(x[0], {7, 9}).sum();
               }),
               kF64});
  c.push_back({"upsample", "nearest2d x2 + bilinear2d 33x47 (align_corners both) fwd+bwd f32 [2,3,16,24]",
               [] { return TensorList{grad_input({2, 3, 16, 24}, 3103)}; },
               with_grads([](const TensorList& x) {
                 return upsample_nearest2d(x[0], {32, 48}).square().sum() +
                        upsample_bilinear2d(x[0], {33, 47}, false).square().sum() +
                        upsample_bilinear2d(x[0], {9, 13}, true).square().sum();
               }),
               kF32Reduce});
  c.push_back({"upsample", "linear1d 0.6x + nearest_exact1d fwd+bwd f64 [4,3,50]",
               [] { return TensorList{grad_input({4, 3, 50}, 3104, kFloat64)}; },
               with_grads([](const TensorList& x) {
                 return upsample_linear1d(x[0], {30}, false, 0.6).square().sum() +
                        _upsample_nearest_exact1d(x[0], {77}).square().sum();
               }),
               kF64});
}

}  // namespace gr::selftest
