// SqliteConnection: a thin RAII layer over one sqlite3 connection, with a cache
// of prepared statements and errors that name the database file.
//
// Internal to the database module. Not thread-safe: Database serializes calls.
// Statements handed out by Prepare() are owned by the connection; a Statement
// resets itself (and clears bindings) when it goes out of scope, so it can be
// reused by the next caller.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tunefarm/common/status.h"

namespace tunefarm::database {

class SqliteConnection;

// A borrowed prepared statement. Bind indices are 1-based, column indices 0-based.
class Statement {
 public:
  Statement(SqliteConnection* conn, sqlite3_stmt* stmt) : conn_(conn), stmt_(stmt) {}
  ~Statement();
  Statement(Statement&& other) noexcept : conn_(other.conn_), stmt_(other.stmt_) { other.stmt_ = nullptr; }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view text);
  Statement& BindBlob(int index, const void* data, size_t bytes);
  Statement& BindNull(int index);

  // Advances: true when a row is ready, false when done, an error otherwise.
  Result<bool> Step();
  // Steps until done (for INSERT/UPDATE/DELETE).
  Status Run();

  int64_t ColumnInt(int col) const { return sqlite3_column_int64(stmt_, col); }
  double ColumnDouble(int col) const { return sqlite3_column_double(stmt_, col); }
  bool ColumnIsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string ColumnText(int col) const;
  std::vector<double> ColumnDoubles(int col) const;  // a blob of little-endian doubles

 private:
  SqliteConnection* conn_;
  sqlite3_stmt* stmt_;
};

class SqliteConnection {
 public:
  // `flags` are sqlite3_open_v2 flags; SQLITE_OPEN_NOMUTEX is always added.
  static Result<std::unique_ptr<SqliteConnection>> Open(const std::string& path, int flags,
                                                        int busy_timeout_ms);
  ~SqliteConnection();
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  sqlite3* raw() { return db_; }
  const std::string& path() const { return path_; }

  // Runs one or more statements that return no rows.
  Status Exec(std::string_view sql);
  // A cached prepared statement for `sql`.
  Result<Statement> Prepare(std::string_view sql);
  // A single-value query: the first column of the first row, as text.
  Result<std::string> QueryText(std::string_view sql);
  Result<int64_t> QueryInt(std::string_view sql);

  // The connection's last error as a Status naming the file and `what` failed.
  Status LastError(std::string_view what) const;
  // Maps an SQLite result code to a Status naming the file.
  Status ErrorFor(int rc, std::string_view what) const;

 private:
  SqliteConnection(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}

  const std::string path_;
  sqlite3* db_;
  std::unordered_map<std::string, sqlite3_stmt*> statements_;
};

// BEGIN IMMEDIATE ... COMMIT. Takes the write lock up front so that two
// writers never deadlock upgrading a read lock (which in WAL mode fails at
// once with SQLITE_BUSY_SNAPSHOT instead of waiting). Rolls back if not
// committed before destruction.
class WriteTransaction {
 public:
  explicit WriteTransaction(SqliteConnection* conn) : conn_(conn) {}
  ~WriteTransaction();
  Status Begin();
  Status Commit();

 private:
  SqliteConnection* conn_;
  bool open_ = false;
};

}  // namespace tunefarm::database
