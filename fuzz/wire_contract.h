// The contract of the TCPStore wire parsers (distributed/store/tcp_store_wire.h), checked by
// fuzz_tcp_store_request and fuzz_tcp_store_response on every input: Complete consumes
// 1..size bytes that re-encode to exactly those bytes, and one byte fewer is Incomplete
// asking for exactly that many; Incomplete asks for more than it has; Malformed says 0.
// Any violation aborts (a finding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "distributed/store/tcp_store_wire.h"

namespace gr::fuzz {

// parse(data, size, message) -> Parse; encode(out, message) appends the encoding.
template <class Message, class ParseFn, class EncodeFn>
void check_wire_contract(const uint8_t* data, size_t size, ParseFn parse, EncodeFn encode) {
  using distributed::wire::Parse;
  Message m;
  Parse p = parse(data, size, m);
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
      encode(again, m);
      if (again.size() != p.size || std::memcmp(again.data(), data, p.size) != 0) std::abort();
      Message shorter;
      Parse q = parse(data, p.size - 1, shorter);
      if (q.kind != Parse::Incomplete || q.size != p.size) std::abort();
      break;
    }
  }
}

}  // namespace gr::fuzz
