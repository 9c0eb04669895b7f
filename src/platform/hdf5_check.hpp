// Purpose: MGPU_H5_CHECK and MGPU_H5_WARN, the checking macros for HDF5 C calls (HDF5's own message, rank@host,
// file:line, the call's text), in the shape every other library's checking macro uses (error.hpp).
#pragma once

#include <hdf5.h>

#include <string>
#include <type_traits>

#include "platform/error.hpp"

namespace mgpu {

// HDF5 prints its whole error stack to stderr on every failure unless told not to; our errors carry the one line that
// matters instead. Idempotent and cheap: the checking macros call it before every HDF5 call, so no failure can print
// before it has run, whichever HDF5 call a program makes first.
inline void silence_hdf5_error_printing() {
  static const bool silenced = H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr) >= 0;
  (void)silenced;
}

// The innermost non-empty description on the current HDF5 error stack (the most specific one, e.g. "file signature
// not found" rather than "unable to open file"), falling back to the innermost minor message; then clears the stack
// so a later failure does not report this one.
inline std::string hdf5_error_message() {
  struct Found {
    std::string description;
    std::string minor;
  } found;
  const auto visit = [](unsigned, const H5E_error2_t* entry, void* data) -> herr_t {
    auto* found = static_cast<Found*>(data);
    if (found->minor.empty()) {
      char text[256] = {};
      if (H5Eget_msg(entry->min_num, nullptr, text, sizeof text) > 0) found->minor = text;
    }
    if (entry->desc != nullptr && entry->desc[0] != '\0') {
      found->description = entry->desc;
      return 1;  // positive: stop walking, we have the innermost meaningful entry
    }
    return 0;
  };
  // Upward = from the function that detected the error towards the API call we made.
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, visit, &found);
  H5Eclear2(H5E_DEFAULT);
  if (!found.description.empty()) return found.description;
  if (!found.minor.empty()) return found.minor;
  return "failed (the HDF5 error stack is empty)";
}

namespace hdf5_detail {
// Only for calls whose failure value is negative: a size_t result (H5Tget_size fails with 0) would never fail here.
template <typename Result>
inline constexpr bool kNegativeMeansFailure = std::is_signed_v<Result> || std::is_enum_v<Result>;

// HDF5 reports failure as a negative hid_t / herr_t / htri_t / ssize_t; returns the value so a checked call can
// initialise a handle: H5File file(MGPU_H5_CHECK(H5Fopen(...))).
template <typename Result>
Result checked(Result result, const char* file, int line, const char* call) {
  static_assert(kNegativeMeansFailure<Result>, "MGPU_H5_CHECK needs a call that returns negative on failure");
  if (result < 0) throw_call_error("HDF5", file, line, call, hdf5_error_message());
  return result;
}
template <typename Result>
Result warned(Result result, const char* file, int line, const char* call) {
  static_assert(kNegativeMeansFailure<Result>, "MGPU_H5_WARN needs a call that returns negative on failure");
  if (result < 0) warn_call_error("HDF5", file, line, call, hdf5_error_message());
  return result;
}
}  // namespace hdf5_detail

}  // namespace mgpu

// Throws mgpu::Error("rank R@host: file:line: call: HDF5: innermost description") when call returns negative;
// otherwise evaluates to the call's result.
#define MGPU_H5_CHECK(call) \
  (::mgpu::silence_hdf5_error_printing(), ::mgpu::hdf5_detail::checked((call), __FILE__, __LINE__, #call))

// The twin for destructors and clean-up paths: prints the same message as a warning instead of throwing.
#define MGPU_H5_WARN(call) \
  (::mgpu::silence_hdf5_error_printing(), ::mgpu::hdf5_detail::warned((call), __FILE__, __LINE__, #call))
