// TLS credentials, loopback checks and per-call authorization (security.h).
#include "tunefarm/rpc/security.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "tunefarm/common/quote.h"

namespace tunefarm::rpc {

namespace {

// Messages name the absolute path, not the one as written: a relative path
// in a config file or on the command line resolves against a folder the
// reader of the message may not know.
Result<std::string> ReadPem(const std::string& path, const char* what) {
  if (path.empty()) return Status::InvalidArgument(std::string("no ") + what + " file configured");
  std::error_code ec;
  std::string shown = std::filesystem::absolute(path, ec).lexically_normal().string();
  if (ec) shown = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    return Status::NotFound(std::string("cannot read the ") + what + " file '" + shown + "': " + std::strerror(err));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string pem = ss.str();
  if (pem.find("-----BEGIN") == std::string::npos) {
    return Status::InvalidArgument(std::string("the ") + what + " file '" + shown + "' is not PEM");
  }
  return pem;
}

// Compares without an early exit, so a token cannot be guessed byte by byte
// from response times.
bool ConstantTimeEquals(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

bool TokenMatches(const std::string& presented, const std::vector<std::string>& tokens) {
  bool match = false;
  for (const std::string& t : tokens) match |= !t.empty() && ConstantTimeEquals(presented, t);
  return match;
}

std::string HostOf(const std::string& address) {
  std::string host = address;
  if (host.rfind("ipv4:", 0) == 0) host = host.substr(5);
  if (host.rfind("ipv6:", 0) == 0) host = host.substr(5);
  if (!host.empty() && host[0] == '[') {
    size_t end = host.find(']');
    return end == std::string::npos ? host : host.substr(1, end - 1);
  }
  size_t colon = host.rfind(':');
  if (colon != std::string::npos && host.find(':') == colon) host = host.substr(0, colon);
  return host;
}

}  // namespace

bool IsLoopbackAddress(const std::string& address) {
  std::string host = HostOf(address);
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

Result<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(const ServerSecurity& security,
                                                                      const std::string& listen_address) {
  if (security.insecure) {
    if (!IsLoopbackAddress(listen_address)) {
      return Status::InvalidArgument("plaintext (--insecure) is allowed only on a loopback address, not '" +
                                     listen_address + "'; configure TLS to listen there");
    }
    return grpc::InsecureServerCredentials();
  }
  TF_ASSIGN_OR_RETURN(std::string ca, ReadPem(security.tls.ca, "CA certificate"));
  TF_ASSIGN_OR_RETURN(std::string cert, ReadPem(security.tls.cert, "server certificate"));
  TF_ASSIGN_OR_RETURN(std::string key, ReadPem(security.tls.key, "server private key"));
  // Client certificates are verified when presented but not required at the
  // handshake: clients may use a bearer token instead. Authorize() decides
  // per call, and the Fleet stream always demands a verified certificate.
  grpc::SslServerCredentialsOptions options(GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = ca;
  options.pem_key_cert_pairs.push_back({key, cert});
  return grpc::SslServerCredentials(options);
}

Result<std::shared_ptr<grpc::Channel>> MakeChannel(const std::string& address, const ClientSecurity& security) {
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (security.insecure) {
    if (!IsLoopbackAddress(address)) {
      return Status::InvalidArgument("plaintext (--insecure) is allowed only to a loopback address, not '" +
                                     address + "'");
    }
    creds = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions options;
    TF_ASSIGN_OR_RETURN(options.pem_root_certs, ReadPem(security.ca, "CA certificate"));
    if (!security.cert.empty() || !security.key.empty()) {
      TF_ASSIGN_OR_RETURN(options.pem_cert_chain, ReadPem(security.cert, "client certificate"));
      TF_ASSIGN_OR_RETURN(options.pem_private_key, ReadPem(security.key, "client private key"));
    }
    creds = grpc::SslCredentials(options);
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  if (!security.server_name.empty()) args.SetSslTargetNameOverride(security.server_name);
  return grpc::CreateCustomChannel(address, creds, args);
}

namespace {

struct CertificateRoles {
  bool worker = false;
  bool client = false;
  std::string name;  // the certificate's common name, for messages
};

// The roles a verified peer certificate carries in its URI subjectAltNames.
// gRPC lists each URI SAN of the peer's certificate as a peer_uri property.
CertificateRoles RolesOf(const grpc::AuthContext& auth) {
  CertificateRoles roles;
  for (const grpc::string_ref& uri : auth.FindPropertyValues(GRPC_PEER_URI_PROPERTY_NAME)) {
    std::string_view value(uri.data(), uri.size());
    roles.worker |= value == kWorkerRoleUri;
    roles.client |= value == kClientRoleUri;
  }
  for (const grpc::string_ref& cn : auth.FindPropertyValues(GRPC_X509_CN_PROPERTY_NAME)) {
    roles.name.assign(cn.data(), std::min<size_t>(cn.size(), 128));
  }
  return roles;
}

}  // namespace

grpc::Status Authorize(const grpc::ServerContextBase& context, const ServerSecurity& security, Role role) {
  auto auth = context.auth_context();
  // A verified certificate (only possible over TLS) is enough for the role it carries.
  const bool certified = !security.insecure && auth && auth->IsPeerAuthenticated();
  grpc::Status wrong_role = grpc::Status::OK;
  if (certified) {
    CertificateRoles roles = RolesOf(*auth);
    if (role == Role::kWorker) {
      if (roles.worker) return grpc::Status::OK;
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                          "the certificate '" + roles.name + "' is not a worker's: workers need a certificate with "
                          "the URI subjectAltName " + kWorkerRoleUri + " (docs/fleet.md, Trust)");
    }
    if (roles.client || !roles.worker) return grpc::Status::OK;
    // A worker's certificate: a client only with a client token as well.
    wrong_role = grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                              "the certificate '" + roles.name + "' is a worker's (" + kWorkerRoleUri +
                                  "): it cannot act as a client; use a client certificate or a client token");
  }
  if (role == Role::kWorker && !security.insecure) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        std::string("workers must present a client certificate signed by the fleet CA, with the "
                                    "URI subjectAltName ") + kWorkerRoleUri);
  }
  const auto& tokens = role == Role::kWorker ? security.worker_tokens : security.client_tokens;
  // An explicitly insecure loopback daemon without tokens for a role is open
  // to local processes in that role: the operator asked for exactly that.
  if (security.insecure && tokens.empty()) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    if (!wrong_role.ok()) return wrong_role;
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "no credentials: present a client certificate or 'authorization: Bearer <token>'");
  }
  std::string value(it->second.data(), it->second.size());
  const std::string prefix = "Bearer ";
  if (value.rfind(prefix, 0) != 0) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "the authorization header must be 'Bearer <token>'");
  }
  if (!TokenMatches(value.substr(prefix.size()), tokens)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "the bearer token is not valid here");
  }
  return grpc::Status::OK;
}

