// Purpose: RAII owners of CUDA resources (device memory, streams, events, a flag a kernel waits on, graphs, a cuBLAS
// handle, the current device): non-copyable, movable, every call checked; destructors warn instead of
// throwing.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "platform/cuda_check.hpp"

namespace mgpu {

// Typed device memory from cudaMalloc. A buffer of zero elements holds no allocation.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) MGPU_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count_ * sizeof(T)));
  }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      count_ = std::exchange(other.count_, 0);
    }
    return *this;
  }

  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }

 private:
  void release() noexcept {
    if (data_ != nullptr) MGPU_CUDA_WARN(cudaFree(data_));
    data_ = nullptr;
    count_ = 0;
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// Synchronous copies for set-up, tests and results (never inside a timed run). They go through `stream`, not the
// legacy default stream, because our streams are non-blocking: a plain cudaMemcpy would not wait for their work.
template <typename T>
void copy_to_device(DeviceBuffer<T>& destination, const std::vector<T>& source, cudaStream_t stream) {
  MGPU_REQUIRE(source.size() == destination.size(), "host and device element counts differ");
  MGPU_CUDA_CHECK(
      cudaMemcpyAsync(destination.data(), source.data(), destination.bytes(), cudaMemcpyHostToDevice, stream));
  MGPU_CUDA_CHECK(cudaStreamSynchronize(stream));
}
template <typename T>
std::vector<T> copy_to_host(const DeviceBuffer<T>& source, cudaStream_t stream) {
  std::vector<T> destination(source.size());
  MGPU_CUDA_CHECK(cudaMemcpyAsync(destination.data(), source.data(), source.bytes(), cudaMemcpyDeviceToHost, stream));
  MGPU_CUDA_CHECK(cudaStreamSynchronize(stream));
  return destination;
}

// A stream that does not synchronise with the legacy default stream (cudaStreamNonBlocking), so nothing another
// library puts on stream 0 can serialise with the timed work.
class CudaStream {
 public:
  CudaStream() { MGPU_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  // The device's highest stream priority (of the current device): when SMs free up, its pending blocks are
  // scheduled before those of normal streams.
  static CudaStream highest_priority() {
    int least = 0, greatest = 0;
    MGPU_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CudaStream stream(nullptr);
    MGPU_CUDA_CHECK(cudaStreamCreateWithPriority(&stream.stream_, cudaStreamNonBlocking, greatest));
    return stream;
  }
  ~CudaStream() {
    if (stream_ != nullptr) MGPU_CUDA_WARN(cudaStreamDestroy(stream_));
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  CudaStream(CudaStream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}
  CudaStream& operator=(CudaStream&& other) noexcept {
    std::swap(stream_, other.stream_);
    return *this;
  }

  cudaStream_t get() const noexcept { return stream_; }
  void synchronize() const { MGPU_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

  // Work enqueued on this stream after the call starts only once `event` has completed (no host wait).
  void wait(cudaEvent_t event) const { MGPU_CUDA_CHECK(cudaStreamWaitEvent(stream_, event, 0)); }

 private:
  explicit CudaStream(std::nullptr_t) {}  // no stream yet (highest_priority fills it in)
  cudaStream_t stream_ = nullptr;
};

// A timing event (cudaEventDefault: records a GPU timestamp), or with cudaEventDisableTiming an event that only
// orders streams (cheaper). Only elapsed times between two timing events recorded on the same device are
// meaningful; they may come from different streams.
class CudaEvent {
 public:
  CudaEvent() : CudaEvent(cudaEventDefault) {}
  explicit CudaEvent(unsigned flags) { MGPU_CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags)); }
  ~CudaEvent() {
    if (event_ != nullptr) MGPU_CUDA_WARN(cudaEventDestroy(event_));
  }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  CudaEvent(CudaEvent&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&& other) noexcept {
    std::swap(event_, other.event_);
    return *this;
  }

  cudaEvent_t get() const noexcept { return event_; }
  // Completes when all work enqueued on `stream` before this call has completed.
  void record(cudaStream_t stream) const { MGPU_CUDA_CHECK(cudaEventRecord(event_, stream)); }
  // The same as a node of the graph `stream` is capturing (cudaEventRecordExternal): the recorded graph then records
  // this event's timestamp every time it is launched. Only valid while `stream` captures.
  void record_in_capture(cudaStream_t stream) const {
    MGPU_CUDA_CHECK(cudaEventRecordWithFlags(event_, stream, cudaEventRecordExternal));
  }
  // True once the recorded work has completed; never blocks.
  bool query() const {
    const cudaError_t status = cudaEventQuery(event_);
    if (status == cudaErrorNotReady) return false;
    MGPU_CUDA_CHECK(status);
    return true;
  }
  void synchronize() const { MGPU_CUDA_CHECK(cudaEventSynchronize(event_)); }

 private:
  cudaEvent_t event_ = nullptr;
};

// Milliseconds from `start` to `end` (both completed); resolution about 0.5 microseconds.
inline double elapsed_ms(const CudaEvent& start, const CudaEvent& end) {
  float milliseconds = 0.0f;
  MGPU_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start.get(), end.get()));
  return milliseconds;
}

