// The registry of live C ABI handles (see handle_registry.h): one map under a shared mutex, and a
// fixed ring of retired handles whose memory is freed only when they leave it.
#include "capi/handle_registry.h"

#include <array>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "support/check.h"

namespace sparseflow::capi {
namespace {

constexpr size_t kQuarantineSize = 1024;

/// What the registry knows of one address.
struct HandleState {
  HandleKind kind;
  bool live;
};

class HandleRegistry {
 public:
  static HandleRegistry& instance() {
    // Never destroyed: handles may be used and destroyed from static destructors of the program.
    static HandleRegistry* registry = new HandleRegistry();
    return *registry;
  }

  void add(const void* handle, HandleKind kind) {
    std::unique_lock lock(mutex_);
    states_.insert_or_assign(keyOf(handle), HandleState{kind, true});
  }

  void requireLive(const void* handle, HandleKind kind, const char* argument) const {
    std::shared_lock lock(mutex_);
    check(handle, kind, argument);
  }

  void retire(const void* handle, HandleKind kind, const char* argument) {
    std::unique_lock lock(mutex_);
    check(handle, kind, argument);
    states_.at(keyOf(handle)).live = false;
  }

  void quarantine(void* memory, void (*release)(void*)) noexcept {
    Retired evicted;
    {
      std::unique_lock lock(mutex_);
      evicted = ring_[next_];
      ring_[next_] = Retired{memory, release};
      next_ = (next_ + 1) % kQuarantineSize;
      if (evicted.memory != nullptr) states_.erase(keyOf(evicted.memory));
    }
    if (evicted.memory != nullptr) evicted.release(evicted.memory);
  }

 private:
  struct Retired {
    void* memory = nullptr;
    void (*release)(void*) = nullptr;
  };

  /// Live handles are stored under their complemented address: the map must not make the
  /// program's leaked handles look reachable to LeakSanitizer.
  static uintptr_t keyOf(const void* handle) { return ~reinterpret_cast<uintptr_t>(handle); }

  void check(const void* handle, HandleKind kind, const char* argument) const {
    SF_USER_CHECK(handle != nullptr) << "argument '" << argument << "' is null";
    const auto found = states_.find(keyOf(handle));
    SF_USER_CHECK(found != states_.end())
        << "argument '" << argument << "' is not a live " << handleKindName(kind)
        << ": sparseflow did not make it, or it was destroyed long ago";
    SF_USER_CHECK(found->second.live)
        << "argument '" << argument << "' is not a live " << handleKindName(kind)
        << ": it is a destroyed " << handleKindName(found->second.kind);
    SF_USER_CHECK(found->second.kind == kind)
        << "argument '" << argument << "' is not a live " << handleKindName(kind) << ": it is a "
        << handleKindName(found->second.kind);
  }

  mutable std::shared_mutex mutex_;
  std::unordered_map<uintptr_t, HandleState> states_;
  std::array<Retired, kQuarantineSize> ring_{};
  size_t next_ = 0;
};

}  // namespace

const char* handleKindName(HandleKind kind) {
  switch (kind) {
    case HandleKind::kContext: return "SparseFlowContext";
    case HandleKind::kTensor: return "SparseFlowTensor";
    case HandleKind::kLinear: return "SparseFlowLinear";
    case HandleKind::kKernel: return "SparseFlowKernel";
    case HandleKind::kKernelOptions: return "SparseFlowKernelOptions";
  }
  return "handle";
}

void registerHandle(const void* handle, HandleKind kind) {
  HandleRegistry::instance().add(handle, kind);
}

void requireLiveHandle(const void* handle, HandleKind kind, const char* argument) {
  HandleRegistry::instance().requireLive(handle, kind, argument);
}

void retireHandle(const void* handle, HandleKind kind, const char* argument) {
  HandleRegistry::instance().retire(handle, kind, argument);
}

void quarantineHandle(void* memory, void (*release)(void*)) noexcept {
  HandleRegistry::instance().quarantine(memory, release);
}

}  // namespace sparseflow::capi
