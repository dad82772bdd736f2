#include "core/reply.h"

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

}  // namespace lockstep
