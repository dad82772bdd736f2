#include "base/write_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace lockstep {

bool WriteFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& write,
                         std::string* error, size_t* bytes) {
  const std::string tmp = path + ".tmp";
  const auto fail = [&](const std::string& what) {
    *error = what + ": " + (errno != 0 ? std::strerror(errno) : "an I/O error");
    std::remove(tmp.c_str());
    return false;
  };
  errno = 0;
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) return fail("cannot write " + path);
  write(out);
  out.flush();
  if (!out) return fail("write to " + path + " failed");
  if (bytes != nullptr) *bytes = static_cast<size_t>(out.tellp());
  out.close();
  if (!out) return fail("write to " + path + " failed");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return fail("cannot rename " + tmp + " to " + path);
  return true;
}

}  // namespace lockstep
