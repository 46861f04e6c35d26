#include "tunefarm/database/jsonl.h"

#include "database/database_internal.h"

namespace tunefarm::database {
namespace {

using nlohmann::json;

// Field accessors that name the missing or mistyped field.
Status Missing(std::string_view field, std::string_view what) {
  return Status::InvalidArgument(std::string(what) + " field '" + std::string(field) + "'");
}

Result<std::string> GetString(const json& object, const char* field, bool required = true) {
  auto it = object.find(field);
  if (it == object.end()) {
    if (!required) return std::string();
    return Missing(field, "missing");
  }
  if (!it->is_string()) return Missing(field, "expected a string in");
  return it->get<std::string>();
}

Result<int64_t> GetInt(const json& object, const char* field, bool required = true) {
  auto it = object.find(field);
  if (it == object.end()) {
    if (!required) return int64_t{0};
    return Missing(field, "missing");
  }
  if (!it->is_number_integer()) return Missing(field, "expected an integer in");
  return it->get<int64_t>();
}

}  // namespace

std::string DumpJsonLine(const json& object) {
  return object.dump(-1, ' ', false, json::error_handler_t::replace);
}

json JsonlHeader() {
  return json{{"type", "header"},
              {"format", kJsonlFormatName},
              {"version", kJsonlFormatVersion},
              {"tunefarm_version", TunefarmVersion()},
              {"exported_at_us", NowMicros()}};
}

Status CheckJsonlHeader(const json& header) {
  // json::value throws when a present field is not a string: compare by hand.
  auto field_is = [&](const char* key, std::string_view want) {
    auto it = header.find(key);
    return it != header.end() && it->is_string() && it->get<std::string>() == want;
  };
  if (!header.is_object() || !field_is("type", "header") || !field_is("format", kJsonlFormatName)) {
    return Status::InvalidArgument("not a tunefarm tuning log: the first line must be a header with format '" +
                                   std::string(kJsonlFormatName) + "'");
  }
  TF_ASSIGN_OR_RETURN(int64_t version, GetInt(header, "version"));
  if (version < 1 || version > kJsonlFormatVersion) {
    return Status::FailedPrecondition("JSON Lines format version " + std::to_string(version) +
                                      " is not supported (this build reads version " +
                                      std::to_string(kJsonlFormatVersion) + ")");
  }
  return Status::OK();
}

json WorkloadToJson(const Workload& workload) {
  return json{{"type", "workload"}, {"hash", workload.hash}, {"name", workload.name}, {"text", workload.text}};
}

Result<Workload> WorkloadFromJson(const json& object) {
  Workload workload;
  TF_ASSIGN_OR_RETURN(workload.hash, GetString(object, "hash"));
  TF_ASSIGN_OR_RETURN(workload.name, GetString(object, "name", false));
  TF_ASSIGN_OR_RETURN(workload.text, GetString(object, "text", false));
  if (workload.hash.empty()) return Status::InvalidArgument("workload has an empty hash");
  return workload;
}

json TargetToJson(const Target& target) {
  const HardwareFingerprint& fp = target.fingerprint;
  return json{{"target", target.target}, {"isa", fp.isa},   {"features", fp.features},
              {"arch", fp.arch},         {"cores", fp.cores}, {"toolchain", fp.toolchain}};
}

Result<Target> TargetFromJson(const json& object) {
  if (!object.is_object()) return Status::InvalidArgument("field 'target' must be an object");
  Target target;
  TF_ASSIGN_OR_RETURN(target.target, GetString(object, "target"));
  TF_ASSIGN_OR_RETURN(target.fingerprint.isa, GetString(object, "isa", false));
  TF_ASSIGN_OR_RETURN(target.fingerprint.arch, GetString(object, "arch", false));
  TF_ASSIGN_OR_RETURN(target.fingerprint.cores, GetInt(object, "cores", false));
  TF_ASSIGN_OR_RETURN(target.fingerprint.toolchain, GetString(object, "toolchain", false));
  if (auto it = object.find("features"); it != object.end()) {
    if (!it->is_array()) return Status::InvalidArgument("field 'target.features' must be an array of strings");
    for (const json& feature : *it) {
      if (!feature.is_string()) return Status::InvalidArgument("field 'target.features' must be an array of strings");
      target.fingerprint.features.push_back(feature.get<std::string>());
    }
  }
  CanonicalizeFingerprint(&target.fingerprint);
  return target;
}

json RecordToJson(const TuningRecord& record) {
  json out{{"type", "record"},
              {"uid", record.uid},
              {"workload", record.workload_hash},
              {"target", TargetToJson(record.target)},
              {"trace", record.trace},
              {"run_secs", record.run_secs},
              {"error_kind", ErrorKindName(record.error_kind)},
              {"error_msg", record.error_msg},
              {"worker", record.worker},
              {"device", record.device},
              {"tunefarm_version", record.tunefarm_version},
              {"created_at_us", record.created_at_us}};
  // Only when set: the lines of measured records read as they did before the field.
  if (record.synthetic) out["synthetic"] = true;
  if (record.emulated) out["emulated"] = true;
  return out;
}

Result<TuningRecord> RecordFromJson(const json& object) {
  TuningRecord record;
  TF_ASSIGN_OR_RETURN(record.uid, GetString(object, "uid"));
  TF_ASSIGN_OR_RETURN(record.workload_hash, GetString(object, "workload"));
  auto target = object.find("target");
  if (target == object.end()) return Missing("target", "missing");
  TF_ASSIGN_OR_RETURN(record.target, TargetFromJson(*target));
  TF_ASSIGN_OR_RETURN(record.trace, GetString(object, "trace"));
  auto run_secs = object.find("run_secs");
  if (run_secs == object.end()) return Missing("run_secs", "missing");
  if (!run_secs->is_array()) return Status::InvalidArgument("field 'run_secs' must be an array of numbers");
  for (const json& t : *run_secs) {
    if (!t.is_number()) return Status::InvalidArgument("field 'run_secs' must be an array of numbers");
    record.run_secs.push_back(t.get<double>());
  }
  TF_ASSIGN_OR_RETURN(std::string kind, GetString(object, "error_kind"));
  TF_ASSIGN_OR_RETURN(record.error_kind, ParseErrorKind(kind));
  TF_ASSIGN_OR_RETURN(record.error_msg, GetString(object, "error_msg", false));
  TF_ASSIGN_OR_RETURN(record.worker, GetString(object, "worker", false));
  TF_ASSIGN_OR_RETURN(record.device, GetString(object, "device", false));
  TF_ASSIGN_OR_RETURN(record.tunefarm_version, GetString(object, "tunefarm_version", false));
  TF_ASSIGN_OR_RETURN(record.created_at_us, GetInt(object, "created_at_us", false));
  if (auto it = object.find("synthetic"); it != object.end()) {
    if (!it->is_boolean()) return Missing("synthetic", "expected true or false in");
    record.synthetic = it->get<bool>();
  }
  if (auto it = object.find("emulated"); it != object.end()) {
    if (!it->is_boolean()) return Missing("emulated", "expected true or false in");
    record.emulated = it->get<bool>();
  }
  TF_RETURN_IF_ERROR(ValidateRecord(record));
  if (record.uid.empty()) return Status::InvalidArgument("record has an empty uid");
  return record;
}

}  // namespace tunefarm::database
