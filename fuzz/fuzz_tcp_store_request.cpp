// libFuzzer target: the TCPStore server's request parser (wire::parse_request). Besides not
// crashing, it checks the parser's contract: Complete consumes 1..size bytes that re-encode
// to exactly those bytes, and one byte fewer is Incomplete; Incomplete asks for more than
// it has; Malformed says 0. Any violation aborts (a finding).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "distributed/store/tcp_store_wire.h"

using namespace gr::distributed::wire;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Request r;
  Parse p = parse_request(data, size, r);
  switch (p.kind) {
    case Parse::Malformed:
      if (p.size != 0) std::abort();
      break;
    case Parse::Incomplete:
      if (p.size <= size) std::abort();
      break;
    case Parse::Complete: {
      if (p.size == 0 || p.size > size) std::abort();
      std::vector<uint8_t> again;
      append_request(again, r);
      if (again.size() != p.size || std::memcmp(again.data(), data, p.size) != 0) std::abort();
      Request shorter;
      Parse q = parse_request(data, p.size - 1, shorter);
      if (q.kind != Parse::Incomplete || q.size != p.size) std::abort();
      break;
    }
  }
  return 0;
}
