// Helpers shared by the database module's .cpp files. Internal.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "database/sqlite_connection.h"
#include "tunefarm/database/record.h"

namespace tunefarm::database {

// The record columns every record query selects, in the order ReadRecordRow
// reads them (12 columns; RecordColumns adds the 13th and 14th).
inline constexpr const char* kRecordColumns =
    "id, uid, target_id, trace, run_secs, error_kind, error_msg, worker, device, tunefarm_version, "
    "created_at_us, mean_sec";

// kRecordColumns, whether the record is synthetic (column 12) and whether it
// is emulated (column 13): the synthetic column from schema v5 on, the
// emulated one from v6 on; in an older file opened read-only (never migrated)
// the rules the v5 and v6 migrations apply: whether its target carries the
// test device's toolchain, whether its target's arch ends in "-emulated".
std::string RecordColumns(int schema_version);
// The SQL expression, over a row of records, for whether it is emulated:
// the emulated column, or in a file before v6 the v6 migration's rule.
std::string EmulatedColumn(int schema_version);

int64_t NowMicros();

// The records.trace_hash column (schema v3): FNV-1a of the trace text as a
// signed 64-bit SQLite integer. Equal traces hash equal; a lookup by hash
// still compares the text, since different traces may collide.
int64_t TraceHash(std::string_view trace);

// A string that identifies a target (string + canonical fingerprint) exactly.
std::string TargetCacheKey(const Target& target);

// Features are stored as one comma-separated, sorted column.
std::string JoinFeatures(const std::vector<std::string>& features);
std::vector<std::string> SplitFeatures(const std::string& joined);

// Reads a row selected with RecordColumns. Leaves workload_hash and target
// empty; returns the target's row id in *target_id.
TuningRecord ReadRecordRow(const Statement& stmt, int64_t* target_id);

}  // namespace tunefarm::database
