// CPU GEMM (the packed AVX-512/AVX2 kernel of gemm_packed.cpp, or Eigen where this build
// has no vector ISA), and mm/bmm/matmul shape handling on top of it.
#include "core/native/gemm/gemm.h"

#include <Eigen/Core>
#include <vector>

#include "core/factory.h"
#include "core/functors.h"
#include "core/native/copy/copy.h"
#include "core/native/elementwise/elementwise.h"
#include "core/native/gemm/gemm_packed.h"
#include "core/parallel.h"

namespace gr::native {

GR_DEFINE_DISPATCH(GemmFn, gemm_stub);
GR_DEFINE_DISPATCH(GemmBatchedFn, gemm_batched_stub);
GR_DEFINE_DISPATCH(GemmBiasFn, gemm_bias_stub);

namespace {

template <class T>
using RowMajorMap =
    Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0, Eigen::OuterStride<>>;
template <class T>
using ConstRowMajorMap =
    Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0, Eigen::OuterStride<>>;

template <class T>
void gemm_eigen(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
                int64_t ldb, T beta, T* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  RowMajorMap<T> c(C, M, N, Eigen::OuterStride<>(ldc));
  if (K == 0) {
    if (beta == T(0)) c.setZero();
    else c *= beta;
    return;
  }
  // A is stored M x K (or K x M when transposed); likewise B.
  ConstRowMajorMap<T> a(A, ta ? K : M, ta ? M : K, Eigen::OuterStride<>(lda));
  ConstRowMajorMap<T> b(B, tb ? N : K, tb ? K : N, Eigen::OuterStride<>(ldb));
  if (beta == T(0)) c.setZero();
  else if (beta != T(1)) c *= beta;
  if (!ta && !tb) c.noalias() += alpha * a * b;
  else if (ta && !tb) c.noalias() += alpha * a.transpose() * b;
  else if (!ta && tb) c.noalias() += alpha * a * b.transpose();
  else c.noalias() += alpha * a.transpose() * b.transpose();
}

template <class T>
void gemm_any(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T* A, int64_t lda, const T* B,
              int64_t ldb, T beta, T* C, int64_t ldc) {
  if (packed_gemm_available<T>())
    packed_gemm<T>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, in_parallel_region() ? 1 : get_num_threads());
  else
    gemm_eigen<T>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

// bfloat16 A and B, float C: widened while packing (or up front for Eigen).
void gemm_any(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const BFloat16* A, int64_t lda,
              const BFloat16* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (packed_gemm_available<float>()) {
    packed_gemm_bf16(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, in_parallel_region() ? 1 : get_num_threads());
    return;
  }
  auto widen = [](const BFloat16* p, int64_t rows, int64_t cols, int64_t ld) {
    std::vector<float> v(static_cast<size_t>(rows * cols));
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) v[i * cols + j] = p[i * ld + j];
    return v;
  };
  const int64_t a_cols = ta ? M : K, b_cols = tb ? K : N;
  std::vector<float> a = widen(A, ta ? K : M, a_cols, lda), b = widen(B, tb ? N : K, b_cols, ldb);
  gemm_eigen<float>(ta, tb, M, N, K, alpha, a.data(), std::max<int64_t>(a_cols, 1), b.data(),
                    std::max<int64_t>(b_cols, 1), beta, C, ldc);
}

// Calls fn.template operator()<T, S>() with S the operands' C++ type and T the result's:
// S = T for float32 and float64, S = bfloat16 with T = float (the gemm_stub contract).
template <class F>
void dispatch_gemm(ScalarType t, const char* op, F&& fn) {
  if (t == kBFloat16) return fn.template operator()<float, BFloat16>();
  dispatch_floating(t, op, [&]<class T>() { fn.template operator()<T, T>(); });
}

void gemm_dispatch_cpu(ScalarType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void* A,
                       int64_t lda, const void* B, int64_t ldb, double beta, void* C, int64_t ldc) {
  dispatch_gemm(t, "gemm", [&]<class T, class S>() {
    gemm_any(ta, tb, M, N, K, static_cast<T>(alpha), static_cast<const S*>(A), lda, static_cast<const S*>(B), ldb,
             static_cast<T>(beta), static_cast<T*>(C), ldc);
  });
}

void gemm_batched_cpu(ScalarType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const void* A,
                      int64_t lda, int64_t stride_a, const void* B, int64_t ldb, int64_t stride_b, double beta, void* C,
                      int64_t ldc, int64_t stride_c, int64_t batch) {
  if (M == 0 || N == 0 || batch == 0) return;
  GR_CHECK(batch == 1 || stride_c >= (M - 1) * ldc + N, "gemm_batched: the outputs of the products overlap (M = ", M,
           ", N = ", N, ", ldc = ", ldc, ", stride_c = ", stride_c, ")");
  dispatch_gemm(t, "gemm_batched", [&]<class T, class S>() {
    const S* a = static_cast<const S*>(A);
    const S* b = static_cast<const S*>(B);
    T* c = static_cast<T*>(C);
    auto one = [&](int64_t i) {
      gemm_any(ta, tb, M, N, K, static_cast<T>(alpha), a + i * stride_a, lda, b + i * stride_b, ldb,
               static_cast<T>(beta), c + i * stride_c, ldc);
    };
    // Many small products: one thread per product; few large ones: GEMM threads inside.
    // A thread gets at least ~64K multiply-adds: waking one costs microseconds.
    if (batch >= get_num_threads() && M * N * K < (1 << 21)) {
      const int64_t grain = std::max<int64_t>(1, (int64_t(1) << 16) / std::max<int64_t>(M * N * K, 1));
      parallel_for(0, batch, grain, [&](int64_t b0, int64_t b1) {
        for (int64_t i = b0; i < b1; ++i) one(i);
      });
    } else {
      for (int64_t i = 0; i < batch; ++i) one(i);
    }
  });
}

// Note [Bias in the GEMM epilogue]
// linear's bias used to be a second pass over the product (mm, then add_): for train_gpt tiny
// that re-read every [768 x width] output once more. The packed GEMM now adds the row vector
// while the finished tile is still in registers (micro_kernel_impl's bias), on the last K
// block only, so the values are those of the separate add: acc (+ beta * C) + bias, each
// rounded once as before. train_gpt tiny, 1 thread, --profile over 40 steps (12:06 UTC, load
// 8): the separate adds took 0.67 ms of a ~62 ms step (add_stub 50.8 -> 24.1 ms in all);
// about +1.5% tokens/s in alternating runs when first tried (09:02 UTC). Eigen builds (no
// vector ISA) add the bias in a loop after the product.
template <class T>
void gemm_bias_any(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const T* A, int64_t lda, const T* B,
                   int64_t ldb, const T* bias, T* C, int64_t ldc) {
  if (packed_gemm_available<T>()) {
    packed_gemm<T>(ta, tb, M, N, K, T(1), A, lda, B, ldb, T(0), C, ldc, in_parallel_region() ? 1 : get_num_threads(),
                   bias);
    return;
  }
  gemm_eigen<T>(ta, tb, M, N, K, T(1), A, lda, B, ldb, T(0), C, ldc);
  const functors::Add<T> add{T(1)};
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = add(C[i * ldc + j], bias[j]);
}

// bfloat16 A, B, bias (or none) and C: float sums plus the bias, rounded once.
void gemm_bias_bf16(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const BFloat16* A, int64_t lda,
                    const BFloat16* B, int64_t ldb, const BFloat16* bias, BFloat16* C, int64_t ldc) {
  std::vector<float> bias32(bias ? static_cast<size_t>(N) : 0);
  for (int64_t j = 0; j < static_cast<int64_t>(bias32.size()); ++j) bias32[j] = bias[j];
  const float* b32 = bias ? bias32.data() : nullptr;
  if (packed_gemm_available<float>()) {
    packed_gemm_bf16(ta, tb, M, N, K, A, lda, B, ldb, b32, C, ldc, in_parallel_region() ? 1 : get_num_threads());
    return;
  }
  std::vector<float> c(static_cast<size_t>(M * N));
  gemm_any(ta, tb, M, N, K, 1.f, A, lda, B, ldb, 0.f, c.data(), std::max<int64_t>(N, 1));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) C[i * ldc + j] = BFloat16(b32 ? c[i * N + j] + b32[j] : c[i * N + j]);
}

