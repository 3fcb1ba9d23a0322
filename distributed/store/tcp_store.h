// TCPStore: the Store of multi-process and multi-node jobs (like c10d's TCPStore). One
// process (rank 0, or the launcher) runs the server, a thread serving every client from one
// poll() loop; every process, the server's included, talks to it through a client
// connection. Blocking get()/wait() are parked on the server and answered when the key is
// set, or with a timeout, so nobody polls. See tcp_store_wire.h for the protocol.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "distributed/store/socket.h"
#include "distributed/store/store.h"

namespace gr::distributed {

class TCPStoreServer;
namespace wire {
struct Request;
struct Response;
}  // namespace wire

struct TCPStoreOptions {
  // Run the server in this process (listening on every interface at `port`; port 0 picks a
  // free port, see TCPStore::port()).
  bool is_server = false;
  // How many TCPStore objects (the server's own included) make up the job. With
  // wait_for_workers the server's constructor returns only once that many have connected.
  std::optional<int> world_size;
  // The store's timeout(): for connecting, and for get()/wait() without an explicit one.
  // Zero means no limit for get()/wait().
  Milliseconds timeout = kDefaultStoreTimeout;
  bool wait_for_workers = true;
};

class TCPStore : public Store {
 public:
  // Clients retry connecting until options.timeout (the server may start later), then throw
  // an error naming host:port and the time waited.
  TCPStore(std::string host, int port, TCPStoreOptions options = {});
  // The server stops its thread promptly; parked clients then see their connection close.
  ~TCPStore() override;

  void set(const std::string& key, const Bytes& value) override;
  Bytes get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t delta) override;
  // A missing key with a non-empty `expected` stays missing, and an empty value is returned.
  Bytes compare_set(const std::string& key, const Bytes& expected, const Bytes& desired) override;
  bool check(const std::vector<std::string>& keys) override;
  using Store::wait;
  void wait(const std::vector<std::string>& keys, Milliseconds timeout) override;
  bool delete_key(const std::string& key) override;
  int64_t num_keys() override;
  using Store::set;

  const std::string& host() const { return host_; }
  // The server's port (the one picked when constructed with port 0).
  int port() const { return port_; }
  bool is_server() const { return server_ != nullptr; }

 private:
  // Sends one request and reads its response; `wait_limit` (0 = none) bounds how long the
  // server may take to answer before the connection is declared dead. Error responses throw.
  wire::Response call(const wire::Request& request, Milliseconds wait_limit);
  // Abandons the connection (its state is unknown) and throws.
  [[noreturn]] void fail_connection(const wire::Request& request, const std::string& why);

  std::string host_;
  int port_;
  std::unique_ptr<TCPStoreServer> server_;
  std::mutex mutex_;  // serializes requests: one connection, several threads
  Socket socket_;
  std::vector<uint8_t> send_buffer_;
  std::vector<uint8_t> recv_buffer_;
  std::string broken_;  // why the connection was abandoned, once it was
};

}  // namespace gr::distributed
