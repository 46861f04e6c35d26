#include "database/sqlite_connection.h"

#include <cstring>

namespace tunefarm::database {

Statement::~Statement() {
  if (stmt_ != nullptr) {
    // Reset so the cached statement releases its read snapshot and can be
    // handed out again; clear bindings so no stale value leaks into the next use.
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
}

Statement& Statement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}

Statement& Statement::Bind(int index, std::string_view text) {
  sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  return *this;
}

Statement& Statement::BindBlob(int index, const void* data, size_t bytes) {
  // A zero-length blob still binds as a blob (not NULL) when data is non-null.
  static const char kEmpty = 0;
  sqlite3_bind_blob64(stmt_, index, bytes == 0 ? &kEmpty : data, bytes, SQLITE_TRANSIENT);
  return *this;
}

Statement& Statement::BindNull(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

Result<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return conn_->ErrorFor(rc, sqlite3_sql(stmt_));
}

Status Statement::Run() {
  while (true) {
    TF_ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::OK();
  }
}

std::string Statement::ColumnText(int col) const {
  const unsigned char* text = sqlite3_column_text(stmt_, col);
  int bytes = sqlite3_column_bytes(stmt_, col);
  return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text), bytes);
}

std::vector<double> Statement::ColumnDoubles(int col) const {
  const void* blob = sqlite3_column_blob(stmt_, col);
  int bytes = sqlite3_column_bytes(stmt_, col);
  std::vector<double> values(bytes / sizeof(double));
  if (blob != nullptr && !values.empty()) std::memcpy(values.data(), blob, values.size() * sizeof(double));
  return values;
}

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::Open(const std::string& path, int flags,
                                                                 int busy_timeout_ms) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  std::unique_ptr<SqliteConnection> conn(new SqliteConnection(path, db));
  if (rc != SQLITE_OK) return conn->ErrorFor(rc, "open");
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, busy_timeout_ms);
  return conn;
}

SqliteConnection::~SqliteConnection() {
  for (auto& [sql, stmt] : statements_) sqlite3_finalize(stmt);
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Status SqliteConnection::Exec(std::string_view sql) {
  std::string owned(sql);
  char* message = nullptr;
  int rc = sqlite3_exec(db_, owned.c_str(), nullptr, nullptr, &message);
  sqlite3_free(message);
  if (rc != SQLITE_OK) return ErrorFor(rc, owned);
  return Status::OK();
}

Result<Statement> SqliteConnection::Prepare(std::string_view sql) {
  std::string key(sql);
  auto it = statements_.find(key);
  if (it == statements_.end()) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, key.c_str(), static_cast<int>(key.size()),
                                SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
    if (rc != SQLITE_OK) return ErrorFor(rc, key);
    it = statements_.emplace(std::move(key), stmt).first;
  }
  return Statement(this, it->second);
}

Result<std::string> SqliteConnection::QueryText(std::string_view sql) {
  TF_ASSIGN_OR_RETURN(Statement stmt, Prepare(sql));
  TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return Status::NotFound(path_ + ": query returned no row: " + std::string(sql));
  return stmt.ColumnText(0);
}

Result<int64_t> SqliteConnection::QueryInt(std::string_view sql) {
  TF_ASSIGN_OR_RETURN(Statement stmt, Prepare(sql));
  TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return Status::NotFound(path_ + ": query returned no row: " + std::string(sql));
  return stmt.ColumnInt(0);
}

Status SqliteConnection::LastError(std::string_view what) const {
  return ErrorFor(db_ == nullptr ? SQLITE_NOMEM : sqlite3_extended_errcode(db_), what);
}

Status SqliteConnection::ErrorFor(int rc, std::string_view what) const {
  std::string detail = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
  std::string message = path_ + ": " + detail + " (while: " + std::string(what) + ")";
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::Corruption(message);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Timeout(message);
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_PERM:
      return Status::IOError(message);
    case SQLITE_CONSTRAINT:
      return Status::InvalidArgument(message);
    default:
      return Status::Internal(message);
  }
}

WriteTransaction::~WriteTransaction() {
  if (open_) (void)conn_->Exec("ROLLBACK");
}

Status WriteTransaction::Begin() {
  TF_RETURN_IF_ERROR(conn_->Exec("BEGIN IMMEDIATE"));
  open_ = true;
  return Status::OK();
}

Status WriteTransaction::Commit() {
  Status status = conn_->Exec("COMMIT");
  if (status.ok()) open_ = false;
  return status;
}

}  // namespace tunefarm::database
