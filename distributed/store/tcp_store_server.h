// TCPStoreServer: the key-value server behind TCPStore (internal). One thread runs a poll()
// loop over the listening socket, a wake-up pipe and every client; get()/wait() requests
// are parked until their keys are set or their deadline passes. A client that sends
// anything malformed (unknown request type, a length over the limits, a truncated message
// followed by a disconnect) is dropped without disturbing the others.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "distributed/store/net_util.h"
#include "distributed/store/store.h"

namespace gr::distributed {

class TCPStoreServer {
 public:
  // Listens on every interface at `port` (0 = a free port) and starts serving.
  explicit TCPStoreServer(int port);
  // Stops the serving thread (woken through the pipe) and closes every connection.
  ~TCPStoreServer();
  TCPStoreServer(const TCPStoreServer&) = delete;
  TCPStoreServer& operator=(const TCPStoreServer&) = delete;

  int port() const { return port_; }
  // Waits until `count` TCPStore objects have joined (each sends one JOIN when constructed)
  // or `timeout` passes (0 = no limit); returns how many joined.
  int64_t wait_for_joins(int64_t count, Milliseconds timeout);

  // Called by the serving thread for each JOIN; returns how many joined so far.
  int64_t on_join();

 private:
  void serve();

  Socket listener_;
  int port_ = 0;
  Socket wake_read_, wake_write_;
  std::atomic<bool> stop_{false};
  std::mutex join_mutex_;
  std::condition_variable join_cv_;
  int64_t joined_ = 0;
  std::thread thread_;
};

}  // namespace gr::distributed
