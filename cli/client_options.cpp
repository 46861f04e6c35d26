// Client connection flags (client_options.h).
#include "client_options.h"

#include "tunefarm/rpc/token_file.h"

namespace tunefarm::cli {

void AddClientFlags(CLI::App* cmd, ClientFlags* f) {
  cmd->add_option("--tuner", f->tuner, "Daemon address HOST:PORT")->capture_default_str();
  cmd->add_option("--ca", f->ca, "CA certificate (PEM) that signed the daemon's certificate");
  cmd->add_option("--cert", f->cert, "Client certificate (PEM), for mutual TLS");
  cmd->add_option("--key", f->key, "Private key of --cert (PEM)");
  cmd->add_option("--token-file", f->token_file, "File holding a bearer token (first line)");
  cmd->add_flag("--insecure", f->insecure, "Plaintext, to a loopback daemon started with insecure = true");
  cmd->add_option("--timeout", f->timeout_s, "Deadline of each call, seconds")->capture_default_str();
}

Result<rpc::ClientSecurity> ClientSecurityFromFlags(const ClientFlags& f) {
  rpc::ClientSecurity s;
  s.insecure = f.insecure;
  s.ca = f.ca;
  s.cert = f.cert;
  s.key = f.key;
  if (!f.insecure && f.ca.empty()) {
    return Status::InvalidArgument("--ca is required for a TLS connection (or --insecure for a loopback daemon)");
  }
  if (!f.token_file.empty()) {
    TF_ASSIGN_OR_RETURN(s.token, ReadTokenFile(f.token_file));
  }
  return s;
}

Result<std::string> ReadTokenFile(const std::string& path) { return rpc::ReadTokenFile(path); }

Result<std::shared_ptr<grpc::Channel>> ChannelFromFlags(const ClientFlags& f, rpc::ClientSecurity* security) {
  TF_ASSIGN_OR_RETURN(*security, ClientSecurityFromFlags(f));
  return rpc::MakeChannel(f.tuner, *security);
}

}  // namespace tunefarm::cli
