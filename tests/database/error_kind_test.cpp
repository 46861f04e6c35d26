// The log's error kinds (database::ErrorKind, generated from the list in
// common/error_kinds.h): the integer each is stored as in records.error_kind
// and its name are pinned here, since logs written before must still read;
// every kind round trips through its name, a commit and read of the SQLite
// file, and JSON Lines (RecordToJson / RecordFromJson).
#include <gtest/gtest.h>

#include <iterator>
#include <string>
#include <vector>

#include "test_util.h"
#include "tunefarm/common/error_kinds.h"
#include "tunefarm/database/database.h"
#include "tunefarm/database/jsonl.h"

namespace tunefarm::database {
namespace {

using testing::CpuTarget;
using testing::MakeFailedRecord;
using testing::MakeRecord;
using testing::MakeWorkload;
using testing::OpenOrDie;
using testing::RawQuery;
using testing::TempDir;

struct Pinned {
  ErrorKind kind;
  int stored;  // records.error_kind: never changes
  const char* name;
};
constexpr Pinned kPinned[] = {
    {ErrorKind::kNone, 0, "none"},       {ErrorKind::kCompileError, 1, "compile_error"},
    {ErrorKind::kRuntimeError, 2, "runtime_error"}, {ErrorKind::kTimeout, 3, "timeout"},
    {ErrorKind::kWrongResult, 4, "wrong_result"},   {ErrorKind::kWorkerLost, 5, "worker_lost"},
    {ErrorKind::kOther, 6, "other"},
};

#define TF_COUNT_KIND_(...) +1
constexpr size_t kStoredKinds = 0 TF_STORED_ERROR_KINDS(TF_COUNT_KIND_);
#undef TF_COUNT_KIND_

TEST(StoredErrorKindTest, NumbersAndNamesArePinned) {
  EXPECT_EQ(std::size(kPinned), kStoredKinds) << "a stored kind was added: pin its number and name here";
  for (const Pinned& p : kPinned) {
    EXPECT_EQ(static_cast<int>(p.kind), p.stored) << p.name;
    EXPECT_EQ(ErrorKindName(p.kind), p.name);
    auto parsed = ParseErrorKind(p.name);
    ASSERT_TRUE(parsed.ok()) << p.name;
    EXPECT_EQ(*parsed, p.kind);
  }
  // The generated list and the pinned one are the same, in order.
  std::vector<std::string> listed;
#define TF_LIST_NAME_(Kind, name, stored) listed.push_back(name);
  TF_STORED_ERROR_KINDS(TF_LIST_NAME_)
#undef TF_LIST_NAME_
  ASSERT_EQ(listed.size(), std::size(kPinned));
  for (size_t i = 0; i < listed.size(); ++i) EXPECT_EQ(listed[i], kPinned[i].name);

  auto unknown = ParseErrorKind("segfault");
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "unknown error kind 'segfault' (expected none, compile_error, runtime_error, timeout, wrong_result, "
            "worker_lost or other)");
  EXPECT_EQ(ErrorKindName(static_cast<ErrorKind>(7)), "other");  // a value outside the enum
}

TEST(StoredErrorKindTest, EveryKindRoundTripsThroughTheFileAndJsonLines) {
  TempDir dir;
  const std::string path = dir.File("log.db");
  auto db = OpenOrDie(path);
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->CommitWorkload(MakeWorkload("w1")).ok());
  std::string expected_column;
  for (const Pinned& p : kPinned) {
    TuningRecord r = p.kind == ErrorKind::kNone ? MakeRecord("w1", CpuTarget(), {0.001}, "ok")
                                                : MakeFailedRecord("w1", CpuTarget(), p.kind);
    r.trace = std::string("trace of ") + p.name;
    ASSERT_TRUE(db->CommitRecord(r).ok()) << p.name;
    expected_column += (expected_column.empty() ? "" : "\n") + std::to_string(p.stored);
  }
  std::vector<TuningRecord> read;
  ASSERT_TRUE(db->ForEachRecord({}, [&](const TuningRecord& r) {
                  read.push_back(r);
                  return Status::OK();
                }).ok());
  db.reset();
  // The integers in the file, read without the Database class.
  EXPECT_EQ(RawQuery(path, "SELECT error_kind FROM records ORDER BY id"), expected_column);
  ASSERT_EQ(read.size(), std::size(kPinned));
  for (size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].error_kind, kPinned[i].kind) << kPinned[i].name;
    nlohmann::json line = RecordToJson(read[i]);
    EXPECT_EQ(line["error_kind"], kPinned[i].name);
    auto back = RecordFromJson(line);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->error_kind, kPinned[i].kind) << kPinned[i].name;
  }
}

TEST(StoredErrorKindTest, ARecordWithAnIntegerOutsideTheListIsRefused) {
  for (int value : {-1, 7, 100}) {
    TuningRecord r = MakeFailedRecord("w1", CpuTarget(), ErrorKind::kOther);
    r.error_kind = static_cast<ErrorKind>(value);
    Status st = ValidateRecord(r);
    EXPECT_FALSE(st.ok()) << value;
    EXPECT_EQ(st.message(), "record has an unknown error kind") << value;
  }
  EXPECT_TRUE(ValidateRecord(MakeFailedRecord("w1", CpuTarget(), ErrorKind::kOther)).ok());
}

}  // namespace
}  // namespace tunefarm::database
