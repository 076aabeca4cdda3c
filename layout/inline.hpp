// BATCHDYN_INLINE: for the small per-body steps every sweep calls (joint.hpp, kinematics.hpp,
// joint_elimination.hpp, the articulated-inertia transform): inlined into each kernel whatever
// GCC's size heuristics decide once a translation unit holds several kernels. Measured on ABA
// (humanoid, AVX-512): without it GCC stopped inlining them and the kernel lost 8-20 %.
#pragma once

#define BATCHDYN_INLINE [[gnu::always_inline]] inline
// The same for a lambda (after its parameter list: `[&](int k) BATCHDYN_LAMBDA_INLINE { ... }`).
#define BATCHDYN_LAMBDA_INLINE __attribute__((always_inline))