grpc::Status ToGrpc(const Status& status) {
  using G = grpc::StatusCode;
  G code = G::UNKNOWN;
  switch (status.code()) {
    case StatusCode::kOk: return grpc::Status::OK;
    case StatusCode::kInvalidArgument: code = G::INVALID_ARGUMENT; break;
    case StatusCode::kNotFound: code = G::NOT_FOUND; break;
    case StatusCode::kAlreadyExists: code = G::ALREADY_EXISTS; break;
    case StatusCode::kFailedPrecondition: code = G::FAILED_PRECONDITION; break;
    case StatusCode::kCorruption: code = G::DATA_LOSS; break;
    case StatusCode::kIOError: code = G::UNAVAILABLE; break;
    case StatusCode::kUnimplemented: code = G::UNIMPLEMENTED; break;
    case StatusCode::kInternal: code = G::INTERNAL; break;
    case StatusCode::kTimeout: code = G::DEADLINE_EXCEEDED; break;
    case StatusCode::kCancelled: code = G::CANCELLED; break;
    case StatusCode::kUnauthenticated: code = G::UNAUTHENTICATED; break;
    case StatusCode::kUnavailable: code = G::UNAVAILABLE; break;
  }
  // Bounded: gRPC refuses a status message that does not fit its metadata.
  return grpc::Status(code, LimitMessage(status.message()));
}

Status FromGrpc(const grpc::Status& status) {
  using G = grpc::StatusCode;
  std::string m = status.error_message();
  switch (status.error_code()) {
    case G::OK: return Status::OK();
    case G::INVALID_ARGUMENT: case G::OUT_OF_RANGE: return Status::InvalidArgument(m);
    case G::NOT_FOUND: return Status::NotFound(m);
    case G::ALREADY_EXISTS: return Status::AlreadyExists(m);
    case G::FAILED_PRECONDITION: return Status::FailedPrecondition(m);
    case G::DATA_LOSS: return Status::Corruption(m);
    case G::UNIMPLEMENTED: return Status::Unimplemented(m);
    case G::DEADLINE_EXCEEDED: return Status::Timeout(m);
    case G::CANCELLED: return Status::Cancelled(m);
    case G::UNAUTHENTICATED: case G::PERMISSION_DENIED: return Status::Unauthenticated(m);
    case G::UNAVAILABLE: case G::RESOURCE_EXHAUSTED: case G::ABORTED: return Status::Unavailable(m);
    default: return Status::Internal(m);
  }
}

void PrepareCall(grpc::ClientContext* context, const ClientSecurity& security, double deadline_s) {
  context->set_deadline(DeadlineIn(deadline_s));
  // Per-call metadata rather than call credentials: gRPC refuses call
  // credentials on plaintext channels, and the token works the same on both.
  if (!security.token.empty()) context->AddMetadata("authorization", "Bearer " + security.token);
}

std::chrono::system_clock::time_point DeadlineIn(double seconds) {
  return std::chrono::system_clock::now() +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace tunefarm::rpc
