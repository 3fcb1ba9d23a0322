// libFuzzer target: the TCPStore server's request parser (wire::parse_request). Besides not
// crashing, it checks the parser's contract (fuzz/wire_contract.h).
#include <cstddef>
#include <cstdint>

#include "distributed/store/tcp_store_wire.h"
#include "fuzz/wire_contract.h"

using namespace gr::distributed::wire;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gr::fuzz::check_wire_contract<Request>(
      data, size, [](const uint8_t* d, size_t n, Request& r) { return parse_request(d, n, r); },
      [](std::vector<uint8_t>& out, const Request& r) { append_request(out, r); });
  return 0;
}
