// ReadTokenFile (token_file.h).
#include "tunefarm/rpc/token_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tunefarm::rpc {

Result<std::string> ReadTokenFile(const std::string& path) {
  std::error_code ec;
  const std::string where = std::filesystem::absolute(path, ec).string();
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int error = errno;
    return Status::NotFound("--token-file: cannot read " + where + ": " +
                            (error != 0 ? std::strerror(error) : "it cannot be opened"));
  }
  std::stringstream ss;
  ss << in.rdbuf();
  std::string token = ss.str();
  const char* space = " \t\r\n";
  size_t first = token.find_first_not_of(space);
  if (first == std::string::npos) return Status::InvalidArgument("--token-file: " + where + " is empty");
  token = token.substr(first, token.find_last_not_of(space) - first + 1);
  if (token.find_first_of(space) != std::string::npos) {
    return Status::InvalidArgument("--token-file: " + where + " must hold the token alone, on one line");
  }
  return token;
}

}  // namespace tunefarm::rpc
