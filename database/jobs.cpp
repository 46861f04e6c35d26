// Database: job state. Unlike records, a job row is updated in place as the
// job advances; the tuner writes it after each round so a restart resumes there.
#include <array>

#include "database/database_internal.h"
#include "database/sqlite_connection.h"
#include "tunefarm/database/database.h"

namespace tunefarm::database {
namespace {

constexpr std::array<std::string_view, 6> kJobStatusNames = {"pending", "running", "paused",
                                                              "done",    "failed",  "cancelled"};

constexpr const char* kJobColumns =
    "id, status, target, spec, progress, trials_done, trial_budget, error, created_at_us, updated_at_us";

Result<JobState> ReadJobRow(const Statement& stmt) {
  JobState job;
  job.id = stmt.ColumnText(0);
  TF_ASSIGN_OR_RETURN(job.status, ParseJobStatus(stmt.ColumnText(1)));
  job.target = stmt.ColumnText(2);
  job.spec = stmt.ColumnText(3);
  job.progress = stmt.ColumnText(4);
  job.trials_done = stmt.ColumnInt(5);
  job.trial_budget = stmt.ColumnInt(6);
  job.error = stmt.ColumnText(7);
  job.created_at_us = stmt.ColumnInt(8);
  job.updated_at_us = stmt.ColumnInt(9);
  return job;
}

}  // namespace

std::string_view JobStatusName(JobStatus status) {
  auto index = static_cast<size_t>(status);
  return index < kJobStatusNames.size() ? kJobStatusNames[index] : "pending";
}

Result<JobStatus> ParseJobStatus(std::string_view name) {
  for (size_t i = 0; i < kJobStatusNames.size(); ++i) {
    if (kJobStatusNames[i] == name) return static_cast<JobStatus>(i);
  }
  return Status::InvalidArgument("unknown job status '" + std::string(name) + "'");
}

Status Database::CreateJob(const JobState& job) {
  if (options_.read_only) return ReadOnlyError();
  if (job.id.empty()) return Status::InvalidArgument("job id is empty");
  std::lock_guard<std::mutex> lock(mu_);
  int64_t now = NowMicros();
  TF_ASSIGN_OR_RETURN(Statement stmt, conn_->Prepare(
      "INSERT INTO jobs(id, status, target, spec, progress, trials_done, trial_budget, error, created_at_us, "
      "updated_at_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"));
  stmt.Bind(1, job.id).Bind(2, JobStatusName(job.status)).Bind(3, job.target).Bind(4, job.spec)
      .Bind(5, job.progress).Bind(6, job.trials_done).Bind(7, job.trial_budget).Bind(8, job.error)
      .Bind(9, job.created_at_us != 0 ? job.created_at_us : now).Bind(10, now);
  Status status = stmt.Run();
  if (status.code() == StatusCode::kInvalidArgument) {
    return Status::AlreadyExists(path_ + ": a job with id '" + job.id + "' already exists");
  }
  return status;
}

Status Database::UpdateJob(const JobState& job) {
  if (options_.read_only) return ReadOnlyError();
  std::lock_guard<std::mutex> lock(mu_);
  TF_ASSIGN_OR_RETURN(Statement stmt, conn_->Prepare(
      "UPDATE jobs SET status = ?, target = ?, spec = ?, progress = ?, trials_done = ?, trial_budget = ?, "
      "error = ?, updated_at_us = ? WHERE id = ?"));
  stmt.Bind(1, JobStatusName(job.status)).Bind(2, job.target).Bind(3, job.spec).Bind(4, job.progress)
      .Bind(5, job.trials_done).Bind(6, job.trial_budget).Bind(7, job.error).Bind(8, NowMicros()).Bind(9, job.id);
  TF_RETURN_IF_ERROR(stmt.Run());
  if (sqlite3_changes(conn_->raw()) == 0) return Status::NotFound(path_ + ": no job with id '" + job.id + "'");
  return Status::OK();
}

Result<std::optional<JobState>> Database::GetJob(std::string_view id) {
  std::lock_guard<std::mutex> lock(mu_);
  TF_ASSIGN_OR_RETURN(Statement stmt,
                      conn_->Prepare(std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = ?"));
  stmt.Bind(1, id);
  TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return std::optional<JobState>();
  TF_ASSIGN_OR_RETURN(JobState job, ReadJobRow(stmt));
  return std::optional<JobState>(std::move(job));
}

Result<std::vector<JobState>> Database::ListJobs(std::optional<JobStatus> status) {
  std::lock_guard<std::mutex> lock(mu_);
  TF_ASSIGN_OR_RETURN(Statement stmt, conn_->Prepare(std::string("SELECT ") + kJobColumns +
                                                     " FROM jobs WHERE ?1 = '' OR status = ?1 ORDER BY created_at_us, id"));
  // A view of "" (not a default view, whose null data binds as SQL NULL).
  stmt.Bind(1, status ? JobStatusName(*status) : std::string_view(""));
  std::vector<JobState> jobs;
  while (true) {
    TF_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    TF_ASSIGN_OR_RETURN(JobState job, ReadJobRow(stmt));
    jobs.push_back(std::move(job));
  }
  return jobs;
}

}  // namespace tunefarm::database
