// The frame of one checkpoint (Note [Non-reentrant checkpoint]): its holders, the rerun in
// backward under the forward's random and autocast state, and the checks of what it saved.
#include "nn/utils/checkpoint.h"

#include <cxxabi.h>

#include <atomic>
#include <cstdlib>
#include <sstream>
#include <unordered_map>

#include "autograd/autocast.h"
#include "autograd/engine.h"
#include "core/generator.h"

namespace gr::utils {
namespace detail {

namespace {

// Thrown by the rerun's pack hook once every holder is filled (early_stop); caught by the
// frame. Not a gr::Error, so that a function catching those does not swallow it.
struct StopRecomputation {};

// Shape, dtype and device of a saved tensor: the default determinism check.
struct Meta {
  std::vector<int64_t> sizes;
  ScalarType dtype = kFloat32;
  Device device;
  bool operator==(const Meta&) const = default;
};
Meta meta_of(const Tensor& t) { return {t.sizes().vec(), t.scalar_type(), t.device()}; }
std::string to_string(const Meta& m) {
  std::ostringstream out;
  out << "{shape: " << IntArrayRef(m.sizes) << ", dtype: " << m.dtype << ", device: " << m.device << "}";
  return out.str();
}

// Ids for unpacks outside any backward pass, each its own rerun (below -1, so never a
// backward pass's id).
int64_t outside_backward_id() {
  static std::atomic<int64_t> next{-2};
  return next.fetch_sub(1, std::memory_order_relaxed);
}

// Autocast's state of one device type, to run the rerun under the forward's.
struct AutocastState {
  DeviceType device_type;
  bool enabled;
  ScalarType dtype;
  static AutocastState of(DeviceType d) { return {d, autocast::is_autocast_enabled(d), autocast::get_autocast_dtype(d)}; }
};

}  // namespace

class CheckpointFrame : public std::enable_shared_from_this<CheckpointFrame> {
 public:
  CheckpointFrame(const CheckpointOptions& o, std::string name, MakeRerun make_rerun)
      : name_(std::move(name)),
        make_rerun_(std::move(make_rerun)),
        preserve_rng_state_(o.preserve_rng_state()),
        early_stop_(o.early_stop()),
        check_metadata_(o.determinism_check() == "default"),
        rng_(default_generator().state()),
        autocast_cpu_(AutocastState::of(kCPU)),
        autocast_cuda_(AutocastState::of(kCUDA)),
        autocast_cache_(autocast::is_autocast_cache_enabled()) {}

  // The forward's pack hook: an empty holder and the tensor's metadata.
  std::any pack(const Tensor& x) {
    auto holder = std::make_shared<Holder>();
    holders_.push_back(holder);
    metas_.push_back(meta_of(x));
    return holder;
  }

  // The forward's unpack hook: the holder's tensor, rerunning the function first if this
  // backward pass has not yet.
  Tensor unpack(const std::any& packed) {
    const auto holder = std::any_cast<std::shared_ptr<Holder>>(packed);
    const int64_t task = autograd::current_graph_task_id();
    const int64_t gid = task >= 0 ? task : outside_backward_id();
    if (!passes_[gid].done) {
      rerun(gid);
      passes_[gid].done = true;
      check_rerun(gid);
      // What the pass's nodes did not take (they did not run, or retain_graph kept them) goes
      // when the pass ends.
      if (task >= 0)
        autograd::queue_callback([weak = weak_from_this(), gid] {
          if (auto frame = weak.lock()) frame->forget(gid);
        });
    }
    auto it = holder->recomputed.find(gid);
    GR_CHECK(it != holder->recomputed.end(), "checkpoint of ", name_,
             ": a saved tensor was not recomputed (internal error: please report it)");
    Tensor out = it->second;
    if (task < 0) forget(gid);
    return out;
  }

  void forward_completed() { forward_completed_ = true; }
  const std::string& name() const { return name_; }

 private:
  struct Holder {
    std::unordered_map<int64_t, Tensor> recomputed;  // per backward pass
  };
  struct Pass {
    size_t saved = 0;  // tensors the rerun saved so far
    bool done = false;
    bool ignore_count = false;  // a backward inside the forward, without early stop
  };

  // The rerun's pack hook: the k-th saved tensor into the k-th holder.
  std::any pack_rerun(int64_t gid, const Tensor& x) {
    Tensor d = x.detach();
    Pass& pass = passes_[gid];
    const size_t k = pass.saved++;
    if (k >= holders_.size()) {
      if (!early_stop_ && !forward_completed_) {  // PyTorch's rule 6: backward inside the forward
        pass.ignore_count = true;
        return d;
      }
      GR_ERROR("checkpoint of ", name_, ": trying to save more tensors during recomputation than during the original ",
               "forward pass (", holders_.size(), "). The function must do the same work when backward reruns it.");
    }
    if (auto holder = holders_[k].lock()) holder->recomputed[gid] = d;  // dead: its node is gone
    if (early_stop_ && pass.saved == holders_.size()) throw StopRecomputation{};
    return d;
  }

