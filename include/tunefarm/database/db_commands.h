// The logic behind `tunefarm db ...`: one function per subcommand, writing to
// the given streams and returning the process exit code (0 ok, 1 user error
// such as a missing or bad file, 2 internal error). cli/db_command.cpp only
// parses arguments into DbCommandOptions and calls these, so they are tested
// directly.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "tunefarm/database/record.h"

namespace tunefarm::database {

struct DbCommandOptions {
  std::string db_path = "tunefarm.db";  // --db
  std::string system_db_path;           // --system-db (best, top); empty: none
  std::string workload;                 // --workload NAME|HASH (a name must be unique in the log)
  std::string target;                   // --target STRING
  HardwareFingerprint fingerprint;      // --isa --arch --features --cores --toolchain
  int k = 10;                           // -k
  std::string file = "-";               // export: output, import: input; "-" is stdout/stdin
  std::vector<std::string> sources;     // merge: databases to merge in
  bool json = false;                    // --json: machine-readable output
};

int RunDbStats(const DbCommandOptions& options, std::ostream& out, std::ostream& err);
int RunDbBest(const DbCommandOptions& options, std::ostream& out, std::ostream& err);
int RunDbTop(const DbCommandOptions& options, std::ostream& out, std::ostream& err);
int RunDbExport(const DbCommandOptions& options, std::ostream& out, std::ostream& err);
// Reads options.file; `in` is used when the file is "-".
int RunDbImport(const DbCommandOptions& options, std::istream& in, std::ostream& out, std::ostream& err);
int RunDbMerge(const DbCommandOptions& options, std::ostream& out, std::ostream& err);
int RunDbPrune(const DbCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace tunefarm::database
