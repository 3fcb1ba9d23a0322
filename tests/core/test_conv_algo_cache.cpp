// The bookkeeping of cuDNN algorithm selection (cuda_kernels/conv2d_algo_cache.h), which needs
// no device: keys equal exactly for the same problem on the same device and pass, the cache
// keeps its first answer per key, and the picker walks a preference list under the workspace
// limit, lowering its cap after a failed allocation.
#include <doctest/doctest.h>

#include <thread>
#include <utility>
#include <vector>

#include "cuda_kernels/conv2d_algo_cache.h"

using namespace gr;
using namespace gr::cuda;

namespace {
native::Conv2dArgs args() {
  native::Conv2dArgs a;
  a.N = 8, a.C_in = 16, a.H = 32, a.W = 30, a.C_out = 32, a.kH = 3, a.kW = 3, a.H_out = 16, a.W_out = 15;
  a.stride_h = 2, a.stride_w = 2, a.pad_h = 1, a.pad_w = 1, a.dil_h = 1, a.dil_w = 1, a.groups = 2;
  return a;
}
}  // namespace

TEST_CASE("conv algorithm keys: equal for the same problem, different when anything that matters differs") {
  const native::Conv2dArgs a = args();
  const ConvAlgoKey k = conv_algo_key(a, kFloat32, 0, ConvPass::kForward);
  ConvAlgoKeyHash hash;
  CHECK(k == conv_algo_key(a, kFloat32, 0, ConvPass::kForward));
  CHECK(hash(k) == hash(conv_algo_key(a, kFloat32, 0, ConvPass::kForward)));

  std::vector<ConvAlgoKey> others;
  others.push_back(conv_algo_key(a, kFloat64, 0, ConvPass::kForward));
  others.push_back(conv_algo_key(a, kFloat32, 1, ConvPass::kForward));
  others.push_back(conv_algo_key(a, kFloat32, 0, ConvPass::kBackwardData));
  others.push_back(conv_algo_key(a, kFloat32, 0, ConvPass::kBackwardFilter));
  others.push_back(conv_algo_key(a, kFloat32, 0, ConvPass::kForward, /*deterministic=*/true));
  int64_t native::Conv2dArgs::*fields[] = {
      &native::Conv2dArgs::N,     &native::Conv2dArgs::C_in,     &native::Conv2dArgs::H,
      &native::Conv2dArgs::W,     &native::Conv2dArgs::C_out,    &native::Conv2dArgs::kH,
      &native::Conv2dArgs::kW,    &native::Conv2dArgs::stride_h, &native::Conv2dArgs::stride_w,
      &native::Conv2dArgs::pad_h, &native::Conv2dArgs::pad_w,    &native::Conv2dArgs::dil_h,
      &native::Conv2dArgs::dil_w, &native::Conv2dArgs::groups};
  for (auto f : fields) {
    native::Conv2dArgs b = a;
    b.*f += 1;
    others.push_back(conv_algo_key(b, kFloat32, 0, ConvPass::kForward));
  }
  // Swapping two dims must not collide either (height and width, padding h and w).
  native::Conv2dArgs swapped = a;
  std::swap(swapped.H, swapped.W);
  others.push_back(conv_algo_key(swapped, kFloat32, 0, ConvPass::kForward));
  for (size_t i = 0; i < others.size(); ++i) {
    CAPTURE(i);
    CHECK_FALSE(others[i] == k);
    for (size_t j = i + 1; j < others.size(); ++j) CHECK_FALSE(others[i] == others[j]);
  }
  // The hash spreads them (a collision is legal but would make the map slow; none here).
  for (const ConvAlgoKey& o : others) CHECK(hash(o) != hash(k));
}

