// How gradring's messages name a set of ranks (the launcher, the DETAIL checker,
// gradring-flight): "rank 3", "ranks 0, 1", "ranks 0, 2-5" (runs of three or more as a range).
#pragma once

#include <string>
#include <vector>

namespace gr::distributed {

// `ranks` in increasing order (as the callers keep them).
std::string rank_list(const std::vector<int>& ranks);

}  // namespace gr::distributed
