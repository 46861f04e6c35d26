// A throwaway TLS identity for the arm64 smoke program, made with OpenSSL's
// API in process (no openssl binary on the arm64 side): a P-256 key and a
// self-signed X.509 v3 certificate for IP 127.0.0.1 and DNS localhost, valid
// for one day. The certificate is its own trust root.
#pragma once

#include <string>

namespace arm64smoke {

struct TlsIdentity {
  std::string key_pem;
  std::string cert_pem;
};

// Throws std::runtime_error, with OpenSSL's reason, when a step fails.
TlsIdentity MakeSelfSigned();

}  // namespace arm64smoke
