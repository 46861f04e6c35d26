// Reading and checking fleet.toml (fleet_config.h).
#include "tunefarm/rpc/fleet_config.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <toml++/toml.h>

namespace tunefarm::rpc {

namespace {

std::string Where(const std::string& name, const toml::node& node) {
  const auto& src = node.source();
  return name + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column);
}

std::string Resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || std::filesystem::path(path).is_absolute() || base_dir.empty()) return path;
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

// Reads every key of one table through `set`, refusing keys it does not know.
struct TableReader {
  const std::string& name;
  const toml::table& table;
  std::string section;
  std::set<std::string> known;

  Status String(const char* key, std::string* out) {
    known.insert(key);
    const toml::node* n = table.get(key);
    if (!n) return Status::OK();
    auto v = n->value<std::string>();
    if (!v || !n->is_string()) return Status::InvalidArgument(Where(name, *n) + ": [" + section + "] " + key + " must be a string");
    *out = *v;
    return Status::OK();
  }
  Status Bool(const char* key, bool* out) {
    known.insert(key);
    const toml::node* n = table.get(key);
    if (!n) return Status::OK();
    if (!n->is_boolean()) return Status::InvalidArgument(Where(name, *n) + ": [" + section + "] " + key + " must be true or false");
    *out = *n->value<bool>();
    return Status::OK();
  }
  Status Number(const char* key, double* out, double lo, double hi) {
    known.insert(key);
    const toml::node* n = table.get(key);
    if (!n) return Status::OK();
    if (!n->is_number()) return Status::InvalidArgument(Where(name, *n) + ": [" + section + "] " + key + " must be a number");
    double v = *n->value<double>();
    if (v < lo || v > hi) {
      return Status::InvalidArgument(Where(name, *n) + ": [" + section + "] " + key + " = " + std::to_string(v) +
                                     " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    *out = v;
    return Status::OK();
  }
  Status Int(const char* key, int* out, int lo, int hi) {
    double v = *out;
    TF_RETURN_IF_ERROR(Number(key, &v, lo, hi));
    *out = int(v);
    return Status::OK();
  }
  Status Strings(const char* key, std::vector<std::string>* out) {
    known.insert(key);
    const toml::node* n = table.get(key);
    if (!n) return Status::OK();
    const toml::array* arr = n->as_array();
    if (!arr) return Status::InvalidArgument(Where(name, *n) + ": [" + section + "] " + key + " must be a list of strings");
    for (const toml::node& item : *arr) {
      if (!item.is_string()) return Status::InvalidArgument(Where(name, item) + ": [" + section + "] " + key + " must hold strings only");
      out->push_back(*item.value<std::string>());
    }
    return Status::OK();
  }
  // A list of distinct device keys (the characters a job's device_key may hold).
  Status DeviceKeys(const char* key, std::set<std::string>* out) {
    std::vector<std::string> keys;
    TF_RETURN_IF_ERROR(Strings(key, &keys));
    const toml::array* arr = table.get(key) ? table.get(key)->as_array() : nullptr;
    for (size_t i = 0; i < keys.size(); ++i) {
      const toml::node& item = *arr->get(i);
      const std::string& k = keys[i];
      bool valid = !k.empty() && k.size() <= 128;
      for (char c : k) {
        valid = valid && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == ':');
      }
      if (!valid) {
        return Status::InvalidArgument(Where(name, item) + ": [" + section + "] " + key + ": '" + k +
                                       "' is not a device key (1 to 128 of letters, digits and - _ . :)");
      }
      if (!out->insert(k).second) {
        return Status::InvalidArgument(Where(name, item) + ": [" + section + "] " + key + ": '" + k + "' is listed twice");
      }
    }
    return Status::OK();
  }
  Status Done() {
    for (const auto& [key, node] : table) {
      if (!known.count(std::string(key.str()))) {
        return Status::InvalidArgument(Where(name, node) + ": unknown key '" + std::string(key.str()) + "' in [" + section + "]");
      }
    }
    return Status::OK();
  }
};

}  // namespace

