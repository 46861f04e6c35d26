// Connection flags shared by the client subcommands (jobs, fleet): where the
// daemon is and which credentials to present. Tokens are read from files so
// they never appear in `ps` or shell history.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <grpcpp/grpcpp.h>

#include "tunefarm/common/status.h"
#include "tunefarm/rpc/security.h"

namespace tunefarm::cli {

struct ClientFlags {
  std::string tuner = "127.0.0.1:7878";
  std::string ca, cert, key, token_file;
  bool insecure = false;
  double timeout_s = 30;
};

void AddClientFlags(CLI::App* cmd, ClientFlags* flags);
// Credentials and a channel from the flags; errors name the flag or file.
Result<rpc::ClientSecurity> ClientSecurityFromFlags(const ClientFlags& flags);
Result<std::shared_ptr<grpc::Channel>> ChannelFromFlags(const ClientFlags& flags, rpc::ClientSecurity* security);
// The token alone in a file (surrounding blank space and one trailing newline
// allowed); errors name --token-file, the file's absolute path and why.
Result<std::string> ReadTokenFile(const std::string& path);

}  // namespace tunefarm::cli
