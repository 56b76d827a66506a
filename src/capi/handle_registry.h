// The C ABI's registry of live handles: a handle is checked here before it is dereferenced, so a
// destroyed, foreign or wrong-kind pointer gets a named error instead of undefined behaviour.
#pragma once

#include <cstdint>
#include <memory>

namespace sparseflow::capi {

/// The kinds of opaque handle the C ABI hands out (names as sparseflow.h spells the types).
enum class HandleKind : uint8_t { kContext, kTensor, kLinear, kKernel, kKernelOptions };

/// "SparseFlowTensor" for kTensor, and so on.
const char* handleKindName(HandleKind kind);

/// Records `handle` as live. Throws std::bad_alloc (the caller still owns the object).
void registerHandle(const void* handle, HandleKind kind);

/// Throws kInvalidArgument naming `argument` unless `handle` is a live handle of `kind`: the
/// message says whether it was destroyed, is a handle of another kind, or was never made by
/// sparseflow. Never reads through `handle`.
void requireLiveHandle(const void* handle, HandleKind kind, const char* argument);

/// Takes a live handle of `kind` out of use (kInvalidArgument as requireLiveHandle when it is
/// not live) and returns; the caller then destroys the object and passes its memory to
/// quarantineHandle. Two threads retiring one handle: exactly one succeeds.
void retireHandle(const void* handle, HandleKind kind, const char* argument);

/// Keeps the memory of a retired handle allocated for a while (the last 1024 retired handles),
/// so that a new handle does not reuse its address at once and a use after destroy is still
/// recognized as one; `release` frees it when it leaves the quarantine. Never throws.
void quarantineHandle(void* memory, void (*release)(void*)) noexcept;

/// A new handle: `object` registered as `kind` and released to the caller.
template <typename T>
T* publishHandle(std::unique_ptr<T> object, HandleKind kind) {
  registerHandle(object.get(), kind);
  return object.release();
}

/// Destroys the handle made by publishHandle (NULL is accepted): retired, its object destroyed,
/// its memory quarantined.
template <typename T>
void destroyHandle(T* handle, HandleKind kind, const char* argument) {
  if (handle == nullptr) return;
  retireHandle(handle, kind, argument);
  handle->~T();
  quarantineHandle(handle, [](void* memory) { ::operator delete(memory); });
}

}  // namespace sparseflow::capi
