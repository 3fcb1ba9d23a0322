// scaled_dot_product_attention on cuDNN's fused attention (the cuDNN frontend's sdpa and
// sdpa_backward graphs) for bfloat16/float16, operands read and written where they lie; the
// graphs cached per problem, refusals remembered. See Note [cuDNN attention] in
// attention_cudnn.h. The only file that includes the frontend (heavy headers: one TU).
#include "cuda_kernels/attention_cudnn.h"

#include <cudnn_frontend.h>

#include <cstdio>
#include <exception>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/cuda.h"
#include "core/deterministic.h"
#include "core/error.h"
#include "core/factory.h"
#include "cuda_kernels/cudnn_common.h"
#include "cuda_kernels/runtime.h"

// NVRTC is called only by the frontend's experimental SM100 engines (compiled at run time),
// never by the sdpa graphs here. Weak references keep libnvrtc out of every binary's needed
// libraries (the GPU image need not have it); unresolved, they are null and never called.
#pragma weak nvrtcCreateProgram
#pragma weak nvrtcCompileProgram
#pragma weak nvrtcDestroyProgram
#pragma weak nvrtcGetCUBIN
#pragma weak nvrtcGetCUBINSize
#pragma weak nvrtcGetProgramLog
#pragma weak nvrtcGetProgramLogSize

namespace gr::cuda::cudnn_attention {
namespace {

namespace fe = cudnn_frontend;
using Dims = std::vector<int64_t>;

enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats, kScale, kGradOut, kGradQ, kGradK, kGradV };

// One problem as cuDNN sees it: [N, H, rows, cols] dims and strides of every operand.
struct Problem {
  int64_t N = 0, H = 0;
  std::array<int64_t, 4> q{}, k{}, v{}, out{}, go{}, dq{}, dk{}, dv{};
};

// A built graph and its workspace, or (graph == null) a problem cuDNN refused.
struct Entry {
  std::shared_ptr<fe::graph::Graph> graph;
  int64_t workspace = 0;
};

// Note [cuDNN attention graph cache]
// Building a graph (heuristics, plan compilation) takes milliseconds, so each (pass, device,
// dtype, dims, strides, causal, deterministic) builds once. The scale is a pass-by-value input
// of the graph, not part of the key. Per thread, as cudnn_handle(); least recently used
// entries go past kCapacity (a model has a handful of attention shapes).
class Cache {
 public:
  static constexpr size_t kCapacity = 64;
  Entry* find(const Dims& key) {
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second.second);  // most recent first
    return &it->second.first;
  }
  Entry* insert(const Dims& key, Entry e) {
    if (map_.size() >= kCapacity) {
      map_.erase(order_.back());
      order_.pop_back();
    }
    order_.push_front(key);
    return &map_.emplace(key, std::make_pair(std::move(e), order_.begin())).first->second.first;
  }

 private:
  std::list<Dims> order_;
  std::map<Dims, std::pair<Entry, std::list<Dims>::iterator>> map_;
};

// Never destroyed, as cudnn_handle()'s handles: destroying plans at exit can run after the
// driver has gone.
Cache& cache() {
  thread_local Cache* c = new Cache;
  return *c;
}

fe::DataType_t io_type(ScalarType t) { return t == kBFloat16 ? fe::DataType_t::BFLOAT16 : fe::DataType_t::HALF; }

// The problem's cuDNN strides, or nullopt when an operand does not map (cudnn_strides) or a
// row is not 16-byte aligned.
std::optional<Problem> problem(const native::AttentionParams& p, ScalarType t, bool backward,
                               std::initializer_list<const void*> data) {
  Problem pb;
  pb.H = p.q_at.inner;
  if (pb.H <= 0 || p.B % pb.H != 0) return std::nullopt;
  pb.N = p.B / pb.H;
  struct Operand {
    const native::AttentionLayout* at;
    int64_t rows, cols;
    std::array<int64_t, 4>* strides;
  };
  std::vector<Operand> ops{{&p.q_at, p.L, p.E, &pb.q}, {&p.k_at, p.S, p.E, &pb.k}, {&p.v_at, p.S, p.Ev, &pb.v},
                           {&p.out_at, p.L, p.Ev, &pb.out}};
  if (backward) {
    ops.push_back({&p.grad_out_at, p.L, p.Ev, &pb.go});
    ops.push_back({&p.dq_at, p.L, p.E, &pb.dq});
    ops.push_back({&p.dk_at, p.S, p.E, &pb.dk});
    ops.push_back({&p.dv_at, p.S, p.Ev, &pb.dv});
  }
  auto ptr = data.begin();
  for (const Operand& o : ops) {
    auto s = cudnn_strides(*o.at, pb.N, pb.H, o.rows, o.cols);
    if (!s || !aligned(*ptr++, *s, element_size(t))) return std::nullopt;
    *o.strides = *s;
  }
  return pb;
}

