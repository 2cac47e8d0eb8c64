// `ember viz`'s HTTP server (cpp-httplib): the page and the JSON API over a runs folder (README,
// "ember viz"). Every path a request names is confined to that folder (confine.h).
#pragma once
#include <memory>
#include <string>

#include "ember/support/non_copyable.h"

namespace ember::viz {

struct ServerOptions {
  std::string runs_dir = "runs";
  std::string host = "127.0.0.1";  ///< the address to listen on (loopback only by default)
  int port = 8000;                 ///< 0: a free port the system picks
};

class Server : support::NonCopyable {
 public:
  /// Throws ember::IOError when runs_dir is not a directory.
  explicit Server(ServerOptions options);
  ~Server();

  /// Binds the listening socket and returns its port; throws ember::IOError when it cannot.
  int bind();
  /// Serves until stop() (from another thread or a signal handler's thread).
  void run();
  void stop();
  /// http://<host>:<port>/ once bound (IPv6 hosts in brackets).
  std::string url() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ember::viz
