// cuBLASLt GEMMs (see gemm_lt.h): one plan per problem and thread, made once — matmul and
// layout descriptors plus the first algorithm of cuBLASLt's heuristics for that problem, its
// alignments and the workspace limit — then each call only sets the bias pointer, takes the
// workspace the algorithm needs from the caching allocator and queues cublasLtMatmul.
#include "cuda_kernels/gemm_lt.h"

#include <cublasLt.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <unordered_map>

#include "core/deterministic.h"
#include "core/env.h"
#include "core/factory.h"
#include "cuda_kernels/cuda_check.h"
#include "cuda_kernels/gemm_lt_plan.h"
#include "cuda_kernels/runtime.h"

namespace gr::cuda {
namespace {

static_assert(kLtReductionInplace == CUBLASLT_REDUCTION_SCHEME_INPLACE && kLtReductionAll == CUBLASLT_REDUCTION_SCHEME_MASK,
              "gemm_lt_plan.h's reduction schemes differ from cublasLt.h's");

size_t env_workspace() {
  const char* v = std::getenv("GRADRING_CUBLASLT_WORKSPACE_MB");
  return (v == nullptr || *v == '\0' ? size_t(32) : static_cast<size_t>(std::strtoull(v, nullptr, 10))) << 20;
}

std::atomic<bool> g_cublaslt{env_flag("GRADRING_CUBLASLT", true)};
std::atomic<bool> g_lt_float32{env_flag("GRADRING_LT_FLOAT32", false)};
const size_t g_workspace_limit = env_workspace();
std::atomic<int64_t> g_plans_made{0};
constexpr size_t kMaxPlans = 4096;  // per thread

// One handle per (thread, device); never destroyed (as the cuBLAS handles, gemm.cpp).
cublasLtHandle_t lt_handle() {
  thread_local std::unordered_map<int, cublasLtHandle_t> handles;
  const int device = current_device();
  auto it = handles.find(device);
  if (it == handles.end()) {
    cublasLtHandle_t h = nullptr;
    GR_CUBLAS_CHECK(cublasLtCreate(&h));
    it = handles.emplace(device, h).first;
  }
  return it->second;
}

cudaDataType_t data_type(ScalarType t) {
  switch (t) {
    case kFloat32: return CUDA_R_32F;
    case kBFloat16: return CUDA_R_16BF;
    case kFloat16: return CUDA_R_16F;
    default: GR_ERROR("gemm: cuBLASLt products take float32, bfloat16 or float16, got ", t);
  }
}

cublasLtEpilogue_t epilogue_of(LtEpilogue e) {
  return e == LtEpilogue::kBias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

template <class T>
void set_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, const T& v) {
  GR_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, a, &v, sizeof(v)));
}
template <class T>
void set_pref(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t a, const T& v) {
  GR_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(p, a, &v, sizeof(v)));
}

// The descriptors of one problem and the algorithm chosen for it. `usable` is false when the
// heuristics had nothing (then lt_gemm falls back).
struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  size_t workspace = 0;
  bool usable = false;
  LtPlan() = default;
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  ~LtPlan() {  // host-side objects only: safe at thread exit
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

using PlanCache = std::unordered_map<LtPlanKey, std::unique_ptr<LtPlan>, LtPlanKeyHash>;
PlanCache& plan_cache() {
  thread_local PlanCache cache;
  return cache;
}

cublasLtMatrixLayout_t make_layout(cudaDataType_t type, const LtLayout& l) {
  cublasLtMatrixLayout_t layout = nullptr;
  GR_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, type, static_cast<uint64_t>(l.rows),
                                             static_cast<uint64_t>(l.cols), l.ld));
  return layout;
}

