// ASCII case folding, as Redis folds command names and options (its strcasecmp, in the C
// locale): only A-Z change, every other byte stays what it is, whatever the process's locale.
#ifndef LOCKSTEP_BASE_ASCII_H_
#define LOCKSTEP_BASE_ASCII_H_

#include <algorithm>
#include <string>
#include <string_view>

namespace lockstep {

inline char AsciiLower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// `s` with A-Z folded to a-z.
inline std::string AsciiLowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

// Whether a and b are the same but for the case of their ASCII letters.
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return AsciiLower(x) == AsciiLower(y);
         });
}

}  // namespace lockstep

#endif  // LOCKSTEP_BASE_ASCII_H_
