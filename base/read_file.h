// Reading a file that a user names (a scenario, a script, a corpus entry) without trusting it:
// only a regular file is read, opened so that a FIFO nobody writes to cannot block the open, and
// at most a stated number of bytes (a file under /proc says it is empty and may hold anything,
// or fail to read, as /proc/self/mem does).
#ifndef LOCKSTEP_BASE_READ_FILE_H_
#define LOCKSTEP_BASE_READ_FILE_H_

#include <cstddef>
#include <string>

namespace lockstep {

// What a file mode is when it is not a regular file, for a message: "a directory", "a pipe",
// "a character device" ...
const char* FileKindOf(unsigned mode);

// The whole of `path` into *out, when it is a regular file of at most `max_bytes` (symbolic
// links are followed). Else false, with *error saying what it is instead ("a pipe, not a
// regular file", "more than 1048576 bytes", "cannot read: Input/output error").
bool ReadRegularFile(const std::string& path, size_t max_bytes, std::string* out,
                     std::string* error);

}  // namespace lockstep

#endif  // LOCKSTEP_BASE_READ_FILE_H_
