// tunefarm_db_writer: appends synthetic tuning records to a database, for the
// concurrency and crash tests (and for trying the database by hand).
//
//   tunefarm_db_writer DB_PATH TAG COUNT [BATCH]
//
// Commits COUNT records of workload "wl-TAG" in transactions of BATCH records
// (default 1). After each commit returns it writes the uid of every record in
// that transaction to stdout, one per line, with a raw write(2): a line on
// stdout therefore proves the record was committed before it was printed.
// Exit status: 0 done, 1 bad arguments, 2 database error (message on stderr).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tunefarm/database/database.h"

namespace {

using tunefarm::database::Database;
using tunefarm::database::TuningRecord;

bool WriteAll(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(STDOUT_FILENO, text.data() + done, text.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s DB_PATH TAG COUNT [BATCH]\n", argv[0]);
    return 1;
  }
  const std::string path = argv[1];
  const std::string tag = argv[2];
  const long count = std::atol(argv[3]);
  const long batch = argc > 4 ? std::max(1L, std::atol(argv[4])) : 1L;

  auto db = Database::Open(path);
  if (!db.ok()) {
    std::fprintf(stderr, "%s\n", db.status().ToString().c_str());
    return 2;
  }
  const std::string workload_hash = "wl-" + tag;
  if (auto status = (*db)->CommitWorkload({workload_hash, "writer_" + tag, "workload text of " + tag});
      !status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 2;
  }
  tunefarm::database::Target target{"llvm -mtriple=x86_64-linux-gnu -mcpu=znver4",
                                    {"x86_64", {"avx2", "avx512f"}, "znver4", 2, "llvm-16"}};
  long committed = 0;
  while (committed < count) {
    std::vector<TuningRecord> records;
    for (long i = 0; i < batch && committed + i < count; ++i) {
      TuningRecord record;
      record.uid = tunefarm::database::NewRecordUid();
      record.workload_hash = workload_hash;
      record.target = target;
      record.trace = "trace " + tag + " #" + std::to_string(committed + i);
      record.run_secs = {1e-3 * (1 + (committed + i) % 97), 1.1e-3};
      record.worker = "writer-" + tag;
      record.device = "cpu";
      records.push_back(std::move(record));
    }
    auto ids = (*db)->CommitRecords(records);
    if (!ids.ok()) {
      std::fprintf(stderr, "%s\n", ids.status().ToString().c_str());
      return 2;
    }
    std::string lines;
    for (const TuningRecord& record : records) lines += record.uid + "\n";
    if (!WriteAll(lines)) return 2;
    committed += static_cast<long>(records.size());
  }
  return 0;
}
