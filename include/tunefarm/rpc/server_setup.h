// Starting a gRPC server the way every tunefarm daemon does: credentials from
// ServerSecurity, message-size limits, keepalive, and the standard health
// service (grpc.health.v1.Health) reporting SERVING once started.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "tunefarm/common/status.h"
#include "tunefarm/rpc/security.h"

namespace tunefarm::rpc {

struct RunningServer {
  std::unique_ptr<grpc::Server> server;
  int port = 0;  // the bound port (useful with "127.0.0.1:0")
};

// Services are borrowed: they must outlive the returned server. Errors name
// the address when it cannot be bound.
Result<RunningServer> StartServer(const std::string& listen_address, const ServerSecurity& security,
                                  int max_message_bytes, const std::vector<grpc::Service*>& services);

// Marks the server NOT_SERVING in its health service (a draining daemon).
void SetNotServing(grpc::Server* server);

}  // namespace tunefarm::rpc
