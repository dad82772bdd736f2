#include "base/read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace lockstep {

const char* FileKindOf(unsigned mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a pipe";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

bool ReadRegularFile(const std::string& path, size_t max_bytes, std::string* out,
                     std::string* error) {
  out->clear();
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer, for ever.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *error = std::string("cannot open: ") + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    *error = std::string("cannot read: ") + std::strerror(errno);
    close(fd);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = std::string(FileKindOf(st.st_mode)) + ", not a regular file";
    close(fd);
    return false;
  }
  if (static_cast<unsigned long long>(st.st_size) > max_bytes) {
    *error = std::to_string(st.st_size) + " bytes, more than " + std::to_string(max_bytes);
    close(fd);
    return false;
  }
  // Read one byte past the limit to tell a file that grew (or lies about its size) from one
  // that fits.
  char buf[1 << 16];
  while (true) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = std::string("cannot read: ") + std::strerror(errno);
      close(fd);
      return false;
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
    if (out->size() > max_bytes) {
      *error = "more than " + std::to_string(max_bytes) + " bytes";
      close(fd);
      out->clear();
      return false;
    }
  }
  close(fd);
  return true;
}

}  // namespace lockstep