std::shared_ptr<fe::graph::Tensor_attributes> operand(fe::graph::Graph& g, const char* name, Uid uid, Dims dims,
                                                      const std::array<int64_t, 4>& strides) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name(name)
                      .set_uid(uid)
                      .set_dim(std::move(dims))
                      .set_stride(Dims(strides.begin(), strides.end())));
}

std::shared_ptr<fe::graph::Tensor_attributes> stats(fe::graph::Graph& g, const Problem& pb, int64_t L) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name("Stats")
                      .set_uid(kStats)
                      .set_dim({pb.N, pb.H, L, 1})
                      .set_stride({pb.H * L, L, 1, 1})
                      .set_data_type(fe::DataType_t::FLOAT));
}

std::shared_ptr<fe::graph::Tensor_attributes> scale(fe::graph::Graph& g) {
  return g.tensor(fe::graph::Tensor_attributes()
                      .set_name("scale")
                      .set_uid(kScale)
                      .set_dim({1, 1, 1, 1})
                      .set_stride({1, 1, 1, 1})
                      .set_is_pass_by_value(true)
                      .set_data_type(fe::DataType_t::FLOAT));
}

// validate -> operation graph -> heuristics -> support check -> plans; the first step that
// fails names the refusal, printed once per problem (the problem then stays on our kernels).
Entry finish(std::shared_ptr<fe::graph::Graph> g, cudnnHandle_t h, const char* pass, const native::AttentionParams& p) {
  fe::error_t st = g->validate();
  if (st.is_good()) st = g->build_operation_graph(h);
  if (st.is_good()) st = g->create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK});
  if (st.is_good()) st = g->check_support(h);
  if (st.is_good()) st = g->build_plans(h, fe::BuildPlanPolicy_t::HEURISTICS_CHOICE);
  Entry e;
  if (st.is_good()) st = g->get_workspace_size(e.workspace);
  if (!st.is_good()) {
    std::fprintf(stderr,
                 "gradring: cuDNN attention %s refused B %lld L %lld S %lld E %lld Ev %lld%s: %s; gradring's kernel "
                 "runs it\n",
                 pass, static_cast<long long>(p.B), static_cast<long long>(p.L), static_cast<long long>(p.S),
                 static_cast<long long>(p.E), static_cast<long long>(p.Ev), p.causal ? " causal" : "",
                 st.get_message().c_str());
    return {};
  }
  e.graph = std::move(g);
  return e;
}

// A graph with operands of type t, float32 intermediates and accumulation.
std::shared_ptr<fe::graph::Graph> new_graph(ScalarType t) {
  auto g = std::make_shared<fe::graph::Graph>();
  g->set_io_data_type(io_type(t))
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  return g;
}

Entry build_forward(cudnnHandle_t h, const Problem& pb, const native::AttentionParams& p, ScalarType t) {
  auto g = new_graph(t);
  auto Q = operand(*g, "Q", kQ, {pb.N, pb.H, p.L, p.E}, pb.q);
  auto K = operand(*g, "K", kK, {pb.N, pb.H, p.S, p.E}, pb.k);
  auto V = operand(*g, "V", kV, {pb.N, pb.H, p.S, p.Ev}, pb.v);
  auto opts = fe::graph::SDPA_attributes().set_name("sdpa").set_generate_stats(true).set_attn_scale(scale(*g));
  if (p.causal) opts.set_causal_mask(true);  // top-left, as ours: Note [cuDNN attention]
  auto [O, S] = g->sdpa(Q, K, V, opts);
  O->set_output(true).set_uid(kO).set_dim({pb.N, pb.H, p.L, p.Ev}).set_stride(Dims(pb.out.begin(), pb.out.end()));
  S->set_output(true)
      .set_uid(kStats)
      .set_data_type(fe::DataType_t::FLOAT)
      .set_dim({pb.N, pb.H, p.L, 1})
      .set_stride({pb.H * p.L, p.L, 1, 1});
  return finish(std::move(g), h, "forward", p);
}

