// A bridge while the checkers and the reports move onto the typed History: the events of a run
// as the text events (model/history.h) they read today.
#ifndef LOCKSTEP_CHECK_LEGACY_H_
#define LOCKSTEP_CHECK_LEGACY_H_

#include "history/event.h"
#include "history/notes.h"
#include "model/history.h"

namespace lockstep::check {

class LegacyHistorySink : public history::EventSink {
 public:
  explicit LegacyHistorySink(const history::NameTable* names) : names_(names) {}

  void OnEvent(const history::Event& e) override {
    Event x;
    x.t_us = e.t_us;
    x.type = static_cast<Event::Type>(e.type);
    x.process = std::string(names_->Str(e.process));
    x.thread = e.thread;
    x.op = std::string(names_->Str(e.op));
    x.lock = std::string(names_->Str(e.lock));
    x.peer = std::string(names_->Str(e.peer));
    x.local_ms = e.local_ms;
    x.has_value = e.has_value;
    x.value = e.value;
    x.detail = history::DetailText(e);
    history_.Append(std::move(x));
  }

  const History& history() const { return history_; }

 private:
  const history::NameTable* names_;
  History history_;
};

}  // namespace lockstep::check

#endif  // LOCKSTEP_CHECK_LEGACY_H_
