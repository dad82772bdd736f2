#include "core/cli_format.h"

#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <strings.h>

namespace lockstep {
namespace {

// redis-cli prints status and error texts with "%s", so they end at the first NUL byte.
std::string_view UpToNul(std::string_view s) {
  const size_t nul = s.find('\0');
  return nul == std::string_view::npos ? s : s.substr(0, nul);
}

// sds.c sdscatrepr. redis-cli never calls setlocale, so isprint is the C locale's: 0x20-0x7e.
void AppendRepr(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\a': out += "\\a"; break;
      case '\b': out += "\\b"; break;
      default: {
        const auto byte = static_cast<unsigned char>(c);
        if (byte >= 0x20 && byte <= 0x7e) {
          out += c;
        } else {
          out += "\\x";
          out += kHex[byte >> 4];
          out += kHex[byte & 0xf];
        }
      }
    }
  }
  out += '"';
}

// redis-cli.c cliIsMultilineValueTTY: whether a map value goes on its own lines.
bool IsMultiline(const Reply& r) {
  switch (r.type) {
    case Reply::Type::kArray:
    case Reply::Type::kSet:
      if (r.elements.empty()) return false;
      if (r.elements.size() > 1) return true;
      return IsMultiline(r.elements[0]);
    case Reply::Type::kMap:
      if (r.elements.empty()) return false;
      if (r.elements.size() > 2) return true;
      return IsMultiline(r.elements[1]);
    default:
      return false;
  }
}

// redis-cli.c cliFormatReplyTTY. `prefix` is the indentation of the enclosing aggregates; the
// first line of a nested aggregate carries no prefix because its parent already wrote the
// index ("2) 1) ...").
void FormatTty(std::string& out, const Reply& r, const std::string& prefix) {
  switch (r.type) {
    case Reply::Type::kError:
      out += "(error) ";
      out += UpToNul(r.str);
      out += '\n';
      return;
    case Reply::Type::kStatus:
      out += UpToNul(r.str);
      out += '\n';
      return;
    case Reply::Type::kInteger:
      out += "(integer) ";
      out += std::to_string(r.integer);
      out += '\n';
      return;
    case Reply::Type::kDouble:
      // hiredis hands redis-cli the double's text as the server sent it; Reply keeps that
      // text in str ("%.17g" in Redis 7.0).
      out += "(double) ";
      out += UpToNul(r.str);
      out += '\n';
      return;
    case Reply::Type::kBulk:
      AppendRepr(out, r.str);
      out += '\n';
      return;
    case Reply::Type::kNull:
    case Reply::Type::kNullArray:
      out += "(nil)\n";
      return;
    case Reply::Type::kBool:
      out += r.integer ? "(true)\n" : "(false)\n";
      return;
    case Reply::Type::kArray:
    case Reply::Type::kMap:
    case Reply::Type::kSet:
      break;
  }
  assert(r.type == Reply::Type::kArray || r.type == Reply::Type::kMap ||
         r.type == Reply::Type::kSet);
  const bool is_map = r.type == Reply::Type::kMap;
  assert(!is_map || r.elements.size() % 2 == 0);
  if (r.elements.empty()) {
    out += r.type == Reply::Type::kArray ? "(empty array)\n"
           : is_map                      ? "(empty hash)\n"
                                         : "(empty set)\n";
    return;
  }

  // Width of the largest index; nested lines are indented by that width plus 2 ("10) ").
  size_t count = is_map ? r.elements.size() / 2 : r.elements.size();
  size_t index_width = 0;
  do {
    ++index_width;
    count /= 10;
  } while (count != 0);
  const std::string nested_prefix = prefix + std::string(index_width + 2, ' ');
  const char separator = r.type == Reply::Type::kSet ? '~' : is_map ? '#' : ')';

  for (size_t i = 0; i < r.elements.size(); ++i) {
    const size_t human_index = (is_map ? i / 2 : i) + 1;
    if (i != 0) out += prefix;
    const std::string number = std::to_string(human_index);
    assert(number.size() <= index_width);
    out.append(index_width - number.size(), ' ');
    out += number;
    out += separator;
    out += ' ';
    FormatTty(out, r.elements[i], nested_prefix);
    if (is_map) {
      // The key's trailing newline becomes " => " and the value follows on the same line,
      // or on the next lines when it spans several.
      ++i;
      out.pop_back();
      out += " => ";
      if (IsMultiline(r.elements[i])) {
        out += '\n';
        out += nested_prefix;
      }
      FormatTty(out, r.elements[i], nested_prefix);
    }
  }
}

bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

// isspace() in the C locale, which is what sdssplitargs uses to skip blanks between arguments.
bool IsCSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

}  // namespace

std::string FormatCli(const Reply& r) {
  std::string out;
  FormatTty(out, r, "");
  return out;
}