  void rerun(int64_t gid) {
    passes_[gid] = Pass{};  // a rerun that failed before starts over
    // The arguments first: unpacking them may rerun an enclosing checkpoint.
    std::function<void()> run;
    try {
      run = make_rerun_();
      struct RngFork {  // the forward's random state for the rerun, the current one after
        bool on;
        GeneratorState outside = default_generator().state();
        explicit RngFork(bool preserve, const GeneratorState& forward) : on(preserve) {
          if (on) default_generator().set_state(forward);
        }
        ~RngFork() {
          if (on) default_generator().set_state(outside);
        }
      } fork(preserve_rng_state_, rng_);
      // Backward runs with autocast off (the engine's guard); the rerun as the forward did.
      autocast::AutocastGuard amp_cpu(kCPU, autocast_cpu_.dtype, autocast_cpu_.enabled, autocast_cache_);
      autocast::AutocastGuard amp_cuda(kCUDA, autocast_cuda_.dtype, autocast_cuda_.enabled, autocast_cache_);
      AutoGradMode grad_mode(true);
      autograd::graph::SavedTensorsHooks hooks([this, gid](const Tensor& x) { return pack_rerun(gid, x); },
                                               [](const std::any& d) { return std::any_cast<Tensor>(d); });
      run();
    } catch (const StopRecomputation&) {
    } catch (const Error& e) {
      if (std::string(e.message()).rfind("checkpoint of ", 0) == 0) throw;
      throw Error("checkpoint of " + name_ + ": rerunning the function in backward failed: " + e.message(), __FILE__,
                  __LINE__);
    }
  }

  void check_rerun(int64_t gid) {
    const Pass& pass = passes_[gid];
    if (pass.ignore_count) return;
    GR_CHECK(pass.saved == holders_.size(), "checkpoint of ", name_,
             ": a different number of tensors was saved during the original forward and recomputation.\n"
             "Number of tensors saved during forward: ", holders_.size(),
             "\nNumber of tensors saved during recomputation: ", pass.saved,
             ".\nThe function must do the same work when backward reruns it.");
    if (!check_metadata_) return;
    std::string mismatched;
    for (size_t k = 0; k < holders_.size(); ++k) {
      auto holder = holders_[k].lock();
      if (!holder) continue;
      const Meta now = meta_of(holder->recomputed.at(gid));
      if (now == metas_[k]) continue;
      mismatched += "tensor at position " + std::to_string(k) + ":\nsaved metadata: " + to_string(metas_[k]) +
                    "\nrecomputed metadata: " + to_string(now) + "\n";
    }
    GR_CHECK(mismatched.empty(), "checkpoint of ", name_,
             ": recomputed values for the following tensors have different metadata than during the forward "
             "pass.\n", mismatched,
             "The function must do the same work when backward reruns it (or pass determinism_check(\"none\")).");
  }

  void forget(int64_t gid) {
    passes_.erase(gid);
    for (const auto& weak : holders_)
      if (auto holder = weak.lock()) holder->recomputed.erase(gid);
  }

  const std::string name_;
  MakeRerun make_rerun_;
  const bool preserve_rng_state_, early_stop_, check_metadata_;
  const GeneratorState rng_;
  const AutocastState autocast_cpu_, autocast_cuda_;
  const bool autocast_cache_;
  bool forward_completed_ = false;
  std::vector<std::weak_ptr<Holder>> holders_;  // weak: see Note [Non-reentrant checkpoint]
  std::vector<Meta> metas_;
  std::unordered_map<int64_t, Pass> passes_;
};

CheckpointScope::CheckpointScope(const CheckpointOptions& options, std::string default_name, MakeRerun make_rerun) {
  GR_CHECK(!options.use_reentrant(), "checkpoint: use_reentrant=true is not supported: gradring has only the ",
           "non-reentrant checkpoint (PyTorch's recommended variant), which is what use_reentrant=false selects");
  GR_CHECK(options.determinism_check() == "default" || options.determinism_check() == "none",
           "checkpoint: determinism_check should be one of ['default', 'none'], but got ",
           options.determinism_check());
  frame_ = std::make_shared<CheckpointFrame>(options, options.name().empty() ? std::move(default_name) : options.name(),
                                             std::move(make_rerun));
  // The hooks hold the frame: it lives as long as a saved tensor of the block does.
  hooks_.emplace([frame = frame_](const Tensor& x) { return frame->pack(x); },
                 [frame = frame_](const std::any& packed) { return frame->unpack(packed); });
}

CheckpointScope::~CheckpointScope() = default;

void CheckpointScope::forward_completed() { frame_->forward_completed(); }

std::string callable_name(const std::type_info& type) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : type.name();
  std::free(demangled);
  return name;
}

}  // namespace detail

Tensor checkpoint_sequential(const nn::Sequential& functions, int64_t segments, const Tensor& input,
                             const CheckpointOptions& options) {
  const auto n = static_cast<int64_t>(functions->size());
  GR_CHECK(segments >= 1 && segments <= n, "checkpoint_sequential: segments must be between 1 and the number of ",
           "modules (", n, "), got ", segments);
  const int64_t size = n / segments;
  const std::string base = options.name().empty() ? std::string("Sequential") : options.name();
  std::shared_ptr<nn::SequentialImpl> seq = functions.ptr();
  Tensor x = input;
  int64_t start = 0;
  for (int64_t k = 0; k + 1 < segments; ++k, start += size) {
    const auto begin = static_cast<size_t>(start), end = static_cast<size_t>(start + size);
    CheckpointOptions segment = options;
    segment.name(base + " segment " + std::to_string(k) + " (modules " + std::to_string(begin) + ".." +
                 std::to_string(end - 1) + ")");
    x = checkpoint(segment, [seq, begin, end](const Tensor& h) { return seq->forward_range(h, begin, end); }, x);
  }
  return seq->forward_range(x, static_cast<size_t>(start), static_cast<size_t>(n));
}

}  // namespace gr::utils
