// Which protocol a daemon's port speaks, asked without gRPC: the diagnosis
// behind "cannot connect" when a worker or client dials a TLS daemon in
// plaintext (--insecure), or a plaintext daemon with TLS. gRPC reports both as
// UNAVAILABLE with a transport message that names neither.
//
// The probe connects, sends a TLS ClientHello and reads the first bytes of the
// answer: a TLS server answers with a TLS record (a ServerHello, or an alert
// when it likes nothing offered), a plaintext HTTP/2 server with a frame or by
// closing the connection. Nothing is authenticated or kept.
#pragma once

#include <chrono>
#include <string>

namespace tunefarm::rpc {

enum class PortProtocol {
  kTls,        // answered with a TLS record
  kPlaintext,  // answered, or closed the connection, without a TLS record
  kUnknown,    // not reachable, or no answer before the timeout
};

// `address` is host:port, [v6]:port or a gRPC target of that form with a
// "dns:", "ipv4:" or "ipv6:" scheme. Blocks for at most about `timeout`.
PortProtocol ProbePortProtocol(const std::string& address, std::chrono::milliseconds timeout);

}  // namespace tunefarm::rpc