std::optional<Argv> SplitArgs(std::string_view line) {
  line = UpToNul(line);
  // Reading past the end yields '\0', as it does in the C string sdssplitargs walks.
  auto at = [&line](size_t i) { return i < line.size() ? line[i] : '\0'; };

  Argv argv;
  size_t p = 0;
  while (true) {
    while (p < line.size() && IsCSpace(line[p])) ++p;
    if (p >= line.size()) return argv;

    std::string current;
    bool in_double_quotes = false;
    bool in_single_quotes = false;
    bool done = false;
    while (!done) {
      const char c = at(p);
      if (in_double_quotes) {
        if (c == '\\' && at(p + 1) == 'x' && IsHexDigit(at(p + 2)) && IsHexDigit(at(p + 3))) {
          current += static_cast<char>(HexValue(at(p + 2)) * 16 + HexValue(at(p + 3)));
          p += 3;
        } else if (c == '\\' && at(p + 1) != '\0') {
          ++p;
          switch (at(p)) {
            case 'n': current += '\n'; break;
            case 'r': current += '\r'; break;
            case 't': current += '\t'; break;
            case 'b': current += '\b'; break;
            case 'a': current += '\a'; break;
            default: current += at(p); break;
          }
        } else if (c == '"') {
          // The closing quote must be followed by a blank or the end of the line.
          if (at(p + 1) != '\0' && !IsCSpace(at(p + 1))) return std::nullopt;
          done = true;
        } else if (c == '\0') {
          return std::nullopt;  // Unterminated quotes.
        } else {
          current += c;
        }
      } else if (in_single_quotes) {
        if (c == '\\' && at(p + 1) == '\'') {
          ++p;
          current += '\'';
        } else if (c == '\'') {
          if (at(p + 1) != '\0' && !IsCSpace(at(p + 1))) return std::nullopt;
          done = true;
        } else if (c == '\0') {
          return std::nullopt;
        } else {
          current += c;
        }
      } else {
        switch (c) {
          // Unlike the skipping above, only these four end an unquoted argument: "a\vb" is
          // one argument.
          case ' ':
          case '\n':
          case '\r':
          case '\t':
          case '\0':
            done = true;
            break;
          case '"': in_double_quotes = true; break;
          case '\'': in_single_quotes = true; break;
          default: current += c; break;
        }
      }
      if (at(p) != '\0') ++p;
    }
    argv.push_back(std::move(current));
  }
}

CliLine ParseCliLine(std::string_view line) {
  CliLine result;
  line = UpToNul(line);
  if (line.empty()) return result;  // kSkip

  std::optional<Argv> split = SplitArgs(line);
  if (!split) {
    result.kind = CliLine::Kind::kPrint;
    result.text = "Invalid argument(s)\n";
    return result;
  }
  Argv& argv = *split;
  if (argv.empty()) return result;  // Only blanks: kSkip.

  // A repeat count: the whole first argument must be read by strtol (which also takes leading
  // blanks and a sign, and stops at an embedded NUL, hence c_str()).
  size_t skip = 0;
  long repeat = 1;
  {
    const char* first = argv[0].c_str();
    char* end = nullptr;
    errno = 0;
    const long parsed = std::strtol(first, &end, 10);
    if (argv.size() > 1 && *end == '\0') {
      if (errno == ERANGE || errno == EINVAL || parsed <= 0) {
        result.kind = CliLine::Kind::kPrint;
        result.text = "Invalid redis-cli repeat command option value.\n";
        return result;
      }
      repeat = parsed;
      skip = 1;
    }
  }

  // These checks look at argv[0] even when it was the repeat count, as redis-cli's do.
  const char* first = argv[0].c_str();
  if (strcasecmp(first, "quit") == 0 || strcasecmp(first, "exit") == 0) {
    result.kind = CliLine::Kind::kExit;
    return result;
  }
  if (first[0] == ':') {
    result.kind = CliLine::Kind::kPrint;
    if (strcasecmp(first, ":set") == 0 && argv.size() >= 2) {
      const char* name = argv[1].c_str();
      if (strcasecmp(name, "hints") != 0 && strcasecmp(name, "nohints") != 0) {
        result.text = "unknown redis-cli preference '" + std::string(name) + "'\n";
      }
    } else {
      result.text = "unknown redis-cli internal command '" + std::string(first) + "'\n";
    }
    return result;
  }
  if (strcasecmp(first, "restart") == 0) {
    result.kind = CliLine::Kind::kPrint;
    result.text = "Use 'restart' only in Lua debugging mode.\n";
    return result;
  }
  if (argv.size() == 3 && strcasecmp(first, "connect") == 0) return result;  // kSkip
  if (argv.size() == 1 && strcasecmp(first, "clear") == 0) {
    result.kind = CliLine::Kind::kPrint;
    result.text = "\x1b[H\x1b[2J";
    return result;
  }

  const char* command = argv[skip].c_str();
  if (strcasecmp(command, "help") == 0 || strcasecmp(command, "?") == 0) {
    result.kind = CliLine::Kind::kHelp;
    return result;
  }
  result.kind = CliLine::Kind::kCommand;
  result.repeat = repeat;
  result.argv.assign(std::make_move_iterator(argv.begin() + static_cast<long>(skip)),
                     std::make_move_iterator(argv.end()));
  return result;
}

}  // namespace lockstep
