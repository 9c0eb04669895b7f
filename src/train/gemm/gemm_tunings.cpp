// Purpose: GemmTunings' life cycle (gemm_tunings.hpp), in every build: without CUDA a job still owns one, empty.
#include "train/gemm/gemm_tunings.hpp"

#if MGPU_HAVE_CUDA
#include "train/gemm/tuning_store.hpp"
#else
namespace mgpu {
struct GemmTunings::Store {
  void clear() {}
};
}  // namespace mgpu
#endif

namespace mgpu {

GemmTunings::GemmTunings() : store_(std::make_unique<Store>()) {}
GemmTunings::~GemmTunings() = default;
void GemmTunings::clear() { store_->clear(); }

}  // namespace mgpu
