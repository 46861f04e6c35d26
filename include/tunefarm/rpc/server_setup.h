// Starting a gRPC server the way every tunefarm daemon does: credentials from
// ServerSecurity, message-size limits, keepalive, server reflection
// (grpc.reflection.v1alpha.ServerReflection), and the standard health service
// (grpc.health.v1.Health) reporting SERVING once started, for the server ("")
// and for each tunefarm service by its full name ("tunefarm.v1.Tuner").
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

// Marks the server and each of its services NOT_SERVING in its health
// service (a draining daemon).
void SetNotServing(grpc::Server* server);

// The full name of a tunefarm service ("tunefarm.v1.Compile"), or "" for a
// service that is not one of tunefarm.v1's.
std::string ServiceName(const grpc::Service* service);

}  // namespace tunefarm::rpc
