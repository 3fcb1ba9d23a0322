// The bookkeeping of cuDNN algorithm selection for conv2d, in plain C++ (no CUDA headers, so
// the CPU test suite checks it): the cache key (one convolution problem on one device, per
// pass), the cache (each problem is searched once per process; the first answer stays), the
// walk over a preference list under a workspace cap that lowers after a failed allocation, and
// what deterministic algorithms allow (Note [Deterministic algorithms] in core/deterministic.h).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/native/conv2d.h"

namespace gr::cuda {

enum class ConvPass : int8_t { kForward, kBackwardData, kBackwardFilter };

// Everything that decides which algorithms apply and how fast they are.
struct ConvAlgoKey {
  // N, C_in, H, W, C_out, kH, kW, stride h/w, padding h/w, dilation h/w, groups
  std::array<int64_t, 14> dims{};
  ScalarType dtype = kFloat32;
  int device = 0;
  ConvPass pass = ConvPass::kForward;
  bool deterministic = false;  // searched under deterministic algorithms: another list
  bool operator==(const ConvAlgoKey&) const = default;
};

inline ConvAlgoKey conv_algo_key(const native::Conv2dArgs& a, ScalarType dtype, int device, ConvPass pass,
                                 bool deterministic = false) {
  ConvAlgoKey k;
  k.dims = {a.N,        a.C_in,     a.H,     a.W,     a.C_out, a.kH,    a.kW,
            a.stride_h, a.stride_w, a.pad_h, a.pad_w, a.dil_h, a.dil_w, a.groups};
  k.dtype = dtype;
  k.device = device;
  k.pass = pass;
  k.deterministic = deterministic;
  return k;
}

struct ConvAlgoKeyHash {
  size_t operator()(const ConvAlgoKey& k) const {
    size_t h = std::hash<int>()((k.device * 4 + static_cast<int>(k.pass)) * 2 + (k.deterministic ? 1 : 0));
    auto mix = [&h](uint64_t v) { h ^= std::hash<uint64_t>()(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    mix(static_cast<uint64_t>(k.dtype));
    for (int64_t d : k.dims) mix(static_cast<uint64_t>(d));
    return h;
  }
};

// One usable algorithm: cuDNN's enum value, the math type it was timed or ranked with, and
// the workspace it needs (cudnnGet*WorkspaceSize). A problem's list is in preference order;
// an empty list means cuDNN supports none of its algorithms for it.
struct ConvAlgoCandidate {
  int algo = 0;
  int math_type = 0;
  size_t workspace = 0;
};
using ConvAlgoList = std::vector<ConvAlgoCandidate>;

// Under deterministic algorithms a problem's list holds only the algorithms cuDNN rates
// deterministic (no atomics), in the heuristics' order: timing them (benchmark mode) could
// pick another one in another run, and another algorithm gives other bits.
inline bool conv_algo_allowed(bool algo_is_deterministic, bool deterministic) {
  return algo_is_deterministic || !deterministic;
}
inline bool conv_algos_timed(bool benchmark, bool deterministic) { return benchmark && !deterministic; }

// Thread-safe map from problem to its list. insert() keeps the first list stored for a key:
// two threads that searched the same problem at once agree on one answer.
class ConvAlgoCache {
 public:
  std::optional<ConvAlgoList> find(const ConvAlgoKey& key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(key);
    if (it == map_.end()) return std::nullopt;
    return it->second;
  }
  ConvAlgoList insert(const ConvAlgoKey& key, ConvAlgoList list) {
    std::lock_guard<std::mutex> lock(mutex_);
    return map_.try_emplace(key, std::move(list)).first->second;
  }
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return map_.size();
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    map_.clear();
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<ConvAlgoKey, ConvAlgoList, ConvAlgoKeyHash> map_;
};

// Walks a preference list: next() returns the first remaining candidate whose workspace is
// within the cap (the workspace limit at first), or nullptr. After the workspace of a
// candidate could not be allocated, allocation_failed(bytes) lowers the cap below `bytes`,
// so only algorithms needing less workspace are tried after it.
class ConvAlgoPicker {
 public:
  ConvAlgoPicker(const ConvAlgoList& list, size_t workspace_limit) : list_(list), cap_(workspace_limit) {}
  const ConvAlgoCandidate* next() {
    while (pos_ < list_.size()) {
      const ConvAlgoCandidate& c = list_[pos_++];
      if (c.workspace <= cap_) return &c;
    }
    return nullptr;
  }
  void allocation_failed(size_t bytes) {
    const size_t below = bytes > 0 ? bytes - 1 : 0;
    cap_ = below < cap_ ? below : cap_;
  }

 private:
  const ConvAlgoList& list_;
  size_t cap_;
  size_t pos_ = 0;
};

}  // namespace gr::cuda