TEST_CASE("conv algorithm cache: one list per key, the first insert wins, clear empties it") {
  ConvAlgoCache cache;
  const ConvAlgoKey fwd = conv_algo_key(args(), kFloat32, 0, ConvPass::kForward);
  const ConvAlgoKey bwd = conv_algo_key(args(), kFloat32, 0, ConvPass::kBackwardData);
  CHECK_FALSE(cache.find(fwd).has_value());
  const ConvAlgoList first = {{1, 0, 100}, {0, 0, 0}};
  CHECK(cache.insert(fwd, first).size() == 2);
  // A second search of the same problem (another thread got there first) keeps the first answer.
  const ConvAlgoList kept = cache.insert(fwd, {{7, 0, 5}});
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].algo == 1);
  REQUIRE(cache.find(fwd).has_value());
  CHECK(cache.find(fwd)->at(0).workspace == 100);
  CHECK_FALSE(cache.find(bwd).has_value());
  cache.insert(bwd, {});  // cuDNN supports nothing: remembered as an empty list
  REQUIRE(cache.find(bwd).has_value());
  CHECK(cache.find(bwd)->empty());
  CHECK(cache.size() == 2);

  // Concurrent inserts of one key: every thread sees the same list.
  ConvAlgoCache shared;
  std::vector<int> seen(8, -1);
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] { seen[static_cast<size_t>(i)] = shared.insert(fwd, {{i, 0, 0}}).at(0).algo; });
  for (auto& t : threads) t.join();
  for (int s : seen) CHECK(s == seen[0]);
  CHECK(shared.size() == 1);
  cache.clear();
  CHECK(cache.size() == 0);
}

TEST_CASE("conv algorithm picker: preference order within the limit, less workspace after a failed allocation") {
  // Preference order as cuDNN ranks them: fast but hungry first, no-workspace last.
  const ConvAlgoList list = {{6, 0, 1000}, {1, 0, 50}, {5, 0, 400}, {2, 0, 30}, {0, 0, 0}};
  {
    ConvAlgoPicker p(list, 10000);
    CHECK(p.next()->algo == 6);  // everything fits: cuDNN's first choice
  }
  {
    ConvAlgoPicker p(list, 500);  // over the limit: skipped
    CHECK(p.next()->algo == 1);
    CHECK(p.next()->algo == 5);
    CHECK(p.next()->algo == 2);
    CHECK(p.next()->algo == 0);
    CHECK(p.next() == nullptr);
  }
  {
    ConvAlgoPicker p(list, 10000);
    const ConvAlgoCandidate* c = p.next();
    REQUIRE(c->algo == 6);
    p.allocation_failed(c->workspace);  // 1000 bytes failed: only < 1000 from now on
    c = p.next();
    REQUIRE(c->algo == 1);
    p.allocation_failed(c->workspace);  // 50 failed: algorithm 5 (400) is not tried
    CHECK(p.next()->algo == 2);
    p.allocation_failed(30);
    CHECK(p.next()->algo == 0);
    CHECK(p.next() == nullptr);
  }
  {
    ConvAlgoPicker p(list, 0);  // a zero limit leaves the algorithms that need no workspace
    CHECK(p.next()->algo == 0);
    CHECK(p.next() == nullptr);
  }
  ConvAlgoList none;
  ConvAlgoPicker empty(none, 1 << 20);
  CHECK(empty.next() == nullptr);
}

TEST_CASE("conv algorithms under deterministic algorithms: deterministic ones only, never chosen by timing") {
  CHECK(conv_algo_allowed(/*algo_is_deterministic=*/true, /*deterministic=*/true));
  CHECK_FALSE(conv_algo_allowed(false, true));  // e.g. cuDNN's BWD_FILTER_ALGO_0 (atomics)
  CHECK(conv_algo_allowed(false, false));
  CHECK(conv_algo_allowed(true, false));
  CHECK(conv_algos_timed(/*benchmark=*/true, /*deterministic=*/false));
  CHECK_FALSE(conv_algos_timed(true, true));
  CHECK_FALSE(conv_algos_timed(false, false));
  // A list searched under the switch is cached apart from the default one.
  ConvAlgoCache cache;
  const ConvAlgoKey plain = conv_algo_key(args(), kFloat32, 0, ConvPass::kBackwardFilter);
  const ConvAlgoKey det = conv_algo_key(args(), kFloat32, 0, ConvPass::kBackwardFilter, true);
  cache.insert(plain, {{0, 0, 0}});
  CHECK_FALSE(cache.find(det).has_value());
  cache.insert(det, {{1, 0, 0}});
  CHECK(cache.find(det)->front().algo == 1);
  CHECK(cache.find(plain)->front().algo == 0);
}
