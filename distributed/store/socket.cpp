// Socket: closing the descriptor it owns.
#include "distributed/store/socket.h"

#include <unistd.h>

namespace gr::distributed {

void Socket::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

}  // namespace gr::distributed
