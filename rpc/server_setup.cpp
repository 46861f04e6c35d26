// Server start-up shared by the daemon and tests (server_setup.h).
#include "tunefarm/rpc/server_setup.h"

#include <grpcpp/health_check_service_interface.h>

namespace tunefarm::rpc {

Result<RunningServer> StartServer(const std::string& listen_address, const ServerSecurity& security,
                                  int max_message_bytes, const std::vector<grpc::Service*>& services) {
  TF_ASSIGN_OR_RETURN(auto creds, MakeServerCredentials(security, listen_address));
  grpc::EnableDefaultHealthCheckService(true);
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
  if (auto* health = running.server->GetHealthCheckService()) health->SetServingStatus(true);
  return running;
}

void SetNotServing(grpc::Server* server) {
  if (auto* health = server->GetHealthCheckService()) health->SetServingStatus(false);
}

}  // namespace tunefarm::rpc
