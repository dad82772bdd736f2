// lockstep history: a saved history file's forms. `dump` prints any form as JSON Lines (what a
// person or jq reads), `convert` writes it in another form; both check the file's recorded hash
// against its events on the way.
#include <boost/program_options.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli/common.h"
#include "cli/subcommands.h"
#include "history/jsonl.h"
#include "history/reader.h"
#include "history/writer.h"

namespace po = boost::program_options;

namespace lockstep::cli {

namespace {

constexpr const char* kHistoryHelp =
    "usage: lockstep history dump HISTORY [--out FILE]\n"
    "       lockstep history convert HISTORY --to FORMAT --out FILE\n"
    "\n"
    "A run keeps its history in one of three forms (`lockstep run --history`): binary, the\n"
    "default (history.bin, about 11 bytes an event), jsonl (one JSON object per line, about\n"
    "150 bytes an event) or jsonl.gz. Every command that reads a history reads them all.\n"
    "\n"
    "  dump     prints the history as JSON Lines (to --out FILE, or standard output): the\n"
    "           bytes the jsonl form holds, whatever the file's form (docs/history.md has\n"
    "           the fields)\n"
    "  convert  writes the history in another form: --to binary, jsonl or jsonl.gz\n"
    "\n"
    "The history's hash is over its JSON Lines, so it is the same in every form. Both\n"
    "commands hash every event as they read it and refuse a binary file whose recorded\n"
    "hash (its checkpoints) disagrees with its events; they print the events and the hash\n"
    "on standard error.\n"
    "\n"
    "Exit status: 0 done, 1 the output could not be written (nothing half-written is left\n"
    "by convert), 2 bad input (a flag, a history that cannot be read or is malformed).\n"
    "\n"
    "Examples:\n"
    "  lockstep history dump lockstep-out/contention-10/history.bin | jq -c 'select(.type==\"fault\")'\n"
    "  lockstep history convert history.jsonl --to binary --out history.bin\n"
    "\n"
    "Options";

// Writes each event's line to a FILE through a buffer.
class LineDumper : public history::EventSink {
 public:
  LineDumper(const history::NameTable* names, std::FILE* out) : lines_(names), out_(out) {}
  void OnEvent(const history::Event& e) override {
    lines_.Append(e, &buffer_);
    buffer_.push_back('\n');
    if (buffer_.size() >= (1 << 20)) Drain();
  }
  // False once a write failed (errno says why).
  bool Drain() {
    if (ok_ && !buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), out_) != buffer_.size()) {
      ok_ = false;
    }
    buffer_.clear();
    return ok_;
  }

 private:
  history::JsonLineFormatter lines_;
  std::FILE* out_;
  std::string buffer_;
  bool ok_ = true;
};

}  // namespace

int HistoryMain(const std::vector<std::string>& args) {
  std::string action, history_path, out_path, to;
  po::options_description desc(kHistoryHelp);
  desc.add_options()("help,h", "show this help")(
      "out", po::value(&out_path), "where to write (dump: default standard output)")(
      "to", po::value(&to), "convert: the form to write (binary, jsonl, jsonl.gz)");
  po::options_description hidden;
  hidden.add_options()("action", po::value(&action))("history", po::value(&history_path));
  po::positional_options_description positional;
  positional.add("action", 1).add("history", 1);
  po::variables_map vm;
  if (std::optional<int> done = ParseArgs("history", args, desc, hidden, positional, &vm)) return *done;
  if (action != "dump" && action != "convert") {
    std::cerr << "lockstep history: "
              << (action.empty() ? std::string("dump or convert?")
                                 : "'" + Printable(action) + "' is not dump or convert")
              << " e.g. lockstep history dump lockstep-out/x/history.bin\n";
    return kExitBadInput;
  }
  if (history_path.empty()) {
    std::cerr << "lockstep history " << action << ": which history? e.g. lockstep history "
              << action << " lockstep-out/x/history.bin" << (action == "convert" ? " --to jsonl --out h.jsonl" : "")
              << "\n";
    return kExitBadInput;
  }
  if (action == "dump" && !to.empty()) {
    std::cerr << "lockstep history dump: --to is for convert (dump always writes JSON Lines)\n";
    return kExitBadInput;
  }
  std::optional<history::HistoryFormat> format;
  if (action == "convert") {
    format = history::ParseHistoryFormat(to);
    if (to.empty() || !format || *format == history::HistoryFormat::kNone) {
      std::cerr << "lockstep history convert: --to takes binary, jsonl or jsonl.gz"
                << (to.empty() ? std::string() : ", not '" + Printable(to) + "'") << "\n";
      return kExitBadInput;
    }
    if (out_path.empty()) {
      std::cerr << "lockstep history convert: where to? --out FILE (e.g. --out "
                << history::HistoryFileName(*format) << ")\n";
      return kExitBadInput;
    }
  }
  if (!out_path.empty()) {
    std::error_code ec;
    if (std::filesystem::equivalent(out_path, history_path, ec)) {
      std::cerr << "lockstep history " << action << ": --out " << out_path
                << " is the history itself; write to another file\n";
      return kExitBadInput;
    }
  }

  history::NameTable names;
  history::ReadStats stats;
  history::ReadOptions options;
  options.verify_hash = true;
  std::string error;
  if (action == "dump") {
    std::FILE* out = stdout;
    if (!out_path.empty()) {
      out = std::fopen(out_path.c_str(), "wb");
      if (out == nullptr) {
        std::cerr << "lockstep history dump: cannot write " << out_path << ": " << std::strerror(errno) << "\n";
        return kExitFailed;
      }
    }
    LineDumper dumper(&names, out);
    const bool read = history::ReadHistoryFile(history_path, &names, &dumper, &stats, &error, options);
    const bool written = dumper.Drain() && std::fflush(out) == 0;
    const int write_errno = errno;
    if (out != stdout) std::fclose(out);
    if (!read) {
      std::cerr << "lockstep history dump: " << error << "\n";
      return kExitBadInput;
    }
    if (!written) {
      std::cerr << "lockstep history dump: writing " << (out_path.empty() ? "standard output" : out_path)
                << " failed: " << std::strerror(write_errno) << "\n";
      return kExitFailed;
    }
  } else {
    std::unique_ptr<history::HistoryWriter> writer =
        history::HistoryWriter::Open(out_path, *format, &names, &error);
    if (!writer) {
      std::cerr << "lockstep history convert: " << error << "\n";
      return kExitFailed;
    }
    const bool read = history::ReadHistoryFile(history_path, &names, writer.get(), &stats, &error, options);
    if (!read) {
      writer->Discard();
      std::cerr << "lockstep history convert: " << error << "\n";
      return kExitBadInput;
    }
    if (!writer->Close()) {
      const std::string why = writer->error();
      writer->Discard();
      std::cerr << "lockstep history convert: " << why << "\n";
      return kExitFailed;
    }
    // The same events make the same lines in every form: the hashes must agree.
    if (writer->hash() != stats.hash) {
      writer->Discard();
      std::cerr << "lockstep history convert: the written history's hash " << history::HashHex(writer->hash())
                << " is not the read one's " << history::HashHex(stats.hash)
                << "; this is a bug in lockstep\n";
      return kExitFailed;
    }
  }
  std::cerr << (action == "dump" ? "dumped     " : "converted  ") << history_path << " ("
            << stats.events << " events, hash " << history::HashHex(stats.hash)
            << (stats.truncated ? "; its last event was cut off and is left out" : "") << ")"
            << (out_path.empty() ? "" : " to " + out_path) << "\n";
  return kExitOk;
}

}  // namespace lockstep::cli
