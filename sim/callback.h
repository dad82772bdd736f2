// A callable that takes nothing and returns nothing: an engine event, or the work a paused
// process will do when it resumes.
//
// Why not std::function: the simulator schedules millions of closures per simulated hour, and
// std::function puts every closure bigger than two pointers on the heap and copies it whenever
// it is passed on. A Callback is move-only (a closure is moved along, never copied) and keeps a
// closure of up to kInlineBytes inside itself; only a bigger one goes to the heap.
#ifndef LOCKSTEP_SIM_CALLBACK_H_
#define LOCKSTEP_SIM_CALLBACK_H_

#include <cassert>
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace lockstep::sim {

class Callback {
 public:
  // Room for the simulator's frequent closures: a command on its way to a node (an Argv and a
  // few ids) and a reply on its way to a client (a Reply and a few ids) both fit.
  static constexpr size_t kInlineBytes = 128;

  Callback() = default;

  // Implicit, so that a lambda can be passed where a Callback is taken.
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, Callback>>>
  Callback(F&& f) {
    using Fn = std::decay_t<F>;
    static_assert(std::is_invocable_r_v<void, Fn&>, "a Callback takes no arguments");
    if constexpr (kFitsInline<Fn>) {
      ::new (static_cast<void*>(storage_)) Fn(std::forward<F>(f));
      ops_ = &InlineOps<Fn>::kOps;
    } else {
      ::new (static_cast<void*>(storage_)) Fn*(new Fn(std::forward<F>(f)));
      ops_ = &HeapOps<Fn>::kOps;
    }
  }

  Callback(Callback&& other) noexcept { TakeFrom(other); }
  Callback& operator=(Callback&& other) noexcept {
    if (this != &other) {
      Reset();
      TakeFrom(other);
    }
    return *this;
  }
  Callback(const Callback&) = delete;
  Callback& operator=(const Callback&) = delete;
  ~Callback() { Reset(); }

  explicit operator bool() const { return ops_ != nullptr; }

  void operator()() {
    assert(ops_ != nullptr);
    ops_->invoke(storage_);
  }

  // Destroys the closure (and what it captured) now; the Callback is then empty.
  void Reset() {
    if (ops_ == nullptr) return;
    ops_->destroy(storage_);
    ops_ = nullptr;
  }

 private:
  struct Ops {
    void (*invoke)(void* storage);
    // Move-constructs the closure at `to` from the one at `from`, and destroys the latter.
    void (*relocate)(void* from, void* to);
    void (*destroy)(void* storage);
  };

  // Moving an inline closure must not throw, or a moved-from Callback could be left half done.
  template <typename Fn>
  static constexpr bool kFitsInline = sizeof(Fn) <= kInlineBytes &&
                                      alignof(Fn) <= alignof(std::max_align_t) &&
                                      std::is_nothrow_move_constructible_v<Fn>;

  template <typename Fn>
  struct InlineOps {
    static Fn& Get(void* s) { return *std::launder(static_cast<Fn*>(s)); }
    static void Invoke(void* s) { Get(s)(); }
    static void Relocate(void* from, void* to) {
      ::new (to) Fn(std::move(Get(from)));
      Get(from).~Fn();
    }
    static void Destroy(void* s) { Get(s).~Fn(); }
    static constexpr Ops kOps{&Invoke, &Relocate, &Destroy};
  };

  template <typename Fn>
  struct HeapOps {
    static Fn*& Get(void* s) { return *std::launder(static_cast<Fn**>(s)); }
    static void Invoke(void* s) { (*Get(s))(); }
    static void Relocate(void* from, void* to) { ::new (to) Fn*(Get(from)); }
    static void Destroy(void* s) { delete Get(s); }
    static constexpr Ops kOps{&Invoke, &Relocate, &Destroy};
  };

  void TakeFrom(Callback& other) {
    if (other.ops_ == nullptr) return;
    other.ops_->relocate(other.storage_, storage_);
    ops_ = other.ops_;
    other.ops_ = nullptr;
  }

  alignas(std::max_align_t) unsigned char storage_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

}  // namespace lockstep::sim

#endif  // LOCKSTEP_SIM_CALLBACK_H_