void gemm_bias_cpu(ScalarType t, bool ta, bool tb, int64_t M, int64_t N, int64_t K, const void* A, int64_t lda,
                   const void* B, int64_t ldb, const void* bias, void* C, int64_t ldc) {
  if (t == kBFloat16)
    return gemm_bias_bf16(ta, tb, M, N, K, static_cast<const BFloat16*>(A), lda, static_cast<const BFloat16*>(B), ldb,
                          static_cast<const BFloat16*>(bias), static_cast<BFloat16*>(C), ldc);
  dispatch_floating(t, "gemm_bias", [&]<class T>() {
    gemm_bias_any<T>(ta, tb, M, N, K, static_cast<const T*>(A), lda, static_cast<const T*>(B), ldb,
                     static_cast<const T*>(bias), static_cast<T*>(C), ldc);
  });
}

// How a 2-D strided matrix is handed to gemm: its data, whether it is transposed, its ld.
struct GemmOperand {
  Tensor keep;  // owns a contiguous copy when one was needed
  const void* data;
  bool trans;
  int64_t ld;
};

GemmOperand gemm_operand(const Tensor& m, int64_t rows_stride, int64_t cols_stride, int64_t rows, int64_t cols,
                         const void* data) {
  if (cols_stride == 1 && (rows <= 1 || rows_stride >= std::max<int64_t>(cols, 1)))
    return {{}, data, false, std::max<int64_t>({rows_stride, cols, 1})};
  if (rows_stride == 1 && (cols <= 1 || cols_stride >= std::max<int64_t>(rows, 1)))
    return {{}, data, true, std::max<int64_t>({cols_stride, rows, 1})};
  return {m, nullptr, false, 0};  // caller copies
}

