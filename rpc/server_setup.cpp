// Server start-up shared by the daemon and tests (server_setup.h).
#include "tunefarm/rpc/server_setup.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>

#include "tunefarm/v1/compile.grpc.pb.h"
#include "tunefarm/v1/fleet.grpc.pb.h"
#include "tunefarm/v1/log.grpc.pb.h"
#include "tunefarm/v1/tuner.grpc.pb.h"

namespace tunefarm::rpc {

std::string ServiceName(const grpc::Service* service) {
  if (dynamic_cast<const v1::Tuner::Service*>(service)) return v1::Tuner::service_full_name();
  if (dynamic_cast<const v1::Fleet::Service*>(service)) return v1::Fleet::service_full_name();
  if (dynamic_cast<const v1::Compile::Service*>(service)) return v1::Compile::service_full_name();
  if (dynamic_cast<const v1::TuningLog::Service*>(service)) return v1::TuningLog::service_full_name();
  return "";
}

Result<RunningServer> StartServer(const std::string& listen_address, const ServerSecurity& security,
                                  int max_message_bytes, const std::vector<grpc::Service*>& services) {
  TF_ASSIGN_OR_RETURN(auto creds, MakeServerCredentials(security, listen_address));
  grpc::EnableDefaultHealthCheckService(true);
  // Reflection describes the services (their .proto schema, which ships with
  // tunefarm) to standard tools such as grpcurl; it answers without
  // credentials, like health, and calls nothing else.
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  RunningServer running;
  builder.AddListeningPort(listen_address, creds, &running.port);
  builder.SetMaxReceiveMessageSize(max_message_bytes);
  builder.SetMaxSendMessageSize(max_message_bytes);
  // Dead peers (a SIGKILLed worker behind a half-open connection) are noticed
  // by keepalive pings as well as by the lease.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  for (grpc::Service* s : services) builder.RegisterService(s);
  running.server = builder.BuildAndStart();
  if (!running.server || running.port == 0) {
    return Status::Unavailable("cannot listen on '" + listen_address + "' (address in use or not local?)");
  }
  if (auto* health = running.server->GetHealthCheckService()) {
    // "" is the whole server; each service by its full name, so a probe can
    // ask for the one it needs. SetNotServing turns all of them.
    health->SetServingStatus(true);
    for (grpc::Service* s : services) {
      std::string name = ServiceName(s);
      if (!name.empty()) health->SetServingStatus(name, true);
    }
  }
  return running;
}

// Every status the server reports, "" and each service's, turns at once.
void SetNotServing(grpc::Server* server) {
  if (auto* health = server->GetHealthCheckService()) health->SetServingStatus(false);
}

}  // namespace tunefarm::rpc
