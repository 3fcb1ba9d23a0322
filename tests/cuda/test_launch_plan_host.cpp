// Host tests of Note [Split channel reductions] (suite "cuda_host", no device needed): every
// value of every channel falls in exactly one chunk, no chunk is empty, chunks respect the
// minimum size, and the block count approaches the target; the seed CNN's shapes at batch 512.
#include "cuda_kernels/launch_plan.h"
#include "parity.h"

using gr::cuda::ChannelSplit;
using gr::cuda::split_channels;

TEST_SUITE("cuda_host") {
  TEST_CASE("split_channels covers each channel with non-empty chunks near the target block count") {
    for (int64_t C : {1, 3, 32, 64, 1000, 100000})
      for (int64_t count : {1, 7, 4095, 4096, 4097, 61952, 346112, 10000000})
        for (int64_t target : {1, 132, 1056, 4224}) {
          INFO("C " << C << " count " << count << " target " << target);
          const ChannelSplit s = split_channels(C, count, target, 4096);
          REQUIRE(s.splits >= 1);
          CHECK(s.chunk >= 1);
          CHECK(s.splits * s.chunk >= count);         // every value is in a chunk
          CHECK((s.splits - 1) * s.chunk < count);    // the last chunk is not empty
          CHECK((s.splits == 1 || s.chunk >= 4096));  // chunks keep the minimum size
          // Never fewer blocks than wanted unless the minimum chunk forbids it.
          const int64_t wanted = (target + C - 1) / C;
          CHECK((s.splits >= wanted || s.splits >= count / 4096));
          CHECK(s.splits <= std::max<int64_t>(1, wanted));
        }
    // The seed CNN at batch 512 on an H200 (132 SMs, eight blocks each): bn1 [512, 32, 26, 26]
    // and bn2 [512, 64, 11, 11].
    const ChannelSplit bn1 = split_channels(32, 512 * 676, 1056, 4096), bn2 = split_channels(64, 512 * 121, 1056, 4096);
    CHECK(bn1.splits == 33);
    CHECK(32 * bn1.splits == 1056);
    CHECK(bn2.splits == 15);
    CHECK(split_channels(0, 10, 100, 1).splits == 0);
    CHECK(split_channels(5, 0, 100, 1).splits == 0);
  }
}
