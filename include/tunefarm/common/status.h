// Status and Result<T>: how tunefarm reports errors without exceptions.
//
// A Status is either OK or carries a code and a message. User mistakes (bad
// workload text, unknown target, corrupt database) use kInvalidArgument,
// kNotFound, kCorruption, kIOError; a broken invariant inside tunefarm uses
// kInternal. Messages name what went wrong and where (file:line:col, path, ...).
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace tunefarm {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kCorruption,
  kIOError,
  kUnimplemented,
  kInternal,
  kTimeout,
  kCancelled,        // stopped on request (cancel, shutdown); nothing is wrong
  kUnauthenticated,  // the caller has no valid credentials
  kUnavailable,      // a peer or service cannot be reached now; retrying may help
};

const char* StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status FailedPrecondition(std::string m) { return {StatusCode::kFailedPrecondition, std::move(m)}; }
  static Status Corruption(std::string m) { return {StatusCode::kCorruption, std::move(m)}; }
  static Status IOError(std::string m) { return {StatusCode::kIOError, std::move(m)}; }
  static Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status Timeout(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
  static Status Cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
  static Status Unauthenticated(std::string m) { return {StatusCode::kUnauthenticated, std::move(m)}; }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "InvalidArgument: <message>" or "OK".
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Result<T> holds either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : data_(std::move(value)) {}  // NOLINT(implicit)
  Result(Status status) : data_(std::move(status)) {  // NOLINT(implicit)
    assert(!std::get<Status>(data_).ok() && "Result built from an OK status has no value");
  }

  bool ok() const { return std::holds_alternative<T>(data_); }
  const Status& status() const {
    static const Status kOkStatus;
    return ok() ? kOkStatus : std::get<Status>(data_);
  }
  T& value() & { return std::get<T>(data_); }
  const T& value() const& { return std::get<T>(data_); }
  T&& value() && { return std::get<T>(std::move(data_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> data_;
};

}  // namespace tunefarm

#define TF_RETURN_IF_ERROR(expr)                  \
  do {                                            \
    ::tunefarm::Status tf_status_ = (expr);       \
    if (!tf_status_.ok()) return tf_status_;      \
  } while (0)

#define TF_CONCAT_INNER_(a, b) a##b
#define TF_CONCAT_(a, b) TF_CONCAT_INNER_(a, b)
#define TF_ASSIGN_OR_RETURN(lhs, expr) \
  TF_ASSIGN_OR_RETURN_IMPL_(TF_CONCAT_(tf_result_, __LINE__), lhs, expr)
#define TF_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
