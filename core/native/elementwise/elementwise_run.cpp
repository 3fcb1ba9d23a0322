// The shared driver of the element-wise native ops (see elementwise_run.h).
#include "core/native/elementwise/elementwise_run.h"

#include <array>

#include "core/factory.h"
#include "core/half.h"
#include "core/native/copy/copy.h"
#include "core/parallel.h"

namespace gr::native {

ScalarType math_dtype(ScalarType t) { return is_reduced_float(t) ? kFloat32 : t; }

ScalarType floating_or_float32(ScalarType t) { return is_floating_point(t) ? t : kFloat32; }

void check_same_device(const Tensor& a, const Tensor& b, const char* op) {
  GR_CHECK(a.defined() && b.defined(), op, ": undefined tensor argument");
  GR_CHECK(a.device() == b.device(), op, ": expected all tensors on the same device, got ", a.device(), " and ",
           b.device());
}

ScalarType result_type(ScalarType t, const Scalar& s) {
  if (!is_floating_point(t) && s.is_floating_point()) return kFloat32;
  if (t == kBool && !s.is_floating_point()) return kInt64;
  return t;
}

void check_inplace_result(const char* op, const Tensor& self, ScalarType result) {
  GR_CHECK(can_cast(result, self.scalar_type()), op, ": result type ", result, " can't be cast to the desired output type ",
           self.scalar_type(), " (self of shape ", self.sizes(), ")");
}

namespace {

// Note [Reduced float math in chunks]
// A bfloat16 op converted each reduced operand into a whole float32 tensor, ran the float32
// kernel and rounded its whole float32 result into the output: three or four passes over
// memory around the one that computes, and buffers that outgrow the caches (gelu's [768,
// 512] activations of train_gpt tiny: 1.5 MB a copy). On the CPU, when the inputs are
// contiguous and of the result's shape (an activation, a residual add), the op now runs a
// chunk of kChunk elements at a time: each reduced input's chunk is widened into a float
// buffer that stays in L1, the kernel runs on the buffers (float inputs are read in place),
// and its results are rounded into the output. The values are those of the whole-tensor
// passes: the same conversions and the same kernel, element by element.
constexpr int64_t kChunk = 2048;

bool runs_in_chunks(std::initializer_list<Tensor> inputs, IntArrayRef shape, ScalarType math, ScalarType out_dtype) {
  if (math != kFloat32 || !(out_dtype == math || is_reduced_float(out_dtype))) return false;
  bool reduced = is_reduced_float(out_dtype);
  for (const Tensor& t : inputs) {
    const ScalarType d = t.scalar_type();
    if (!t.device().is_cpu() || !(d == math || is_reduced_float(d)) || t.sizes() != shape || !t.is_contiguous())
      return false;
    reduced = reduced || d != math;
  }
  return reduced;
}

template <class S>
void widen_chunk(float* __restrict d, const void* s, int64_t n) {
  const S* p = static_cast<const S*>(s);
  for (int64_t j = 0; j < n; ++j) d[j] = static_cast<float>(p[j]);
}
template <class S>
void round_chunk(void* d, const float* __restrict s, int64_t n) {
  S* p = static_cast<S*>(d);
  for (int64_t j = 0; j < n; ++j) p[j] = S(s[j]);
}

// out (out_dtype, float32 or reduced) = kernel(inputs) in float32; See Note [Reduced float
// math in chunks].
Tensor run_in_chunks(const LoopKernel& kernel, std::initializer_list<Tensor> inputs, IntArrayRef shape,
                     ScalarType out_dtype) {
  Tensor out = empty(shape, TensorOptions(out_dtype));
  const int k = 1 + static_cast<int>(inputs.size());
  std::array<ScalarType, kMaxOperands> dtypes{out_dtype};
  std::array<char*, kMaxOperands> base{static_cast<char*>(out.data_ptr())};
  int i = 1;
  for (const Tensor& t : inputs) dtypes[i] = t.scalar_type(), base[i++] = static_cast<char*>(t.data_ptr());
  parallel_for(0, out.numel(), kGrainSize, [&](int64_t begin, int64_t end) {
    alignas(64) float buf[kMaxOperands][kChunk];
    StridedLoop L;
    L.noperands = k;
    L.shape = {0};
    for (int o = 0; o < k; ++o) L.strides[o] = {1};
    for (int64_t c = begin; c < end; c += kChunk) {
      const int64_t n = std::min(kChunk, end - c);
      L.numel = L.shape[0] = n;
      for (int o = 0; o < k; ++o) {
        const int64_t offset = c * static_cast<int64_t>(element_size(dtypes[o]));
        if (dtypes[o] == kFloat32) {
          L.data[o] = base[o] + offset;
          continue;
        }
        L.data[o] = reinterpret_cast<char*>(buf[o]);
        if (o == 0) continue;
        if (dtypes[o] == kBFloat16) widen_chunk<BFloat16>(buf[o], base[o] + offset, n);
        else widen_chunk<Half>(buf[o], base[o] + offset, n);
      }
      kernel(L, kFloat32);
      const int64_t offset = c * static_cast<int64_t>(element_size(out_dtype));
      if (out_dtype == kBFloat16) round_chunk<BFloat16>(base[0] + offset, buf[0], n);
      else if (out_dtype == kFloat16) round_chunk<Half>(base[0] + offset, buf[0], n);
    }
  });
  return out;
}

}  // namespace

Tensor run_unary_loop(const LoopKernel& kernel, const Tensor& a, ScalarType compute, ScalarType out_dtype) {
  GR_CHECK(a.defined(), "element-wise op: undefined tensor argument");
  const ScalarType math = math_dtype(compute);
  if (out_dtype == compute && runs_in_chunks({a}, a.sizes(), math, out_dtype))
    return run_in_chunks(kernel, {a}, a.sizes(), out_dtype);
  Tensor out = empty(a.sizes(), TensorOptions(out_dtype == compute ? math : out_dtype).device(a.device()));
  Tensor ac = to_dtype(a, math);
  kernel(make_strided_loop({out, ac}, a.sizes()), math);
  return to_dtype(out, out_dtype);
}

Tensor run_binary_loop(const LoopKernel& kernel, const char* op, const Tensor& a, const Tensor& b, ScalarType compute,
                       ScalarType out_dtype) {
  check_same_device(a, b, op);
  std::vector<int64_t> shape = broadcast_shapes(a.sizes(), b.sizes(), op);
  const ScalarType math = math_dtype(compute);
  if (out_dtype == compute && runs_in_chunks({a, b}, shape, math, out_dtype))
    return run_in_chunks(kernel, {a, b}, shape, out_dtype);
  Tensor out = empty(shape, TensorOptions(out_dtype == compute ? math : out_dtype).device(a.device()));
  Tensor ac = to_dtype(a, math), bc = to_dtype(b, math);
  kernel(make_strided_loop({out, ac, bc}, shape), math);
  return to_dtype(out, out_dtype);
}

Tensor run_ternary_loop(const LoopKernel& kernel, const char* op, const Tensor& a, const Tensor& b, const Tensor& c,
                        ScalarType compute, ScalarType out_dtype) {
  check_same_device(a, b, op);
  check_same_device(a, c, op);
  std::vector<int64_t> shape = broadcast_shapes(broadcast_shapes(a.sizes(), b.sizes(), op), c.sizes(), op);
  const ScalarType math = math_dtype(compute);
  if (out_dtype == compute && runs_in_chunks({a, b, c}, shape, math, out_dtype))
    return run_in_chunks(kernel, {a, b, c}, shape, out_dtype);
  Tensor out = empty(shape, TensorOptions(out_dtype == compute ? math : out_dtype).device(a.device()));
  Tensor ac = to_dtype(a, math), bc = to_dtype(b, math), cc = to_dtype(c, math);
  kernel(make_strided_loop({out, ac, bc, cc}, shape), math);
  return to_dtype(out, out_dtype);
}

namespace {
// An operand read while self is written must not alias self's memory in another layout.
Tensor unaliased(const Tensor& self, const Tensor& o) {
  return o.storage().is_same(self.storage()) && !o.is_same(self) ? clone(o) : o;
}
void check_broadcasts_to_self(const char* op, const Tensor& self, IntArrayRef other) {
  std::vector<int64_t> shape = broadcast_shapes(self.sizes(), other, op);
  GR_CHECK(IntArrayRef(shape) == self.sizes(), op, ": output with shape ", self.sizes(),
           " doesn't match the broadcast shape ", IntArrayRef(shape));
}
}  // namespace

void run_unary_inplace_loop(const LoopKernel& kernel, const char* op, const Tensor& self, ScalarType result) {
  GR_CHECK(self.defined(), op, ": undefined tensor argument");
  check_inplace_result(op, self, result);
  if (is_reduced_float(self.scalar_type()) || result != self.scalar_type()) {
    copy_(self, run_unary_loop(kernel, self, result, result));
    return;
  }
  kernel(make_strided_loop({self, self}, self.sizes()), self.scalar_type());
  self.unsafe_impl()->storage.bump_version();
}

void run_binary_inplace_loop(const LoopKernel& kernel, const char* op, const Tensor& self, const Tensor& other,
                             ScalarType result) {
  check_same_device(self, other, op);
  check_broadcasts_to_self(op, self, other.sizes());
  check_inplace_result(op, self, result);
  if (is_reduced_float(self.scalar_type())) {
    copy_(self, run_binary_loop(kernel, op, self, other, self.scalar_type(), self.scalar_type()));
    return;
  }
  Tensor o = unaliased(self, to_dtype(other, self.scalar_type()));
  kernel(make_strided_loop({self, self, o}, self.sizes()), self.scalar_type());
  self.unsafe_impl()->storage.bump_version();
}

void run_ternary_inplace_loop(const LoopKernel& kernel, const char* op, const Tensor& self, const Tensor& b,
                              const Tensor& c, ScalarType result) {
  check_same_device(self, b, op);
  check_same_device(self, c, op);
  check_broadcasts_to_self(op, self, broadcast_shapes(b.sizes(), c.sizes(), op));
  check_inplace_result(op, self, result);
  if (is_reduced_float(self.scalar_type())) {
    copy_(self, run_ternary_loop(kernel, op, self, b, c, self.scalar_type(), self.scalar_type()));
    return;
  }
  Tensor bc = unaliased(self, to_dtype(b, self.scalar_type())), cc = unaliased(self, to_dtype(c, self.scalar_type()));
  kernel(make_strided_loop({self, self, bc, cc}, self.sizes()), self.scalar_type());
  self.unsafe_impl()->storage.bump_version();
}

}  // namespace gr::native
