// rank_list: the one way messages name a set of ranks.
#include "distributed/store/rank_list.h"

namespace gr::distributed {

std::string rank_list(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += (i ? ", " : "") + std::to_string(ranks[i]);
    if (j >= i + 2) {
      out += "-" + std::to_string(ranks[j]);
      i = j + 1;
    } else {
      ++i;  // a pair stays "a, b"
    }
  }
  return out;
}

}  // namespace gr::distributed
