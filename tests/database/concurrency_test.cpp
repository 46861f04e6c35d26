// Many writers at once — threads and separate processes — lose nothing, and a
// writer killed with SIGKILL at a random moment leaves a sound database that
// holds every record it had reported committed.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <mutex>
#include <thread>

#include "test_util.h"
#include "tunefarm/database/database.h"

extern char** environ;

namespace tunefarm::database {
namespace {

using testing::CpuTarget;
using testing::MakeRecord;
using testing::MakeWorkload;
using testing::OpenOrDie;
using testing::RawQuery;
using testing::TempDir;

const char kWriterTool[] = TUNEFARM_BINARY_DIR "/database/tools/tunefarm_db_writer";

// A running tunefarm_db_writer whose stdout is a pipe back to the test.
struct Writer {
  pid_t pid = -1;
  int out_fd = -1;
};

Writer StartWriter(const std::string& db, const std::string& tag, long count, long batch) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  posix_spawn_file_actions_addclose(&actions, fds[1]);
  std::string count_arg = std::to_string(count), batch_arg = std::to_string(batch);
  std::vector<char*> argv = {const_cast<char*>(kWriterTool), const_cast<char*>(db.c_str()),
                             const_cast<char*>(tag.c_str()), count_arg.data(), batch_arg.data(), nullptr};
  Writer writer;
  int rc = ::posix_spawn(&writer.pid, kWriterTool, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "cannot start " << kWriterTool << ": " << std::strerror(rc);
  ::close(fds[1]);
  writer.out_fd = fds[0];
  return writer;
}

// Reads the writer's stdout to EOF; returns the complete lines (uids).
std::vector<std::string> ReadLines(int fd) {
  std::string data;
  char buffer[4096];
  ssize_t n;
  while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) data.append(buffer, n);
  ::close(fd);
  std::vector<std::string> lines;
  size_t start = 0, end;
  while ((end = data.find('\n', start)) != std::string::npos) {  // a cut-off last line is ignored
    lines.push_back(data.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

int WaitFor(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

std::set<std::string> UidsIn(const std::string& path) {
  std::string all = RawQuery(path, "SELECT uid FROM records");
  std::set<std::string> uids;
  std::istringstream in(all);
  std::string line;
  while (std::getline(in, line)) uids.insert(line);
  return uids;
}

TEST(ConcurrencyTest, ThreadsWithTheirOwnConnectionsLoseNothing) {
  TempDir dir;
  std::string path = dir.File("threads.db");
  { ASSERT_NE(OpenOrDie(path), nullptr); }
  constexpr int kThreads = 8, kBatches = 25, kBatchSize = 4;
  std::vector<std::thread> threads;
  std::mutex mu;
  std::vector<std::string> failures;
  auto fail = [&](const std::string& what, const Status& s) {
    std::lock_guard<std::mutex> lock(mu);
    failures.push_back(what + ": " + s.ToString());
  };
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto db = Database::Open(path);
      if (!db.ok()) {
        fail("open", db.status());
        return;
      }
      std::string hash = "w" + std::to_string(t % 3);  // threads share workloads
      if (Status s = (*db)->CommitWorkload(MakeWorkload(hash)); !s.ok()) fail("commit workload", s);
      for (int b = 0; b < kBatches; ++b) {
        std::vector<TuningRecord> batch;
        for (int i = 0; i < kBatchSize; ++i) batch.push_back(MakeRecord(hash, CpuTarget(), {1e-3 * (i + 1)}));
        if (auto ids = (*db)->CommitRecords(batch); !ids.ok()) fail("commit records", ids.status());
        (void)(*db)->GetBest(hash, CpuTarget());  // readers interleave with writers
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_TRUE(failures.empty()) << failures.size() << " failed, first: " << failures.front();
  auto db = OpenOrDie(path);
  EXPECT_EQ(db->Stats()->records, kThreads * kBatches * kBatchSize);
  EXPECT_EQ(db->Stats()->workloads, 3);
  EXPECT_EQ(db->Stats()->targets, 1);
}

TEST(ConcurrencyTest, ThreadsSharingOneHandleLoseNothing) {
  TempDir dir;
  auto db = OpenOrDie(dir.File("shared.db"));
  ASSERT_TRUE(db->CommitWorkload(MakeWorkload("w")).ok());
  constexpr int kThreads = 6, kRecords = 50;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRecords; ++i) {
        if (!db->CommitRecord(MakeRecord("w", CpuTarget(), {1e-3 * (i + 1)})).ok()) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(db->Stats()->records, kThreads * kRecords);
}

TEST(ConcurrencyTest, TwoProcessesLoseNothing) {
  TempDir dir;
  std::string path = dir.File("procs.db");
  { ASSERT_NE(OpenOrDie(path), nullptr); }
  constexpr long kCount = 400;
  Writer a = StartWriter(path, "a", kCount, 1);
  Writer b = StartWriter(path, "b", kCount, 7);
  auto lines_a = ReadLines(a.out_fd);
  auto lines_b = ReadLines(b.out_fd);
  int status_a = WaitFor(a.pid), status_b = WaitFor(b.pid);
  ASSERT_TRUE(WIFEXITED(status_a) && WEXITSTATUS(status_a) == 0) << status_a;
  ASSERT_TRUE(WIFEXITED(status_b) && WEXITSTATUS(status_b) == 0) << status_b;
  EXPECT_EQ(lines_a.size(), static_cast<size_t>(kCount));
  EXPECT_EQ(lines_b.size(), static_cast<size_t>(kCount));
  EXPECT_EQ(RawQuery(path, "SELECT count(*) FROM records"), std::to_string(2 * kCount));
  EXPECT_EQ(RawQuery(path, "SELECT count(*) FROM records WHERE worker = 'writer-a'"), std::to_string(kCount));
  auto uids = UidsIn(path);
  for (const auto& uid : lines_a) EXPECT_TRUE(uids.count(uid)) << uid;
  for (const auto& uid : lines_b) EXPECT_TRUE(uids.count(uid)) << uid;
}

TEST(CrashTest, SigkillAtRandomPointsKeepsEveryCommittedRecord) {
  TempDir dir;
  std::string path = dir.File("crash.db");
  std::mt19937 rng(12345);
  std::set<std::string> committed;
  constexpr int kRounds = 8;
  for (int round = 0; round < kRounds; ++round) {
    long batch = std::uniform_int_distribution<long>(1, 50)(rng);
    Writer writer = StartWriter(path, "r" + std::to_string(round % 3), 100000000, batch);
    // Round 0 may die before the file exists; later rounds die mid-stream,
    // sometimes during WAL checkpoints (every ~1000 pages).
    int delay_ms = std::uniform_int_distribution<int>(round == 0 ? 1 : 30, 400)(rng);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ASSERT_EQ(::kill(writer.pid, SIGKILL), 0);
    auto lines = ReadLines(writer.out_fd);
    int status = WaitFor(writer.pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "writer ended on its own (status " << status << ") instead of being killed";
    committed.insert(lines.begin(), lines.end());

    if (!std::filesystem::exists(path)) continue;
    EXPECT_EQ(RawQuery(path, "PRAGMA integrity_check"), "ok") << "round " << round;
    auto uids = UidsIn(path);
    size_t missing = 0;
    for (const auto& uid : committed) missing += uids.count(uid) == 0;
    EXPECT_EQ(missing, 0u) << "round " << round << ": " << missing << " of " << committed.size()
                           << " committed records are gone";
    // And tunefarm itself opens the file (quick_check on open) and can write again.
    auto db = Database::Open(path);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    EXPECT_EQ((*db)->Stats()->records, static_cast<int64_t>(uids.size()));
  }
  std::printf("crash test: %zu records reported committed across %d kills\n", committed.size(), kRounds);
  EXPECT_GT(committed.size(), 100u) << "the writers were killed before committing much; the test proves little";
}

}  // namespace
}  // namespace tunefarm::database