GemmOperand gemm_operand_2d(const Tensor& m) {
  GemmOperand op = gemm_operand(m, m.stride(0), m.stride(1), m.size(0), m.size(1), m.data_ptr());
  if (op.data) return op;
  Tensor c = clone(m);
  return {c, c.data_ptr(), false, std::max<int64_t>(c.size(1), 1)};
}

void check_matmul_args(const Tensor& a, const Tensor& b, const char* op) {
  GR_CHECK(a.defined() && b.defined(), op, ": undefined tensor argument");
  GR_CHECK(a.device() == b.device(), op, ": expected both tensors on the same device, got ", a.device(), " and ",
           b.device());
  GR_CHECK(a.scalar_type() == b.scalar_type(), op, ": expected both tensors to have the same dtype, got ",
           a.scalar_type(), " and ", b.scalar_type());
  GR_CHECK(a.is_floating_point(), op, ": expected float32 or float64 tensors, got ", a.scalar_type());
}

// bfloat16 products on the CPU go to the GEMM as they are (pair products on AVX512_BF16, else
// widened while packing; Note [bfloat16 pair products]), and bfloat16/float16 ones on CUDA
// (tensor cores, float32 accumulation): mm and mm_bias round each float sum to the reduced
// type as it is stored, batched products write float32 rounded once at the end (Note
// [Reduced float math]). float16 on the CPU is converted to float32 copies first.
bool widened_by_gemm(const Tensor& a) {
  const ScalarType t = a.scalar_type();
  return (t == kBFloat16 && a.device().is_cpu()) || (is_reduced_float(t) && a.device().is_cuda());
}
ScalarType gemm_out_dtype(const Tensor& a) { return widened_by_gemm(a) ? kFloat32 : a.scalar_type(); }

}  // namespace

