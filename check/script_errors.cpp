// script_errors: a lock's scripts and commands answer with an error only where the protocol
// expects one. Judged in every run (history::kJudgedInEveryRun): a scenario that breaks a script
// on purpose says so in [expect].
//
// Every exec whose reply is an error is a violation "error_reply", except the errors a Redis
// client handles as part of the protocol: READONLY (a write sent to a replica, as after a
// failover), MOVED, ASK, TRYAGAIN and CLUSTERDOWN (Redis Cluster redirects and outages),
// LOADING and MASTERDOWN (a node starting or cut off from its master), NOSCRIPT (EVALSHA of a
// script the node has not cached: the client sends EVAL), BUSY from a node that another script
// keeps busy (the command never ran), and a live run's EXECABORT (below). A lost connection is not an error reply and never
// reaches this rule. What it catches: a script's runtime error (`ERR user_script:3: Attempt to
// modify a readonly table`), a compile error, WRONGTYPE, OOM, a cluster script touching an
// undeclared key, lockstep's stops of a script past its step or memory budget. A caller cannot
// tell what a failed script did to the lock (its writes before the error stay), so whatever
// the client then does is built on a guess.
#include <array>
#include <optional>
#include <string>
#include <variant>

#include "check/property.h"
#include "core/reply.h"
#include "history/notes.h"

namespace lockstep::check {

namespace {

using history::FactsPass;

// The error codes (the reply's first word) a client expects and handles.
// EXECABORT: no lock protocol sends MULTI; the live driver wraps each command in a transaction
// with its sequence counter's INCR, which a node that has turned replica refuses when queued,
// aborting the transaction: the READONLY of a write sent to a replica, in the harness's words.
constexpr std::array<std::string_view, 9> kExpected = {
    "READONLY", "MOVED",      "ASK",      "TRYAGAIN", "CLUSTERDOWN",
    "LOADING",  "MASTERDOWN", "NOSCRIPT", "EXECABORT"};
constexpr size_t kReplyKept = 400;  // Bytes of an error's text an explanation quotes.

struct ErrorReply {
  history::Seq seq = 0;
  int64_t t_us = 0;
  std::string node;             // The node that answered.
  int client = history::kNone;
  int thread = history::kNone;  // The client thread whose operation sent it, if any.
  std::string label;            // The command's label: "unlock", "acquire" ...
  std::string reply;            // Without the leading '-', cut at kReplyKept bytes.
};

// An exec's error reply without its '-', or nullopt when it answered no error. Every exec of a
// run passes here, so a reply in memory is not rendered as text (history::ReplyText) to tell.
std::optional<std::string_view> ErrorOf(const history::Event& e) {
  if (const auto* r = std::get_if<history::ReplyDetail>(&e.detail); r && r->reply != nullptr) {
    if (!r->reply->is_error()) return std::nullopt;
    return std::string_view(r->reply->str);
  }
  std::string_view text = e.source;  // As read from a file.
  if (text.empty()) {
    if (const auto* t = std::get_if<history::Text>(&e.detail)) text = t->text;
  }
  if (text.empty() || text.front() != '-') return std::nullopt;
  return text.substr(1);
}

bool Expected(std::string_view error) {
  const std::string_view code = error.substr(0, error.find(' '));
  for (std::string_view e : kExpected) {
    if (code == e) return true;
  }
  // A node busy with another script refuses the command; lockstep's stop of this script past
  // its budget is this script's own failure.
  return code == "BUSY" && error.find("lockstep stopped the script") == std::string_view::npos;
}

// "3" from "..., on @user_script:3." (the line a script error names), or "".
std::string ScriptLine(std::string_view error) {
  const std::string_view marker = "on @user_script:";
  const size_t at = error.rfind(marker);
  if (at == std::string_view::npos) return "";
  std::string line;
  for (size_t i = at + marker.size(); i < error.size() && error[i] >= '0' && error[i] <= '9'; ++i) {
    line += error[i];
  }
  return line;
}

class ScriptErrors : public PropertyChecker {
 public:
  explicit ScriptErrors(const CheckOptions& options) : found_(options.max_violations) {}

  bool WantsEvents() const override { return true; }

  void OnEvent(const FactsPass& f, const history::Event& e) override {
    if (e.type != history::EventType::kExec) return;
    const std::optional<std::string_view> error = ErrorOf(e);
    if (!error || Expected(*error)) return;
    const FindingKey key{e.t_us, e.seq, 0, static_cast<int64_t>(e.seq), history::kNone,
                         history::kNone};
    auto [number, x] = found_.Add(key);
    if (x == nullptr) return;
    x->seq = e.seq;
    x->t_us = e.t_us;
    x->node = std::string(f.names().Str(e.process));
    x->client = e.peer == history::names::kNone ? history::kNone : f.ProcessNamed(e.peer);
    x->thread = f.ExecThread(e);
    x->label = std::string(f.names().Str(e.op));
    x->reply = std::string(error->substr(0, kReplyKept));
    if (error->size() > kReplyKept) x->reply += "...";
  }

  PropertyResult Result(const Narrator& n) override {
    return Conclude(history::kScriptErrors, found_, [&](const FindingKey&, const ErrorReply& r) {
      Violation v;
      v.kind = "error_reply";
      v.to_us = r.t_us;
      v.events = {r.seq};
      std::string who = r.thread != history::kNone   ? n.Thread(r.thread) + "'s "
                        : r.client != history::kNone ? n.ProcessName(r.client) + "'s "
                                                     : "";
      if (r.thread != history::kNone) v.threads = {n.Thread(r.thread)};
      const std::string line = ScriptLine(r.reply);
      v.explanation = who + r.label + " on " + r.node + " at " + Seconds(r.t_us) +
                      " answered an error: " + r.reply + " ";
      v.explanation +=
          !line.empty()
              ? "The lock script failed at line " + line +
                    ": a caller cannot tell what a failed script did to the lock (the writes it "
                    "made before the error stay), so an error from a lock script is a bug to "
                    "fix, not an answer."
              : "The protocol expects no such error here (only READONLY, a cluster redirect, "
                "LOADING, MASTERDOWN, NOSCRIPT or a busy node): the lock's scripts or commands "
                "are broken for this deployment.";
      return v;
    });
  }

 private:
  Findings<ErrorReply> found_;
};

}  // namespace

std::unique_ptr<PropertyChecker> MakeScriptErrors(const CheckOptions& options) {
  return std::make_unique<ScriptErrors>(options);
}

}  // namespace lockstep::check
