// Writing an output file so that a reader never sees half of it and a failure leaves nothing
// behind: the content goes to PATH.tmp, which is renamed over PATH only when every byte was
// written; on any failure (a full disk, a file-size limit) the temporary file is removed and
// PATH is as it was.
#ifndef LOCKSTEP_BASE_WRITE_FILE_H_
#define LOCKSTEP_BASE_WRITE_FILE_H_

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>

namespace lockstep {

// Writes what `write` puts on the stream into `path` through `path`.tmp. False on failure, with
// *error naming the path and the cause ("cannot write P: No space left on device", "write to P
// failed: File too large"). *bytes (if given) is how many bytes were written.
bool WriteFileAtomically(const std::string& path, const std::function<void(std::ostream&)>& write,
                         std::string* error, size_t* bytes = nullptr);

}  // namespace lockstep

#endif  // LOCKSTEP_BASE_WRITE_FILE_H_