// One int in device memory that a kernel waits on (probe_kernels::hold_sms), set by the host through the copy engine
// on a stream of its own, so it can be set while every SM is held; starts at 0. (A kernel polling pinned host memory
// instead slowed every other kernel on the GPU: its reads crossed PCIe.)
class DeviceFlag {
 public:
  DeviceFlag() : value_(1) {
    MGPU_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&staging_), sizeof(int)));
    set(0);
  }
  ~DeviceFlag() {
    if (staging_ != nullptr) MGPU_CUDA_WARN(cudaFreeHost(staging_));
  }
  DeviceFlag(const DeviceFlag&) = delete;
  DeviceFlag& operator=(const DeviceFlag&) = delete;

  // Returns once the device holds `value`.
  void set(int value) {
    *staging_ = value;
    MGPU_CUDA_CHECK(cudaMemcpyAsync(value_.data(), staging_, sizeof(int), cudaMemcpyHostToDevice, copies_.get()));
    copies_.synchronize();
  }
  const volatile int* device_pointer() const noexcept { return value_.data(); }

 private:
  DeviceBuffer<int> value_;
  int* staging_ = nullptr;  // pinned: the copy is the copy engine's alone
  CudaStream copies_;
};

// A graph made by stream capture and `copies` executable instances of it. capture_begin/capture_end bracket the
// enqueueing on `stream` (and on any stream that joined it through events); launch(copy) replays the whole of it on
// a stream. Several instances let a caller change one instance's parameters while another may still be in flight.
class CudaGraph {
 public:
  CudaGraph() = default;
  ~CudaGraph() { reset(); }
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Thread-local capture mode: only this thread's unsafe calls (e.g. cudaMalloc) break the capture.
  static void capture_begin(cudaStream_t stream) {
    MGPU_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  }
  // node_priorities: each instance runs every kernel node at the priority of the stream that captured it
  // (cudaGraphInstantiateFlagUseNodePriority); otherwise at the priority of the stream it is launched into.
  void capture_end(cudaStream_t stream, int copies = 1, bool node_priorities = false) {
    // The capture ends before an earlier graph is destroyed: destroying one is refused while a capture is open.
    cudaGraph_t captured = nullptr;
    MGPU_CUDA_CHECK(cudaStreamEndCapture(stream, &captured));
    reset();
    graph_ = captured;
    for (int c = 0; c < copies; ++c) {
      cudaGraphExec_t exec = nullptr;
      const unsigned long long flags = node_priorities ? cudaGraphInstantiateFlagUseNodePriority : 0;
      MGPU_CUDA_CHECK(cudaGraphInstantiate(&exec, graph_, flags));
      execs_.push_back(exec);
    }
  }
  // capture_begin, `enqueue` (work on `stream`), capture_end; a capture that throws is abandoned and rethrown.
  void capture(cudaStream_t stream, const std::function<void()>& enqueue, int copies = 1) {
    capture_begin(stream);
    try {
      enqueue();
    } catch (...) {
      capture_abandon(stream);
      throw;
    }
    capture_end(stream, copies);
  }
  // Ends a capture that failed part-way (the error is already being reported); the stream is usable again after.
  static void capture_abandon(cudaStream_t stream) noexcept {
    cudaGraph_t partial = nullptr;
    if (cudaStreamEndCapture(stream, &partial) == cudaSuccess && partial != nullptr) cudaGraphDestroy(partial);
    cudaGetLastError();  // clear the sticky capture-invalidated error
  }
  void launch(cudaStream_t stream, int copy = 0) const { MGPU_CUDA_CHECK(cudaGraphLaunch(execs_.at(copy), stream)); }

  cudaGraph_t graph() const noexcept { return graph_; }
  cudaGraphExec_t exec(int copy = 0) const { return execs_.at(copy); }
  int copies() const noexcept { return static_cast<int>(execs_.size()); }
  bool ready() const noexcept { return !execs_.empty(); }

 private:
  void reset() noexcept {
    for (cudaGraphExec_t exec : execs_) MGPU_CUDA_WARN(cudaGraphExecDestroy(exec));
    if (graph_ != nullptr) MGPU_CUDA_WARN(cudaGraphDestroy(graph_));
    execs_.clear();
    graph_ = nullptr;
  }
  cudaGraph_t graph_ = nullptr;
  std::vector<cudaGraphExec_t> execs_;
};

// A cuBLAS handle whose work goes to one stream, in true fp32: the default math mode never substitutes TF32 for
// CUBLAS_COMPUTE_32F (only CUBLAS_TF32_TENSOR_OP_MATH or a *_FAST_TF32 compute type would).
class CublasHandle {
 public:
  explicit CublasHandle(cudaStream_t stream) {
    MGPU_CUBLAS_CHECK(cublasCreate(&handle_));
    try {
      MGPU_CUBLAS_CHECK(cublasSetStream(handle_, stream));
      MGPU_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
      MGPU_CUBLAS_CHECK(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST));
    } catch (...) {
      MGPU_CUBLAS_WARN(cublasDestroy(handle_));
      throw;
    }
  }
  ~CublasHandle() {
    if (handle_ != nullptr) MGPU_CUBLAS_WARN(cublasDestroy(handle_));
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  CublasHandle(CublasHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  CublasHandle& operator=(CublasHandle&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }

  cublasHandle_t get() const noexcept { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

// Makes `ordinal` the calling thread's current device for the scope, then restores the previous one.
class ScopedDevice {
 public:
  explicit ScopedDevice(int ordinal) {
    MGPU_CUDA_CHECK(cudaGetDevice(&previous_));
    MGPU_CUDA_CHECK(cudaSetDevice(ordinal));
  }
  ~ScopedDevice() { MGPU_CUDA_WARN(cudaSetDevice(previous_)); }
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace mgpu
