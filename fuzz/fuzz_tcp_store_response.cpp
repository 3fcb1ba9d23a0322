// libFuzzer target: the TCPStore client's response parser (wire::parse_response), what a
// client reads from whatever answers on the server's port. The first input byte picks the
// request the response answers. Besides not crashing, the parser's contract: Complete
// consumes 1..size bytes that re-encode to exactly those bytes (so nothing is accepted that
// a server could not have meant), and one byte fewer is Incomplete; Incomplete asks for
// more than it has; Malformed says 0. Any violation aborts (a finding).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "distributed/store/tcp_store_wire.h"

using namespace gr::distributed::wire;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto op = static_cast<Op>(1 + data[0] % static_cast<uint8_t>(Op::Join));
  ++data;
  --size;
  Response r;
  Parse p = parse_response(data, size, op, r);
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
      append_response(again, op, r);
      if (again.size() != p.size || std::memcmp(again.data(), data, p.size) != 0) std::abort();
      Response shorter;
      Parse q = parse_response(data, p.size - 1, op, shorter);
      if (q.kind != Parse::Incomplete || q.size != p.size) std::abort();
      break;
    }
  }
  return 0;
}
