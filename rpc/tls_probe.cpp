// ProbePortProtocol: a hand-written ClientHello over a plain socket. OpenSSL is
// not needed: only the first two bytes of the answer matter (a TLS record
// starts with its content type, 0x15 alert or 0x16 handshake, then the major
// version 0x03), so the hello only has to look like TLS, not to succeed.
#include "tunefarm/rpc/tls_probe.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace tunefarm::rpc {
namespace {

using Clock = std::chrono::steady_clock;

// Splits "host:port" / "[v6]:port" after an optional gRPC scheme.
bool SplitHostPort(std::string address, std::string* host, std::string* port) {
  for (const char* scheme : {"dns:///", "dns:", "ipv4:", "ipv6:"}) {
    if (address.rfind(scheme, 0) == 0) {
      address = address.substr(std::strlen(scheme));
      break;
    }
  }
  if (!address.empty() && address[0] == '[') {
    size_t close = address.find(']');
    if (close == std::string::npos || close + 1 >= address.size() || address[close + 1] != ':') return false;
    *host = address.substr(1, close - 1);
    *port = address.substr(close + 2);
  } else {
    size_t colon = address.rfind(':');
    if (colon == std::string::npos) return false;
    *host = address.substr(0, colon);
    *port = address.substr(colon + 1);
  }
  return !host->empty() && !port->empty();
}

void Append16(std::vector<uint8_t>& out, size_t v) {
  out.push_back(uint8_t(v >> 8));
  out.push_back(uint8_t(v));
}

// A TLS 1.2-compatible ClientHello offering TLS 1.3 and 1.2 suites, the
// groups and signature schemes every TLS library takes, and ALPN "h2".
std::vector<uint8_t> ClientHello() {
  std::vector<uint8_t> ext;
  auto extension = [&ext](uint16_t type, const std::vector<uint8_t>& body) {
    Append16(ext, type);
    Append16(ext, body.size());
    ext.insert(ext.end(), body.begin(), body.end());
  };
  extension(0x000a, {0x00, 0x04, 0x00, 0x1d, 0x00, 0x17});                    // supported_groups: x25519, P-256
  extension(0x000b, {0x01, 0x00});                                            // ec_point_formats: uncompressed
  extension(0x000d, {0x00, 0x06, 0x04, 0x03, 0x08, 0x04, 0x04, 0x01});        // signature_algorithms
  extension(0x0010, {0x00, 0x03, 0x02, 'h', '2'});                            // ALPN: h2
  extension(0x002b, {0x04, 0x03, 0x04, 0x03, 0x03});                          // supported_versions: 1.3, 1.2
  std::vector<uint8_t> key_share{0x00, 0x24, 0x00, 0x1d, 0x00, 0x20};         // key_share: an x25519 share
  std::mt19937 rng(std::random_device{}());
  for (int i = 0; i < 32; ++i) key_share.push_back(uint8_t(rng()));
  extension(0x0033, key_share);

  std::vector<uint8_t> hello{0x03, 0x03};  // legacy version TLS 1.2
  for (int i = 0; i < 32; ++i) hello.push_back(uint8_t(rng()));  // random
  hello.push_back(0x00);                                         // no session id
  const std::vector<uint8_t> suites{0x13, 0x01, 0x13, 0x02, 0x13, 0x03, 0xc0, 0x2b, 0xc0, 0x2f, 0xc0, 0x2c, 0xc0, 0x30};
  Append16(hello, suites.size());
  hello.insert(hello.end(), suites.begin(), suites.end());
  hello.push_back(0x01);  // compression methods: null
  hello.push_back(0x00);
  Append16(hello, ext.size());
  hello.insert(hello.end(), ext.begin(), ext.end());

  std::vector<uint8_t> handshake{0x01, uint8_t(hello.size() >> 16), uint8_t(hello.size() >> 8), uint8_t(hello.size())};
  handshake.insert(handshake.end(), hello.begin(), hello.end());
  std::vector<uint8_t> record{0x16, 0x03, 0x01};
  Append16(record, handshake.size());
  record.insert(record.end(), handshake.begin(), handshake.end());
  return record;
}

int Remaining(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? int(left) : 0;
}

// A connected socket to one of the address's resolutions, or -1.
int Connect(const std::string& host, const std::string& port, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      close(fd);
      fd = -1;
      continue;
    }
    pollfd p{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof(err);
    if (poll(&p, 1, Remaining(deadline)) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  return fd;
}

}  // namespace

PortProtocol ProbePortProtocol(const std::string& address, std::chrono::milliseconds timeout) {
  std::string host, port;
  if (!SplitHostPort(address, &host, &port)) return PortProtocol::kUnknown;
  auto deadline = Clock::now() + timeout;
  int fd = Connect(host, port, deadline);
  if (fd < 0) return PortProtocol::kUnknown;
  std::vector<uint8_t> hello = ClientHello();
  size_t sent = 0;
  while (sent < hello.size()) {
    pollfd p{fd, POLLOUT, 0};
    if (poll(&p, 1, Remaining(deadline)) != 1) break;
    ssize_t n = send(fd, hello.data() + sent, hello.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += size_t(n);
  }
  uint8_t answer[2] = {0, 0};
  size_t got = 0;
  PortProtocol result = PortProtocol::kUnknown;
  while (got < 2) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, Remaining(deadline)) != 1) break;
    ssize_t n = recv(fd, answer + got, 2 - got, 0);
    if (n <= 0) {  // closed (or reset) without a TLS record: a plaintext server refusing the bytes
      result = PortProtocol::kPlaintext;
      break;
    }
    got += size_t(n);
  }
  if (got == 2) {
    result = (answer[0] == 0x15 || answer[0] == 0x16) && answer[1] == 0x03 ? PortProtocol::kTls
                                                                          : PortProtocol::kPlaintext;
  }
  close(fd);
  return result;
}

}  // namespace tunefarm::rpc
