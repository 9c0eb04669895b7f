// Purpose: host launchers of the probe kernels: an empty kernel (launch and graph-node cost), random fills (a GEMM is
// never timed on zeros), a fixed amount of arithmetic on every SM (what the GEMM tuner times to see the clocks
// settle, gpu_clocks.hpp) and a hold on some SMs (what a collective's CTAs take from the work beside them).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace mgpu::probe_kernels {

// One block of one thread that does nothing: what a launch costs by itself.
void empty(cudaStream_t stream);

// values[i] uniform in [-1, 1) from (seed, i); as fp32, or as bf16 bits.
void fill_random(float* values, std::size_t count, std::uint64_t seed, cudaStream_t stream);
void fill_random_bf16(std::uint16_t* values, std::size_t count, std::uint64_t seed, cudaStream_t stream);

// `blocks` blocks of 128 threads, each a chain of `iterations` dependent FMAs and nothing else: its time scales with
// the SM clock alone. `sink` (device memory, one float, may be null) is written only if the chain ends at a value it
// never reaches, which keeps the compiler from removing the work.
void fixed_work(int blocks, int iterations, float* sink, cudaStream_t stream);

// Holds `sms` multiprocessors of the current device until `*release` (device memory, DeviceFlag) is non-zero,
// or `limit_ns` has passed: `sms` blocks, each taking all the shared memory a block may have (more than half an SM's),
// so no two land on one SM and no kernel that needs shared memory (a GEMM's tiles) runs beside one. What a collective's
// CTAs take from the GEMMs that overlap it, reproduced on one GPU; every block sleeps between looks at the flag, so the
// held SMs issue almost nothing. 0 < sms <= the device's multiprocessors.
void hold_sms(int sms, const volatile int* release, unsigned long long limit_ns, cudaStream_t stream);

}  // namespace mgpu::probe_kernels
