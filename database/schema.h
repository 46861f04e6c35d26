// The tuning log's schema, its migrations, and the read-only inspection that
// decides whether a file may be opened at all.
//
// Internal to the database module; docs/database.md documents the schema.
#pragma once

#include <string>

#include "database/sqlite_connection.h"
#include "tunefarm/common/status.h"

namespace tunefarm::database {

struct FileInspection {
  bool exists = false;
  int schema_version = 0;  // valid when exists
};

// Looks at `path` without writing to it: file header (magic, truncation),
// then, through a read-only connection, application_id, schema version and
// (when `quick_check`) PRAGMA quick_check. Any problem is a clear error naming
// the path: InvalidArgument for a foreign file, FailedPrecondition for a newer
// schema, Corruption for a truncated or damaged file.
Result<FileInspection> InspectDatabaseFile(const std::string& path, bool quick_check);

// Brings a read-write connection from `from_version` (0: empty new file) to
// `to_version` inside one write transaction. Re-reads the version under the
// write lock, so two processes creating the same file do not both migrate.
Status MigrateSchema(SqliteConnection* conn, int to_version);

// The schema version recorded in the meta table (0 when there is none).
Result<int> ReadSchemaVersion(SqliteConnection* conn);

}  // namespace tunefarm::database
