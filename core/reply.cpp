#include "core/reply.h"

#include <algorithm>
#include <string_view>
#include <utility>

namespace lockstep {

Reply Reply::Status(std::string s) {
  Reply r;
  r.type = Type::kStatus;
  r.str = std::move(s);
  return r;
}

Reply Reply::Error(std::string s) {
  Reply r;
  r.type = Type::kError;
  r.str = std::move(s);
  return r;
}

Reply Reply::Integer(int64_t v) {
  Reply r;
  r.type = Type::kInteger;
  r.integer = v;
  return r;
}

Reply Reply::Bulk(std::string s) {
  Reply r;
  r.type = Type::kBulk;
  r.str = std::move(s);
  return r;
}

Reply Reply::Null() { return Reply{}; }

Reply Reply::NullArray() {
  Reply r;
  r.type = Type::kNullArray;
  return r;
}

Reply Reply::Array(std::vector<Reply> elements) {
  Reply r;
  r.type = Type::kArray;
  r.elements = std::move(elements);
  return r;
}

Reply Reply::Bool(bool v) {
  Reply r;
  r.type = Type::kBool;
  r.integer = v ? 1 : 0;
  return r;
}

bool Reply::operator==(const Reply& o) const {
  if (type != o.type) return false;
  switch (type) {
    case Type::kStatus:
    case Type::kError:
    case Type::kBulk:
    case Type::kDouble:  // The text is what a client sees; compare that.
      return str == o.str;
    case Type::kInteger:
    case Type::kBool:
      return integer == o.integer;
    case Type::kNull:
    case Type::kNullArray:
      return true;
    case Type::kArray:
    case Type::kMap:
    case Type::kSet:
      return elements == o.elements;
  }
  return false;
}

Reply Reply::AsSeenByResp2Client() const {
  switch (type) {
    case Type::kNullArray: return Null();
    case Type::kDouble: return Bulk(str);
    case Type::kBool: return Integer(integer);
    case Type::kArray:
    case Type::kMap:
    case Type::kSet: {
      std::vector<Reply> out;
      out.reserve(elements.size());
      for (const Reply& e : elements) out.push_back(e.AsSeenByResp2Client());
      return Array(std::move(out));
    }
    default: return *this;
  }
}

std::string Reply::Debug() const {
  switch (type) {
    case Type::kStatus: return "+" + str;
    case Type::kError: return "-" + str;
    case Type::kInteger: return std::to_string(integer);
    case Type::kBulk: return "\"" + str + "\"";
    case Type::kNull: return "(nil)";
    case Type::kNullArray: return "(nil array)";
    case Type::kDouble: return "(double) " + str;
    case Type::kBool: return integer ? "(true)" : "(false)";
    case Type::kArray:
    case Type::kMap:
    case Type::kSet: {
      std::string out = type == Type::kArray ? "[" : type == Type::kMap ? "%{" : "~{";
      for (size_t i = 0; i < elements.size(); ++i) {
        if (i) out += ", ";
        out += elements[i].Debug();
      }
      out += type == Type::kArray ? "]" : "}";
      return out;
    }
  }
  return "?";
}

namespace {

// Appends r's Debug() text while out stays under `limit` bytes; false once it is reached.
bool AppendBounded(const Reply& r, std::string* out, size_t limit) {
  const auto put = [&](std::string_view text) {
    if (out->size() + text.size() <= limit) {
      out->append(text);
      return true;
    }
    out->append(text.substr(0, limit - std::min(limit, out->size())));
    return false;
  };
  switch (r.type) {
    case Reply::Type::kArray:
    case Reply::Type::kMap:
    case Reply::Type::kSet: {
      if (!put(r.type == Reply::Type::kArray ? "[" : r.type == Reply::Type::kMap ? "%{" : "~{")) {
        return false;
      }
      for (size_t i = 0; i < r.elements.size(); ++i) {
        if (i && !put(", ")) return false;
        if (!AppendBounded(r.elements[i], out, limit)) return false;
      }
      return put(r.type == Reply::Type::kArray ? "]" : "}");
    }
    case Reply::Type::kBulk:
      return put("\"") && put(r.str) && put("\"");
    case Reply::Type::kStatus: return put("+") && put(r.str);
    case Reply::Type::kError: return put("-") && put(r.str);
    default: return put(r.Debug());
  }
}

}  // namespace

void Reply::AppendDebug(std::string* out, size_t max_bytes) const {
  const size_t limit = out->size() + max_bytes;
  if (!AppendBounded(*this, out, limit)) {
    out->append("... (cut at " + std::to_string(max_bytes) + " bytes)");
  }
}

}  // namespace lockstep
