// The contact solve's inner loops, built once per instruction set and chosen at run time.
//
// A batch is eight lanes whatever the machine (contact_batches.h). The same kernel source
// (contact_kernel.inc) is compiled twice: over pairs of four-lane Float4 values (SSE2 on
// x86-64, plain C++ elsewhere) and, on x86-64, over AVX's eight-lane registers. Every
// operation is an elementwise IEEE operation in the same order on each lane, and both
// builds visit the same lanes and the same point slots (up to the batch's largest point
// count), so they compute the same bits: the choice is speed only. docs/sim.md, "Wide
// solve".
#pragma once

#include "solver/contact_batches.h"
#include "solver/solver.h"

#include <cstdint>

namespace keel::sim {

/// Per-tick constants the kernels read.
struct KernelConstants {
  float inv_h = 0.0f;                  // 1 / substep
  float max_push = 3.0f;               // the fastest an overlap is pushed apart (m/s)
  float restitution_threshold = 1.0f;  // slower approaches do not bounce (m/s)
};

/// One instruction set's kernels. Each runs over batches [begin, end) in order.
struct ContactKernels {
  const char* name;
  void (*warm_start)(SolverBody* bodies, WideConstraint* batches, uint32_t begin, uint32_t end);
  void (*solve)(SolverBody* bodies, WideConstraint* batches, uint32_t begin, uint32_t end,
                const KernelConstants& k, bool use_bias);
  void (*restitution)(SolverBody* bodies, WideConstraint* batches, uint32_t begin, uint32_t end,
                      const KernelConstants& k);
};

/// The kernels this process uses: AVX when the CPU and OS support it, else the four-lane
/// pairs. The environment variable KEEL_SIMD=sse2 forces the pairs (a check that both
/// compute the same bits); KEEL_SIMD=avx asks for AVX and is ignored where it is missing.
const ContactKernels& contact_kernels();

/// The four-lane-pair kernels, whatever the machine (tests compare them with the above).
const ContactKernels& pair_kernels();

/// The AVX kernels, or null where the build or the CPU has none.
const ContactKernels* avx_kernels();

}  // namespace keel::sim
