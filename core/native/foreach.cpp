// The foreach front ends and their CPU kernels, which run the single-tensor kernels tensor by
// tensor (Note [Foreach lists]).
#include "core/native/foreach.h"

#include "core/factory.h"
#include "core/native/copy.h"
#include "core/native/elementwise.h"
#include "core/native/reduce.h"
#include "core/native/shape.h"
#include "core/optimizer_functors.h"

namespace gr::native {

GR_DEFINE_DISPATCH(ForeachNormFn, foreach_norm_stub);
GR_DEFINE_DISPATCH(ForeachClipFn, foreach_clip_stub);
GR_DEFINE_DISPATCH(ForeachZeroFn, foreach_zero_stub);

namespace {

// Tensor by tensor, on any devices: each norm in its dtype, then their norm in float64 on the
// first tensor's device.
Tensor norm_of_norms(const std::vector<Tensor>& tensors, double p) {
  TensorList norms;
  for (const Tensor& t : tensors)
    norms.push_back(to_device(to_dtype(vector_norm(t, p), kFloat64), tensors.front().device()));
  return vector_norm(stack(norms, 0), p);
}

void scale_each(const std::vector<Tensor>& tensors, const Tensor& total_norm, double max_norm) {
  const double coef = functors::clip_coefficient(total_norm.item<double>(), max_norm);
  if (!functors::clip_applies(coef)) return;
  for (const Tensor& t : tensors) mul_(t, wrapped_scalar(t, coef));
}

void norm_cpu(const std::vector<Tensor>& tensors, double p, const Tensor& out) { copy_(out, norm_of_norms(tensors, p)); }
void clip_cpu(const std::vector<Tensor>& tensors, const Tensor& total_norm, double max_norm) {
  scale_each(tensors, total_norm, max_norm);
}
void fill_each(const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors) fill_(t, 0);
}

void check_list(const std::vector<Tensor>& tensors, const char* op) {
  for (const Tensor& t : tensors)
    GR_CHECK(t.defined() && t.is_floating_point(), op, ": expected defined floating point tensors, got ",
             t.defined() ? t.scalar_type() : kFloat32, t.defined() ? "" : " (undefined)");
}

}  // namespace

GR_REGISTER_KERNEL(foreach_norm_stub, kCPU, &norm_cpu);
GR_REGISTER_KERNEL(foreach_clip_stub, kCPU, &clip_cpu);
GR_REGISTER_KERNEL(foreach_zero_stub, kCPU, &fill_each);

bool foreach_uniform(const std::vector<Tensor>& tensors) {
  if (tensors.empty()) return false;
  const Tensor& first = tensors.front();
  if (first.scalar_type() != kFloat32 && first.scalar_type() != kFloat64) return false;
  for (const Tensor& t : tensors)
    if (!t.is_contiguous() || t.device() != first.device() || t.scalar_type() != first.scalar_type()) return false;
  return true;
}

Tensor foreach_norm(const std::vector<Tensor>& tensors, double p) {
  check_list(tensors, "foreach_norm");
  if (tensors.empty()) return zeros({}, TensorOptions(kFloat64));
  if (!foreach_uniform(tensors)) return norm_of_norms(tensors, p);
  Tensor out = empty({}, TensorOptions(kFloat64).device(tensors.front().device()));
  foreach_norm_stub(out.device(), tensors, p, out);
  return out;
}

void foreach_clip_(const std::vector<Tensor>& tensors, const Tensor& total_norm, double max_norm) {
  check_list(tensors, "foreach_clip_");
  if (tensors.empty()) return;
  GR_CHECK(total_norm.defined() && total_norm.numel() == 1, "foreach_clip_: expected a one-element total norm");
  const bool one_call = foreach_uniform(tensors) && total_norm.device() == tensors.front().device();
  if (one_call) {
    foreach_clip_stub(tensors.front().device(), tensors, to_dtype(reshape(total_norm, {}), kFloat64), max_norm);
  } else {
    scale_each(tensors, total_norm, max_norm);
  }
  for (const Tensor& t : tensors) t.unsafe_impl()->storage.bump_version();
}

void foreach_zero_(const std::vector<Tensor>& tensors) {
  check_list(tensors, "foreach_zero_");
  if (foreach_uniform(tensors)) foreach_zero_stub(tensors.front().device(), tensors);
  else fill_each(tensors);  // fill_ runs on each tensor's own device
  for (const Tensor& t : tensors) t.unsafe_impl()->storage.bump_version();
}

}  // namespace gr::native
