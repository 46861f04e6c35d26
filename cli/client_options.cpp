// Client connection flags (client_options.h).
#include "client_options.h"

#include <fstream>
#include <sstream>

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
    std::ifstream in(f.token_file);
    if (!in) return Status::NotFound("cannot read the token file '" + f.token_file + "'");
    std::getline(in, s.token);
    while (!s.token.empty() && (s.token.back() == '\r' || s.token.back() == ' ')) s.token.pop_back();
    if (s.token.empty()) return Status::InvalidArgument("the token file '" + f.token_file + "' is empty");
  }
  return s;
}

Result<std::shared_ptr<grpc::Channel>> ChannelFromFlags(const ClientFlags& f, rpc::ClientSecurity* security) {
  TF_ASSIGN_OR_RETURN(*security, ClientSecurityFromFlags(f));
  return rpc::MakeChannel(f.tuner, *security);
}

}  // namespace tunefarm::cli
