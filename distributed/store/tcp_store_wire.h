// The TCPStore wire protocol (internal to tcp_store*.cpp). A request is one type byte and
// its arguments; a response is one status byte and its payload. Integers are little-endian
// 64-bit; a byte string is its u64 length then its bytes; a key list is a u64 count then
// the keys. Parsers work on partial input: they say how many bytes they need before trying
// again, and reject unknown types and lengths above the limits before anything is
// allocated.
//
//   SET      key value              -> OK
//   GET      key timeout_ms         -> OK value | TIMEOUT missing-keys   (parked until set)
//   ADD      key i64                -> OK i64
//   CSET     key expected desired   -> OK value-after
//   CHECK    keys                   -> OK u8
//   WAIT     keys timeout_ms        -> OK | TIMEOUT missing-keys         (parked until set)
//   DELETE   key                    -> OK u8
//   NUMKEYS                         -> OK i64
//   JOIN                            -> OK i64 (how many TCPStore objects joined so far)
// Any request may get ERROR message instead (e.g. add() on a non-integer value). The u8 of
// CHECK and DELETE is 0 or 1; TIMEOUT answers only GET and WAIT: parse_response calls any
// other response malformed, so that a client never acts on bytes no server would send.
// timeout_ms 0 means no limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "distributed/store/store.h"

namespace gr::distributed::wire {

enum class Op : uint8_t { Set = 1, Get, Add, CompareSet, Check, Wait, Delete, NumKeys, Join };
enum class Status : uint8_t { Ok = 0, Timeout = 1, Error = 2 };

struct Request {
  Op op = Op::Set;
  std::vector<std::string> keys;  // one key, or the keys of check/wait
  Bytes value;                    // set's value, compare_set's expected
  Bytes desired;                  // compare_set's desired
  int64_t number = 0;             // add's delta, get/wait's timeout in ms
};

struct Response {
  Status status = Status::Ok;
  Bytes value;                       // get, compare_set
  int64_t number = 0;                // add, check, delete, num_keys, join
  std::vector<std::string> missing;  // Timeout
  std::string error;                 // Error
};

// Outcome of parsing the front of a buffer.
struct Parse {
  enum Kind { Complete, Incomplete, Malformed } kind;
  // Complete: bytes consumed. Incomplete: total bytes needed before parsing can progress.
  size_t size;
};

void append_request(std::vector<uint8_t>& out, const Request& r);
Parse parse_request(const uint8_t* data, size_t size, Request& out);

void append_response(std::vector<uint8_t>& out, Op op, const Response& r);
Parse parse_response(const uint8_t* data, size_t size, Op op, Response& out);

const char* op_name(Op op);

}  // namespace gr::distributed::wire
