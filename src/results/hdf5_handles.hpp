// Purpose: RAII owners for HDF5 identifiers (file, group, dataset, dataspace, datatype, attribute, property list),
// each closed with its own H5*close; non-copyable, movable.
#pragma once

#include <hdf5.h>

#include <utility>

#include "platform/hdf5_check.hpp"

namespace mgpu {

// How one kind of identifier is closed; the name is what a failed close reports.
struct H5Closer {
  herr_t (*close)(hid_t);
  const char* call;
};

// Owns one identifier. HDF5 keeps a file open while any object inside it is open, so an identifier that leaks keeps
// the results file locked and unflushed: ownership must be exact, hence no copies.
template <const H5Closer& Closer>
class H5Handle {
 public:
  H5Handle() = default;
  // Takes ownership; pass the result of MGPU_H5_CHECK(...), which is never negative.
  explicit H5Handle(hid_t id) : id_(id) {}
  ~H5Handle() { reset(); }

  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  H5Handle(H5Handle&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
  H5Handle& operator=(H5Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
    }
    return *this;
  }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now. Never throws (destructors call it); a failed close is printed as a warning.
  void reset() noexcept {
    if (id_ >= 0) {
      try {
        silence_hdf5_error_printing();
        if (Closer.close(id_) < 0) warn_call_error("HDF5", __FILE__, __LINE__, Closer.call, hdf5_error_message());
      } catch (...) {  // formatting the warning allocates; losing a warning beats terminating
      }
      id_ = H5I_INVALID_HID;
    }
  }
  // Closes now and reports a failure as an exception: for the file, whose close is the last write.
  void close() {
    if (id_ >= 0) {
      const hid_t id = std::exchange(id_, H5I_INVALID_HID);
      silence_hdf5_error_printing();
      if (Closer.close(id) < 0) throw_call_error("HDF5", __FILE__, __LINE__, Closer.call, hdf5_error_message());
    }
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

namespace hdf5_detail {
inline constexpr H5Closer kFileCloser{H5Fclose, "H5Fclose"};
inline constexpr H5Closer kGroupCloser{H5Gclose, "H5Gclose"};
inline constexpr H5Closer kDatasetCloser{H5Dclose, "H5Dclose"};
inline constexpr H5Closer kDataspaceCloser{H5Sclose, "H5Sclose"};
inline constexpr H5Closer kDatatypeCloser{H5Tclose, "H5Tclose"};
inline constexpr H5Closer kAttributeCloser{H5Aclose, "H5Aclose"};
inline constexpr H5Closer kPropertyListCloser{H5Pclose, "H5Pclose"};
}  // namespace hdf5_detail

using H5File = H5Handle<hdf5_detail::kFileCloser>;
using H5Group = H5Handle<hdf5_detail::kGroupCloser>;
using H5Dataset = H5Handle<hdf5_detail::kDatasetCloser>;
using H5Dataspace = H5Handle<hdf5_detail::kDataspaceCloser>;
// Only for types we created (H5Tcopy, H5Dget_type, ...); the predefined H5T_NATIVE_* must never be closed.
using H5Datatype = H5Handle<hdf5_detail::kDatatypeCloser>;
using H5Attribute = H5Handle<hdf5_detail::kAttributeCloser>;
using H5PropertyList = H5Handle<hdf5_detail::kPropertyListCloser>;

}  // namespace mgpu