Entry build_backward(cudnnHandle_t h, const Problem& pb, const native::AttentionParams& p, ScalarType t,
                     bool deterministic) {
  auto g = new_graph(t);
  auto Q = operand(*g, "Q", kQ, {pb.N, pb.H, p.L, p.E}, pb.q);
  auto K = operand(*g, "K", kK, {pb.N, pb.H, p.S, p.E}, pb.k);
  auto V = operand(*g, "V", kV, {pb.N, pb.H, p.S, p.Ev}, pb.v);
  auto O = operand(*g, "O", kO, {pb.N, pb.H, p.L, p.Ev}, pb.out);
  auto dO = operand(*g, "dO", kGradOut, {pb.N, pb.H, p.L, p.Ev}, pb.go);
  auto opts = fe::graph::SDPA_backward_attributes().set_name("sdpa_backward").set_attn_scale(scale(*g));
  if (p.causal) opts.set_causal_mask(true);
  if (deterministic) opts.set_deterministic_algorithm(true);
  auto [dQ, dK, dV] = g->sdpa_backward(Q, K, V, O, dO, stats(*g, pb, p.L), opts);
  dQ->set_output(true).set_uid(kGradQ).set_dim({pb.N, pb.H, p.L, p.E}).set_stride(Dims(pb.dq.begin(), pb.dq.end()));
  dK->set_output(true).set_uid(kGradK).set_dim({pb.N, pb.H, p.S, p.E}).set_stride(Dims(pb.dk.begin(), pb.dk.end()));
  dV->set_output(true).set_uid(kGradV).set_dim({pb.N, pb.H, p.S, p.Ev}).set_stride(Dims(pb.dv.begin(), pb.dv.end()));
  return finish(std::move(g), h, "backward", p);
}

// The cache key: see Note [cuDNN attention graph cache].
Dims key(int pass, const Problem& pb, const native::AttentionParams& p, ScalarType t, bool deterministic) {
  Dims k{pass, current_device(), static_cast<int64_t>(t), pb.N, pb.H, p.L, p.S, p.E, p.Ev, p.causal, deterministic};
  for (const auto* s : {&pb.q, &pb.k, &pb.v, &pb.out, &pb.go, &pb.dq, &pb.dk, &pb.dv})
    k.insert(k.end(), s->begin(), s->end());
  return k;
}

// Runs a cached (or newly built) graph; false when cuDNN refuses the problem, now or before.
template <class Build>
bool run(const Dims& k, Build&& build, std::unordered_map<int64_t, void*> pack) {
  cudnnHandle_t h = cudnn_handle();  // bound to current_stream()
  Entry* e = cache().find(k);
  if (e == nullptr) {
    Entry built;
    try {
      built = build(h);
    } catch (const std::exception& x) {  // the frontend reports by error_t, but never let it escape
      std::fprintf(stderr, "gradring: cuDNN attention graph failed (%s); gradring's kernel runs it\n", x.what());
    }
    e = cache().insert(k, std::move(built));
  }
  if (!e->graph) return false;
  Tensor workspace;
  if (e->workspace > 0) {
    try {
      workspace = empty({e->workspace}, TensorOptions(kUInt8).device(Device(kCUDA, current_device())));
    } catch (const Error&) {
      return false;  // out of memory for cuDNN's workspace: our kernels need none
    }
  }
  fe::error_t st = e->graph->execute(h, pack, workspace.defined() ? workspace.data_ptr() : nullptr);
  if (!st.is_good()) {
    std::fprintf(stderr, "gradring: cuDNN attention failed to launch (%s); gradring's kernel runs it from now on\n",
                 st.get_message().c_str());
    e->graph.reset();
    return false;
  }
  detail::count_cudnn_sdp_call();
  return true;  // the workspace goes back to the allocator after the work using it is queued
}

void* mut(const void* p) { return const_cast<void*>(p); }

}  // namespace

bool forward(const void* q, const void* k, const void* v, void* out, void* lse, const native::AttentionParams& p,
             ScalarType t) {
  const std::optional<Problem> pb = problem(p, t, false, {q, k, v, out});
  if (!pb) return false;
  float s = static_cast<float>(p.scale);
  return run(key(0, *pb, p, t, false), [&](cudnnHandle_t h) { return build_forward(h, *pb, p, t); },
             {{kQ, mut(q)}, {kK, mut(k)}, {kV, mut(v)}, {kO, out}, {kStats, lse}, {kScale, &s}});
}

bool backward(const void* grad_out, const void* q, const void* k, const void* v, const void* out, const void* lse,
              void* dq, void* dk, void* dv, const native::AttentionParams& p, ScalarType t) {
  const std::optional<Problem> pb = problem(p, t, true, {q, k, v, out, grad_out, dq, dk, dv});
  if (!pb) return false;
  const bool deterministic = are_deterministic_algorithms_enabled();
  float s = static_cast<float>(p.scale);
  return run(key(1, *pb, p, t, deterministic),
             [&](cudnnHandle_t h) { return build_backward(h, *pb, p, t, deterministic); },
             {{kQ, mut(q)},
              {kK, mut(k)},
              {kV, mut(v)},
              {kO, mut(out)},
              {kGradOut, mut(grad_out)},
              {kStats, mut(lse)},
              {kGradQ, dq},
              {kGradK, dk},
              {kGradV, dv},
              {kScale, &s}});
}

}  // namespace gr::cuda::cudnn_attention