Result<FleetConfig> ParseFleetConfig(const std::string& text, const std::string& name, const std::string& base_dir) {
  toml::table root;
  try {
    root = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    const auto& src = e.source();
    return Status::InvalidArgument(name + ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column) +
                                   ": " + std::string(e.description()));
  }
  FleetConfig config;
  static const std::set<std::string> kSections = {"server", "tls", "auth", "limits", "builders"};
  for (const auto& [key, node] : root) {
    if (!kSections.count(std::string(key.str())) || !node.is_table()) {
      return Status::InvalidArgument(Where(name, node) + ": unknown section '" + std::string(key.str()) +
                                     "' (expected [server], [tls], [auth], [limits] or [builders])");
    }
  }
  toml::table empty;
  auto section = [&](const char* s) -> const toml::table& {
    const toml::table* t = root[s].as_table();
    return t ? *t : empty;
  };
  {
    TableReader r{name, section("server"), "server", {}};
    TF_RETURN_IF_ERROR(r.String("listen", &config.listen));
    TF_RETURN_IF_ERROR(r.String("db", &config.db));
    TF_RETURN_IF_ERROR(r.String("system_db", &config.system_db));
    TF_RETURN_IF_ERROR(r.String("config_dir", &config.config_dir));
    TF_RETURN_IF_ERROR(r.Bool("insecure", &config.security.insecure));
    TF_RETURN_IF_ERROR(r.Done());
  }
  {
    TableReader r{name, section("tls"), "tls", {}};
    TF_RETURN_IF_ERROR(r.String("ca", &config.security.tls.ca));
    TF_RETURN_IF_ERROR(r.String("cert", &config.security.tls.cert));
    TF_RETURN_IF_ERROR(r.String("key", &config.security.tls.key));
    TF_RETURN_IF_ERROR(r.Done());
  }
  {
    TableReader r{name, section("auth"), "auth", {}};
    TF_RETURN_IF_ERROR(r.Strings("client_tokens", &config.security.client_tokens));
    TF_RETURN_IF_ERROR(r.Strings("worker_tokens", &config.security.worker_tokens));
    TF_RETURN_IF_ERROR(r.Done());
  }
  {
    TableReader r{name, section("limits"), "limits", {}};
    FleetLimits& l = config.limits;
    int mib = l.max_message_bytes >> 20;
    TF_RETURN_IF_ERROR(r.Int("max_message_mib", &mib, 1, 512));
    l.max_message_bytes = mib << 20;
    TF_RETURN_IF_ERROR(r.Int("max_in_flight_per_worker", &l.max_in_flight_per_worker, 1, 1024));
    TF_RETURN_IF_ERROR(r.Int("heartbeat_ms", &l.heartbeat_ms, 50, 60000));
    TF_RETURN_IF_ERROR(r.Int("lease_ms", &l.lease_ms, 200, 600000));
    TF_RETURN_IF_ERROR(r.Int("compile_cache_entries", &l.compile_cache_entries, 0, 1 << 20));
    TF_RETURN_IF_ERROR(r.Int("max_running_jobs", &l.max_running_jobs, 1, 1024));
    TF_RETURN_IF_ERROR(r.Number("drain_timeout_s", &l.drain_timeout_s, 0, 3600));
    TF_RETURN_IF_ERROR(r.Number("device_key_wait_s", &l.device_key_wait_s, 0, 7 * 24 * 3600));
    TF_RETURN_IF_ERROR(r.Done());
  }
  {
    TableReader r{name, section("builders"), "builders", {}};
    TF_RETURN_IF_ERROR(r.DeviceKeys("tuner_built", &config.builders.tuner_built));
    TF_RETURN_IF_ERROR(r.Int("build_threads", &config.builders.build_threads, 0, 1024));
    TF_RETURN_IF_ERROR(r.Done());
  }
  for (std::string* p : {&config.db, &config.system_db, &config.config_dir, &config.security.tls.ca,
                         &config.security.tls.cert, &config.security.tls.key}) {
    *p = Resolve(base_dir, *p);
  }
  TF_RETURN_IF_ERROR(ValidateFleetConfig(config));
  return config;
}

Result<FleetConfig> LoadFleetConfig(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::NotFound("cannot read the fleet configuration '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseFleetConfig(ss.str(), path, std::filesystem::path(path).parent_path().string());
}

Status ValidateFleetConfig(const FleetConfig& c) {
  if (c.listen.empty()) return Status::InvalidArgument("[server] listen is empty");
  if (c.db.empty()) return Status::InvalidArgument("[server] db is empty");
  if (c.security.insecure) {
    if (!IsLoopbackAddress(c.listen)) {
      return Status::InvalidArgument("[server] insecure = true needs a loopback listen address, not '" + c.listen + "'");
    }
  } else if (c.security.tls.ca.empty() || c.security.tls.cert.empty() || c.security.tls.key.empty()) {
    return Status::InvalidArgument("[tls] ca, cert and key are required (or insecure = true on a loopback address)");
  }
  if (c.limits.lease_ms < 2 * c.limits.heartbeat_ms) {
    return Status::InvalidArgument("[limits] lease_ms must be at least twice heartbeat_ms");
  }
  for (const auto& t : c.security.client_tokens) {
    if (t.size() < 16) return Status::InvalidArgument("[auth] client_tokens: every token needs at least 16 characters");
  }
  for (const auto& t : c.security.worker_tokens) {
    if (t.size() < 16) return Status::InvalidArgument("[auth] worker_tokens: every token needs at least 16 characters");
  }
  return Status::OK();
}

}  // namespace tunefarm::rpc
