// Bearer tokens from files, for clients and workers: a token is never taken
// on the command line, where `ps` and shell history would show it.
#pragma once

#include <string>

#include "tunefarm/common/status.h"

namespace tunefarm::rpc {

// The token alone in a file (surrounding blank space and one trailing newline
// allowed); errors name --token-file, the file's absolute path and why.
Result<std::string> ReadTokenFile(const std::string& path);

}  // namespace tunefarm::rpc