GR_REGISTER_KERNEL(gemm_stub, kCPU, &gemm_dispatch_cpu);
GR_REGISTER_KERNEL(gemm_batched_stub, kCPU, &gemm_batched_cpu);
GR_REGISTER_KERNEL(gemm_bias_stub, kCPU, &gemm_bias_cpu);

void gemm_cpu(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
              const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  gemm_any<float>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
void gemm_cpu(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
              const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  gemm_any<double>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void gemm_reference_cpu(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                        const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  gemm_eigen<float>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}
void gemm_reference_cpu(bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha, const double* A, int64_t lda,
                        const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  gemm_eigen<double>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

// Eigen's products follow gr::set_num_threads.
static const detail::ThreadCountListener eigen_threads([](int n) { Eigen::setNbThreads(n); });

Tensor mm(const Tensor& a, const Tensor& b) {
  check_matmul_args(a, b, "mm");
  GR_CHECK(a.dim() == 2 && b.dim() == 2, "mm: expected 2-D tensors, got ", a.sizes(), " and ", b.sizes());
  if (is_reduced_float(a.scalar_type()) && !widened_by_gemm(a))  // Note [Reduced float math]
    return to_dtype(mm(to_dtype(a, kFloat32), to_dtype(b, kFloat32)), a.scalar_type());
  GR_CHECK(a.size(1) == b.size(0), "mm: shapes ", a.sizes(), " and ", b.sizes(), " cannot be multiplied (", a.size(1),
           " != ", b.size(0), ")");
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  Tensor out = empty({M, N}, a.options());
  GemmOperand A = gemm_operand_2d(a), B = gemm_operand_2d(b);
  if (widened_by_gemm(a))  // rounded to bfloat16 as the tiles are stored
    gemm_bias_stub(a.device(), a.scalar_type(), A.trans, B.trans, M, N, K, A.data, A.ld, B.data, B.ld, nullptr,
                   out.data_ptr(), std::max<int64_t>(N, 1));
  else
    gemm_stub(a.device(), a.scalar_type(), A.trans, B.trans, M, N, K, 1.0, A.data, A.ld, B.data, B.ld, 0.0,
              out.data_ptr(), std::max<int64_t>(N, 1));
  return out;
}

Tensor mm_bias(const Tensor& a, const Tensor& b, const Tensor& bias) {
  check_matmul_args(a, b, "mm");
  GR_CHECK(a.dim() == 2 && b.dim() == 2, "mm: expected 2-D tensors, got ", a.sizes(), " and ", b.sizes());
  GR_CHECK(bias.defined() && bias.dim() == 1 && bias.size(0) == b.size(1), "linear: bias must be [", b.size(1),
           "], got ", bias.defined() ? bias.sizes() : IntArrayRef{});
  GR_CHECK(bias.device() == a.device(), "linear: expected bias on ", a.device(), ", got ", bias.device());
  const ScalarType t = a.scalar_type();
  if ((t != kFloat32 && t != kFloat64 && !widened_by_gemm(a)) || bias.scalar_type() != t || a.size(1) != b.size(0)) {
    Tensor out = mm(a, b);  // (mm reports the shape error)
    add_(out, bias);
    return out;
  }
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  Tensor out = empty({M, N}, a.options());
  GemmOperand A = gemm_operand_2d(a), B = gemm_operand_2d(b);
  const Tensor bias_c = bias.is_contiguous() ? bias : clone(bias);
  gemm_bias_stub(a.device(), t, A.trans, B.trans, M, N, K, A.data, A.ld, B.data, B.ld, bias_c.data_ptr(),
                 out.data_ptr(), std::max<int64_t>(N, 1));
  return out;
}

Tensor bmm(const Tensor& a, const Tensor& b) { return baddbmm({}, a, b, 0.0, 1.0, "bmm"); }

Tensor baddbmm(const Tensor& self, const Tensor& a, const Tensor& b, double beta, double alpha, const char* op) {
  check_matmul_args(a, b, op);
  GR_CHECK(a.dim() == 3 && b.dim() == 3, op, ": expected 3-D tensors, got ", a.sizes(), " and ", b.sizes());
  if (is_reduced_float(a.scalar_type()) && !widened_by_gemm(a)) {  // Note [Reduced float math]
    Tensor self32 = self.defined() ? to_dtype(self, kFloat32) : self;
    return to_dtype(baddbmm(self32, to_dtype(a, kFloat32), to_dtype(b, kFloat32), beta, alpha, op), a.scalar_type());
  }
  GR_CHECK(a.size(0) == b.size(0) && a.size(2) == b.size(1), op, ": shapes ", a.sizes(), " and ", b.sizes(),
           " cannot be multiplied");
  const int64_t batch = a.size(0), M = a.size(1), K = a.size(2), N = b.size(2);
  Tensor out = empty({batch, M, N}, a.options().dtype(gemm_out_dtype(a)));
  auto result = [&] { return out.scalar_type() == a.scalar_type() ? out : to_dtype(out, a.scalar_type()); };
  if (out.numel() == 0) return result();
  if (beta != 0.0) {
    GR_CHECK(self.defined() && self.scalar_type() == a.scalar_type() && self.device() == a.device(), op,
             ": self must be a ", a.scalar_type(), " tensor on ", a.device());
    copy_(out, self);  // broadcasts self to [batch, M, N] (and widens it); the GEMM scales it by beta
  }
  auto operand = [](const Tensor& t) {
    GemmOperand op = gemm_operand(t, t.stride(1), t.stride(2), t.size(1), t.size(2), t.data_ptr());
    if (op.data) return std::make_pair(t, op);
    Tensor c = clone(t);
    return std::make_pair(c, gemm_operand(c, c.stride(1), c.stride(2), c.size(1), c.size(2), c.data_ptr()));
  };
  auto [at, A] = operand(a);
  auto [bt, B] = operand(b);
  // A 3-D operand has one batch stride, so the whole batch is one strided-batched call.
  gemm_batched_stub(a.device(), a.scalar_type(), A.trans, B.trans, M, N, K, alpha, A.data, A.ld, at.stride(0),
                    B.data, B.ld, bt.stride(0), beta, out.data_ptr(), std::max<int64_t>(N, 1), M * N, batch);
  return result();
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  check_matmul_args(a, b, "matmul");
  GR_CHECK(a.dim() >= 1 && b.dim() >= 1, "matmul: both arguments need at least 1 dimension, got ", a.sizes(), " and ",
           b.sizes());
  const int64_t da = a.dim(), db = b.dim();
  auto view2 = [](const Tensor& t, int64_t r, int64_t c, int64_t rs, int64_t cs) {
    return make_view(t, {r, c}, {rs, cs}, t.storage_offset());
  };
  if (da == 1 && db == 1) {
    GR_CHECK(a.size(0) == b.size(0), "matmul: 1-D tensors of sizes ", a.size(0), " and ", b.size(0), " differ");
    Tensor r = mm(view2(a, 1, a.size(0), a.size(0) * a.stride(0), a.stride(0)), view2(b, b.size(0), 1, b.stride(0), 1));
    return make_view(r, {}, {}, 0);
  }
  if (da == 2 && db == 1) {
    Tensor r = mm(a, view2(b, b.size(0), 1, b.stride(0), 1));
    return make_view(r, {a.size(0)}, {1}, 0);
  }
  if (da == 1 && db == 2) {
    Tensor r = mm(view2(a, 1, a.size(0), a.size(0) * a.stride(0), a.stride(0)), b);
    return make_view(r, {b.size(1)}, {1}, 0);
  }
  if (da == 2 && db == 2) return mm(a, b);

  // Batched: 1-D operands become a row (a) or a column (b) and are squeezed out at the end.
  Tensor A = da == 1 ? make_view(a, {1, a.size(0)}, {0, a.stride(0)}, a.storage_offset()) : a;
  Tensor B = db == 1 ? make_view(b, {b.size(0), 1}, {b.stride(0), 0}, b.storage_offset()) : b;
  const int64_t M = A.size(-2), K = A.size(-1), N = B.size(-1);
  GR_CHECK(B.size(-2) == K, "matmul: shapes ", a.sizes(), " and ", b.sizes(), " cannot be multiplied (", K, " != ",
           B.size(-2), ")");
  // A [..., M, K] times a plain matrix: fold A's batch into M when A is row-contiguous.
  if (B.dim() == 2 && A.is_contiguous()) {
    Tensor r = mm(make_view(A, {A.numel() / K, K}, {K, 1}, A.storage_offset()), B);
    std::vector<int64_t> shape(a.sizes().begin(), a.sizes().end() - 1);
    if (da == 1) shape.clear();
    shape.push_back(N);
    if (db == 1) shape.pop_back();
    return make_view(r, shape, contiguous_strides(shape), 0);
  }
  std::vector<int64_t> batch_a(A.sizes().begin(), A.sizes().end() - 2), batch_b(B.sizes().begin(), B.sizes().end() - 2);
  std::vector<int64_t> batch = batch_a.empty() ? batch_b : batch_b.empty() ? batch_a : std::vector<int64_t>{};
  if (!batch_a.empty() && !batch_b.empty()) {
    size_t n = std::max(batch_a.size(), batch_b.size());
    batch.resize(n);
    for (size_t i = 0; i < n; ++i) {
      int64_t x = i < n - batch_a.size() ? 1 : batch_a[i - (n - batch_a.size())];
      int64_t y = i < n - batch_b.size() ? 1 : batch_b[i - (n - batch_b.size())];
      GR_CHECK(x == y || x == 1 || y == 1, "matmul: batch dimensions of ", a.sizes(), " and ", b.sizes(),
               " cannot be broadcast");
      batch[i] = x == 1 ? y : x;
    }
  }
  int64_t nb = 1;
  for (int64_t s : batch) nb *= s;
  // Expand both to the full batch, then flatten the batch into one dim (copy if needed).
  auto to3 = [&](const Tensor& t, int64_t r, int64_t c) {
    std::vector<int64_t> sizes = batch, strides(batch.size(), 0);
    const int64_t lead = static_cast<int64_t>(batch.size()) - (t.dim() - 2);
    for (int64_t i = 0; i < t.dim() - 2; ++i) strides[lead + i] = t.size(i) == 1 ? 0 : t.stride(i);
    sizes.push_back(r), sizes.push_back(c);
    strides.push_back(t.stride(-2)), strides.push_back(t.stride(-1));
    Tensor e = make_view(t, sizes, strides, t.storage_offset());
    // One batch stride covers the batch when the expanded batch dims nest evenly.
    bool nests = true;
    for (size_t i = 0; i + 1 < batch.size(); ++i) nests = nests && strides[i] == strides[i + 1] * batch[i + 1];
    if (nests) return make_view(e, {nb, r, c}, {batch.empty() ? 0 : strides[batch.size() - 1], strides[batch.size()],
                                                strides[batch.size() + 1]}, t.storage_offset());
    Tensor cc = clone(e);
    return make_view(cc, {nb, r, c}, {r * c, c, 1}, 0);
  };
  Tensor r = bmm(to3(A, M, K), to3(B, K, N));
  std::vector<int64_t> shape = batch;
  if (da > 1) shape.push_back(M);
  if (db > 1) shape.push_back(N);
  return make_view(r, shape, contiguous_strides(shape), 0);
}

}  // namespace gr::native
