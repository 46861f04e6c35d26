// What standard gRPC tools (grpcurl, grpc_health_probe) ask a tunefarm
// daemon, asked the same way in tests: the health service's Check for one
// service name, and the server reflection service's list of services and the
// schema file that defines a symbol.
//
// No generated code: health requests are two protobuf fields written by hand,
// and reflection messages are dynamic messages of the part of
// grpc/reflection/v1alpha/reflection.proto used here, declared below (Debian
// ships the reflection service's library but not its .proto or headers).
#pragma once

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/text_format.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/sync_stream.h>

#include "tunefarm/rpc/security.h"

namespace tunefarm::grpc_probes {

enum class Health { kUnknown = 0, kServing = 1, kNotServing = 2 };

// grpc.health.v1.Health/Check for `service` ("" is the whole server). The
// status is NOT_FOUND for a name the server does not know.
inline grpc::Status CheckHealth(const std::shared_ptr<grpc::Channel>& channel, const rpc::ClientSecurity& security,
                                const std::string& service, Health* health) {
  std::string request;
  if (!service.empty()) {  // field 1 (string), length-delimited; names are shorter than 128 bytes
    request = std::string("\x0a", 1) + char(service.size()) + service;
  }
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  rpc::PrepareCall(&context, security, 10);
  grpc::Slice slice(request);
  grpc::ByteBuffer in(&slice, 1), out;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &in, &out,
                 [&](grpc::Status s) { done.set_value(s); });
  grpc::Status status = done.get_future().get();
  *health = Health::kUnknown;
  if (status.ok()) {
    std::vector<grpc::Slice> slices;
    (void)out.Dump(&slices);
    std::string bytes;
    for (const grpc::Slice& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    if (bytes.size() == 2 && bytes[0] == '\x08') *health = static_cast<Health>(bytes[1]);  // field 1 (enum)
  }
  return status;
}

// One request and its answer on the reflection stream.
struct ReflectionAnswer {
  grpc::Status status;
  std::vector<std::string> services;                          // list_services
  std::vector<google::protobuf::FileDescriptorProto> files;  // file_containing_symbol
  std::string error;                                          // error_response.error_message
};

// The messages of grpc.reflection.v1alpha that ListServices and
// FileContainingSymbol use, with their field numbers from reflection.proto.
// The oneof members are plain optional fields here: the same bytes on the wire.
inline constexpr char kReflectionSchema[] = R"pb(
  name: "tunefarm_tests/reflection_subset.proto"
  package: "grpc.reflection.v1alpha"
  message_type {
    name: "ServerReflectionRequest"
    field { name: "host" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
    field { name: "file_containing_symbol" number: 4 label: LABEL_OPTIONAL type: TYPE_STRING }
    field { name: "list_services" number: 7 label: LABEL_OPTIONAL type: TYPE_STRING }
  }
  message_type {
    name: "ServerReflectionResponse"
    field { name: "valid_host" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
    field { name: "file_descriptor_response" number: 4 label: LABEL_OPTIONAL type: TYPE_MESSAGE
            type_name: ".grpc.reflection.v1alpha.FileDescriptorResponse" }
    field { name: "list_services_response" number: 6 label: LABEL_OPTIONAL type: TYPE_MESSAGE
            type_name: ".grpc.reflection.v1alpha.ListServiceResponse" }
    field { name: "error_response" number: 7 label: LABEL_OPTIONAL type: TYPE_MESSAGE
            type_name: ".grpc.reflection.v1alpha.ErrorResponse" }
  }
  message_type {
    name: "FileDescriptorResponse"
    field { name: "file_descriptor_proto" number: 1 label: LABEL_REPEATED type: TYPE_BYTES }
  }
  message_type {
    name: "ListServiceResponse"
    field { name: "service" number: 1 label: LABEL_REPEATED type: TYPE_MESSAGE
            type_name: ".grpc.reflection.v1alpha.ServiceResponse" }
  }
  message_type {
    name: "ServiceResponse"
    field { name: "name" number: 1 label: LABEL_OPTIONAL type: TYPE_STRING }
  }
  message_type {
    name: "ErrorResponse"
    field { name: "error_code" number: 1 label: LABEL_OPTIONAL type: TYPE_INT32 }
    field { name: "error_message" number: 2 label: LABEL_OPTIONAL type: TYPE_STRING }
  }
)pb";

// Sends one ServerReflectionRequest with string field `field` ("list_services",
// "file_containing_symbol") set to `value`.
inline ReflectionAnswer Reflect(const std::shared_ptr<grpc::Channel>& channel, const rpc::ClientSecurity& security,
                                const std::string& field, const std::string& value) {
  namespace pb = google::protobuf;
  ReflectionAnswer answer;
  pb::FileDescriptorProto schema;
  pb::DescriptorPool pool;
  const pb::FileDescriptor* file = nullptr;
  if (pb::TextFormat::ParseFromString(kReflectionSchema, &schema)) file = pool.BuildFile(schema);
  if (file == nullptr) {
    answer.status = grpc::Status(grpc::StatusCode::INTERNAL, "the reflection schema does not build");
    return answer;
  }
  const pb::Descriptor* request_type = file->FindMessageTypeByName("ServerReflectionRequest");
  const pb::Descriptor* response_type = file->FindMessageTypeByName("ServerReflectionResponse");
  pb::DynamicMessageFactory factory(&pool);
  std::unique_ptr<pb::Message> request(factory.GetPrototype(request_type)->New());
  request->GetReflection()->SetString(request.get(), request_type->FindFieldByName(field), value);

  grpc::ClientContext context;
  rpc::PrepareCall(&context, security, 10);
  grpc::internal::RpcMethod method("/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                                   grpc::internal::RpcMethod::BIDI_STREAMING);
  std::unique_ptr<grpc::ClientReaderWriter<grpc::ByteBuffer, grpc::ByteBuffer>> stream(
      grpc::internal::ClientReaderWriterFactory<grpc::ByteBuffer, grpc::ByteBuffer>::Create(channel.get(), method,
                                                                                            &context));
  grpc::Slice slice(request->SerializeAsString());
  grpc::ByteBuffer out(&slice, 1), in;
  stream->Write(out);
  stream->WritesDone();
  std::unique_ptr<pb::Message> response(factory.GetPrototype(response_type)->New());
  while (stream->Read(&in)) {
    std::vector<grpc::Slice> slices;
    (void)in.Dump(&slices);
    std::string bytes;
    for (const grpc::Slice& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
    response->ParseFromString(bytes);
  }
  answer.status = stream->Finish();
  if (!answer.status.ok()) return answer;

  const pb::Reflection* r = response->GetReflection();
  if (const pb::FieldDescriptor* f = response_type->FindFieldByName("list_services_response");
      r->HasField(*response, f)) {
    const pb::Message& list = r->GetMessage(*response, f);
    const pb::FieldDescriptor* service = list.GetDescriptor()->FindFieldByName("service");
    for (int i = 0; i < list.GetReflection()->FieldSize(list, service); ++i) {
      const pb::Message& s = list.GetReflection()->GetRepeatedMessage(list, service, i);
      answer.services.push_back(s.GetReflection()->GetString(s, s.GetDescriptor()->FindFieldByName("name")));
    }
  }
  if (const pb::FieldDescriptor* f = response_type->FindFieldByName("file_descriptor_response");
      r->HasField(*response, f)) {
    const pb::Message& files = r->GetMessage(*response, f);
    const pb::FieldDescriptor* proto = files.GetDescriptor()->FindFieldByName("file_descriptor_proto");
    for (int i = 0; i < files.GetReflection()->FieldSize(files, proto); ++i) {
      answer.files.emplace_back().ParseFromString(files.GetReflection()->GetRepeatedString(files, proto, i));
    }
  }
  if (const pb::FieldDescriptor* f = response_type->FindFieldByName("error_response"); r->HasField(*response, f)) {
    const pb::Message& e = r->GetMessage(*response, f);
    answer.error = e.GetReflection()->GetString(e, e.GetDescriptor()->FindFieldByName("error_message"));
  }
  return answer;
}

}  // namespace tunefarm::grpc_probes
