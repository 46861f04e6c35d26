// Who may talk to a tunefarm daemon, and how channels and servers are secured.
//
// Every channel is TLS with a CA the operator configures. Workers authenticate
// with a client certificate signed by that CA (mutual TLS) that names the
// worker role; clients (jobs, compile, log reads) with a client certificate or
// a bearer token. Plaintext is allowed only on a loopback address and only
// when asked for (`insecure`); there, the configured tokens are the only
// credential (workers use a worker token in `authorization: Bearer ...`); a
// role with no tokens configured is open to local processes there.
//
// Roles in certificates: a worker writes times into the tuning log, so a
// certificate acts as a worker only when it carries the URI subjectAltName
// kWorkerRoleUri ("tunefarm:role=worker"); one without it (a client's, with
// kClientRoleUri or no role at all, as certificates issued before roles
// existed) is refused on the Fleet stream with PERMISSION_DENIED. A worker
// certificate is refused as a client with PERMISSION_DENIED unless it also
// carries kClientRoleUri or the call presents a client token: a board's key
// cannot submit or cancel jobs. docs/fleet.md shows how to issue each kind.
//
// Handlers call Authorize() first; a caller without credentials gets
// UNAUTHENTICATED, one whose certificate is of the other role
// PERMISSION_DENIED, and nothing else happens.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "tunefarm/common/status.h"

namespace tunefarm::rpc {

// PEM file paths (read when credentials are built).
struct TlsFiles {
  std::string ca;    // CA certificate that signs peers' certificates
  std::string cert;  // this side's certificate
  std::string key;   // this side's private key
};

struct ServerSecurity {
  bool insecure = false;  // plaintext; only with a loopback listen address
  TlsFiles tls;           // server certificate, and the CA for client certificates
  std::vector<std::string> client_tokens;  // bearer tokens accepted from clients
  std::vector<std::string> worker_tokens;  // bearer tokens accepted from workers (insecure mode only)
};

struct ClientSecurity {
  bool insecure = false;      // plaintext; only to a loopback address
  std::string ca;             // CA that signed the server's certificate
  std::string cert, key;      // optional client certificate (required for workers over TLS)
  std::string token;          // optional bearer token sent on every call
  std::string server_name;    // TLS name override (default: the host of the address)
};

// Whether "host:port" names a loopback host (127.0.0.0/8, ::1, localhost).
bool IsLoopbackAddress(const std::string& address);

// Credentials for a server listening on `listen_address`. InvalidArgument when
// insecure is asked for on a non-loopback address; NotFound/IOError naming the
// PEM file that cannot be read.
Result<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ServerSecurity& security,
                                                                      const std::string& listen_address);

// A channel to `address` with these credentials. Same errors as
// MakeServerCredentials. The token is not part of the channel: PrepareCall
// attaches it to each call.
Result<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address, const ClientSecurity& security);

enum class Role {
  kClient,  // jobs, compile, log reads, fleet status
  kWorker,  // the Fleet stream
};

// The URI subjectAltNames that give a certificate its role (see above).
inline constexpr const char* kWorkerRoleUri = "tunefarm:role=worker";
inline constexpr const char* kClientRoleUri = "tunefarm:role=client";

// Checks the caller of `context` (a synchronous or a callback handler's) may
// act as `role`: a verified client certificate of that role, or a configured
// token for that role. OK, UNAUTHENTICATED (no valid credential) or
// PERMISSION_DENIED (a verified certificate of the other role).
grpc::Status Authorize(const grpc::ServerContextBase& context, const ServerSecurity& security, Role role);

// Status conversions (codes map one to one where they exist).
grpc::Status ToGrpc(const Status& status);
Status FromGrpc(const grpc::Status& status);

// Sets the deadline (every tunefarm call has one) and the bearer token.
void PrepareCall(grpc::ClientContext* context, const ClientSecurity& security, double deadline_s);

// A deadline `seconds` from now, for ClientContext::set_deadline.
std::chrono::system_clock::time_point DeadlineIn(double seconds);

}  // namespace tunefarm::rpc
