// The arm64 smoke program: starts a gRPC server on 127.0.0.1 with TLS (a
// self-signed identity made in process), calls its one unary RPC through a
// TLS channel that trusts only that certificate, and checks the reply: the
// text and its zlib crc32 came back, the server ran on aarch64, and the call
// went over TLS. A plaintext channel to the same port must fail. Exit status
// 0 when every check holds, 1 otherwise, with the reason on stderr.
#include <sys/utsname.h>
#include <zlib.h>

#include <chrono>
#include <cstdint>
#include <exception>
#include <iostream>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <nlohmann/json.hpp>

#include "self_signed.h"
#include "smoke.grpc.pb.h"

namespace arm64smoke {
namespace {

using tunefarm::arm64smoke::Echo;
using tunefarm::arm64smoke::EchoReply;
using tunefarm::arm64smoke::EchoRequest;

// Deadlines are generous: everything runs under instruction-set emulation
// on a machine other builds share.
constexpr std::chrono::seconds kCallDeadline{60};
constexpr std::chrono::seconds kRefusedDeadline{20};

uint32_t Crc32(const std::string& text) {
  return static_cast<uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(text.data()), static_cast<uInt>(text.size())));
}

std::string AuthProperty(const grpc::AuthContext& auth, const char* name) {
  auto values = auth.FindPropertyValues(name);
  return values.empty() ? std::string() : std::string(values.front().data(), values.front().size());
}

class EchoService final : public Echo::Service {
 public:
  grpc::Status Say(grpc::ServerContext* context, const EchoRequest* request, EchoReply* reply) override {
    if (Crc32(request->text()) != request->crc32()) {
      return {grpc::StatusCode::DATA_LOSS, "crc32 of the text does not match the request's"};
    }
    utsname machine{};
    uname(&machine);
    nlohmann::json json = {
        {"text", request->text()},
        {"crc32", Crc32(request->text())},
        {"machine", machine.machine},
        {"security", AuthProperty(*context->auth_context(), GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME)},
    };
    reply->set_json(json.dump());
    return grpc::Status::OK;
  }
};

// Returns the first failed check, or an empty string.
std::string Run() {
  TlsIdentity identity = MakeSelfSigned();

  grpc::SslServerCredentialsOptions server_options;
  server_options.pem_key_cert_pairs.push_back({identity.key_pem, identity.cert_pem});
  EchoService service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::SslServerCredentials(server_options), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server || port == 0) return "the TLS server did not start on 127.0.0.1";
  const std::string address = "127.0.0.1:" + std::to_string(port);

  grpc::SslCredentialsOptions client_options;
  client_options.pem_root_certs = identity.cert_pem;
  auto stub = Echo::NewStub(grpc::CreateChannel(address, grpc::SslCredentials(client_options)));
  EchoRequest request;
  request.set_text("tunefarm arm64 smoke: TLS round trip");
  request.set_crc32(Crc32(request.text()));
  EchoReply reply;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kCallDeadline);
  grpc::Status status = stub->Say(&context, request, &reply);
  if (!status.ok()) return "the TLS call failed: " + status.error_message();

  nlohmann::json json = nlohmann::json::parse(reply.json());
  if (json.at("text") != request.text()) return "the reply's text differs: " + reply.json();
  if (json.at("crc32") != request.crc32()) return "the reply's crc32 differs: " + reply.json();
  if (json.at("machine") != "aarch64") return "the server did not run on aarch64: " + reply.json();
  if (json.at("security") != "ssl") return "the server saw no TLS transport: " + reply.json();
  if (AuthProperty(*context.auth_context(), GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME) != "ssl") {
    return "the client saw no TLS transport";
  }

  // The port speaks only TLS: a plaintext call must not get through.
  std::cout << "arm64 smoke: TLS call ok; a plaintext call must fail now (gRPC logs its refused handshake)\n"
            << std::flush;
  auto plain_stub = Echo::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  EchoReply plain_reply;
  grpc::ClientContext plain_context;
  plain_context.set_deadline(std::chrono::system_clock::now() + kRefusedDeadline);
  if (plain_stub->Say(&plain_context, request, &plain_reply).ok()) {
    return "a plaintext call to the TLS port succeeded";
  }

  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  std::cout << "arm64 smoke: ok: " << reply.json() << " on " << address << "\n";
  return {};
}

}  // namespace
}  // namespace arm64smoke

int main() {
  try {
    if (std::string failure = arm64smoke::Run(); !failure.empty()) {
      std::cerr << "arm64 smoke: FAILED: " << failure << "\n";
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "arm64 smoke: FAILED: " << e.what() << "\n";
    return 1;
  }
}
