// The JSON Lines form of a tuning log (docs/database.md, "JSON Lines format").
//
// One JSON object per line. The first line is a header
//   {"type":"header","format":"tunefarm-tuning-log","version":1,...}
// then workload lines, then record lines. Every record names its workload by
// hash; a workload line must come before the first record that uses it,
// unless the importing database already has that workload.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "tunefarm/common/status.h"
#include "tunefarm/database/record.h"

namespace tunefarm::database {

inline constexpr std::string_view kJsonlFormatName = "tunefarm-tuning-log";
inline constexpr int kJsonlFormatVersion = 1;

nlohmann::json JsonlHeader();
// One line of output. Never throws: commits refuse text that is not UTF-8, and
// any such byte that reached a file by other means is written as U+FFFD.
std::string DumpJsonLine(const nlohmann::json& json);
// Checks a parsed header line: format name and a version this build reads.
Status CheckJsonlHeader(const nlohmann::json& header);

nlohmann::json WorkloadToJson(const Workload& workload);
Result<Workload> WorkloadFromJson(const nlohmann::json& json);

nlohmann::json TargetToJson(const Target& target);
Result<Target> TargetFromJson(const nlohmann::json& json);

// Timings are written with the shortest decimal form that reads back to the
// same double, so export followed by import reproduces records exactly.
nlohmann::json RecordToJson(const TuningRecord& record);
Result<TuningRecord> RecordFromJson(const nlohmann::json& json);

}  // namespace tunefarm::database
