// init_process_group("nccl") in a build without the NCCL backend says what is missing
// (with NCCL the tests in tests/nccl/ cover the backend itself).
#include <algorithm>

#include "distributed/backends/init.h"
#include "test_util.h"

using namespace gr::distributed;

TEST_CASE("init_process_group(\"nccl\") in a build without NCCL names what the build needs") {
  const std::vector<std::string> names = registered_backends();
  if (std::find(names.begin(), names.end(), "nccl") != names.end()) return;  // built with NCCL
  InitOptions o;
  o.backend = "nccl";
  o.rank = 0;
  o.world_size = 1;
  CHECK_THROWS_WITH_AS(init_process_group(o), doctest::Contains("backend 'nccl' is not in this build"), gr::Error);
}