std::unique_ptr<LtPlan> make_plan(const LtPlanKey& key) {
  auto plan = std::make_unique<LtPlan>();
  const LtProblem& p = key.problem;
  const auto ab = static_cast<cudaDataType_t>(key.type_ab), c = static_cast<cudaDataType_t>(key.type_c);
  GR_CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  set_attr(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N);
  set_attr(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N);
  const auto epilogue = static_cast<cublasLtEpilogue_t>(key.epilogue);
  set_attr(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue);
  if (epilogue != CUBLASLT_EPILOGUE_DEFAULT) set_attr(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, c);
  plan->a = make_layout(ab, p.a);
  plan->b = make_layout(ab, p.b);
  plan->c = make_layout(c, p.c);

  cublasLtMatmulPreference_t pref = nullptr;
  GR_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, cublasStatus_t (*)(cublasLtMatmulPreference_t)> pref_guard(
      pref, &cublasLtMatmulPreferenceDestroy);
  set_pref(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, static_cast<uint64_t>(key.workspace));
  set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.align_a);
  set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.align_b);
  set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.align_c);
  set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.align_c);
  set_pref(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, lt_reduction_scheme_mask(key.deterministic));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt_handle(), plan->desc, plan->a, plan->b, plan->c,
                                                           plan->c, pref, 1, &result, &found);
  // NOT_SUPPORTED: no algorithm for this problem; the fallback handles it.
  if (st != CUBLAS_STATUS_NOT_SUPPORTED) GR_CUBLAS_CHECK(st);
  if (st == CUBLAS_STATUS_SUCCESS && found > 0 && result.state == CUBLAS_STATUS_SUCCESS) {
    plan->algo = result.algo;
    plan->workspace = result.workspaceSize;
    plan->usable = true;
  }
  g_plans_made.fetch_add(1, std::memory_order_relaxed);
  return plan;
}

}  // namespace

bool lt_gemm(const LtGemm& g) {
  GR_CHECK(g.M > 0 && g.N > 0 && g.K > 0, "gemm: internal: an empty product given to cuBLASLt");
  GR_CHECK(g.epilogue == LtEpilogue::kNone || (g.bias != nullptr && g.beta == 0.f),
           "gemm: internal: a bias epilogue needs a bias and beta == 0");
  if (!g_cublaslt.load(std::memory_order_relaxed)) return false;
  LtPlanKey key;
  key.problem = lt_problem(g.ta, g.tb, g.M, g.N, g.K, g.lda, g.ldb, g.ldc);
  key.type_ab = data_type(g.ab);
  key.type_c = data_type(g.c);
  key.epilogue = epilogue_of(g.epilogue);
  // Lt's A is our B and its B our A (Note [Row-major GEMM on cuBLASLt]).
  key.align_a = pointer_alignment(g.B);
  key.align_b = pointer_alignment(g.A);
  key.align_c = pointer_alignment(g.C);
  key.align_bias = g.bias ? pointer_alignment(g.bias) : 0;
  key.workspace = g_workspace_limit;
  key.device = current_device();
  key.deterministic = are_deterministic_algorithms_enabled();  // Note [Deterministic cuBLASLt plans]
  PlanCache& cache = plan_cache();
  auto it = cache.find(key);
  if (it == cache.end()) {
    if (cache.size() >= kMaxPlans) cache.clear();  // shapes that never repeat: start over
    it = cache.emplace(key, make_plan(key)).first;
  }
  LtPlan& plan = *it->second;
  if (!plan.usable) return false;
  if (g.epilogue != LtEpilogue::kNone) set_attr(plan.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, g.bias);
  // The workspace is freed when this call returns, after the product is queued on the
  // current stream: the allocator hands it out again only to later work on that stream.
  Tensor workspace;
  if (plan.workspace > 0)
    workspace = empty({static_cast<int64_t>(plan.workspace)}, TensorOptions(kUInt8).device(Device(kCUDA, key.device)));
  GR_CUBLAS_CHECK(cublasLtMatmul(lt_handle(), plan.desc, &g.alpha, g.B, plan.a, g.A, plan.b, &g.beta, g.C, plan.c,
                                 g.C, plan.c, &plan.algo, workspace.defined() ? workspace.data_ptr() : nullptr,
                                 plan.workspace, current_stream()));
  return true;
}

void set_cublaslt_enabled(bool enabled) { g_cublaslt.store(enabled); }
bool cublaslt_enabled() { return g_cublaslt.load(); }
void set_lt_float32(bool enabled) { g_lt_float32.store(enabled); }
bool lt_float32() { return g_lt_float32.load(); }
size_t lt_workspace_limit() { return g_workspace_limit; }
size_t lt_plan_cache_size() { return plan_cache().size(); }
int64_t lt_plans_made() { return g_plans_made.load(); }

}  // namespace gr::cuda
