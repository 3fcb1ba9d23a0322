// libFuzzer target: the TCPStore client's response parser (wire::parse_response), what a
// client reads from whatever answers on the server's port. The first input byte picks the
// request the response answers. Besides not crashing, it checks the parser's contract
// (fuzz/wire_contract.h): a Complete response re-encodes to exactly its bytes, so nothing is
// accepted that a server could not have meant.
#include <cstddef>
#include <cstdint>

#include "distributed/store/tcp_store_wire.h"
#include "fuzz/wire_contract.h"

using namespace gr::distributed::wire;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto op = static_cast<Op>(1 + data[0] % static_cast<uint8_t>(Op::Join));
  gr::fuzz::check_wire_contract<Response>(
      data + 1, size - 1, [op](const uint8_t* d, size_t n, Response& r) { return parse_response(d, n, op, r); },
      [op](std::vector<uint8_t>& out, const Response& r) { append_response(out, op, r); });
  return 0;
}
