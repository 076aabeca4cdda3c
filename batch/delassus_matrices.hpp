// Delassus matrices G = J M^{-1} J^T of the model's constraints at every environment's q, with
// its own parameters, by the recursive lane kernels of the registry (kernels/delassus/pv_osimr.hpp:
// PV-OSIMr, O(n + m^2); kernels/delassus/pv_osim.hpp: PV-OSIM, the baseline), and for a solver the
// Cholesky factor of G + rho I. Not a stage of step(): a call of its own, on q alone.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <xsimd/xsimd.hpp>

#include "batch/argument_checks.hpp"
#include "batch/block_workspace.hpp"
#include "kernels/algorithms.hpp"
#include "kernels/delassus/delassus_operations.hpp"
#include "kernels/delassus/pv_osim.hpp"
#include "kernels/delassus/pv_osimr.hpp"

namespace batchdyn {

template <class L>
class DelassusMatrices {
 public:
  using T = lane_scalar<L>;

  DelassusMatrices(const Model& model, int num_envs)
      : model_(model), n_(num_envs), plan_(plan_delassus(model)), owned_G_(static_cast<size_t>(num_envs) * size(), T(0)),
        G_(owned_G_.data()) {}

  // Throws Error for a model without constraints, or an algorithm that is not a lane Delassus kernel.
  void require(const char* who, Algorithm algorithm) const {
    require_constraints(model_, who);
    if (!is_lane_delassus(algorithm_traits(algorithm)))
      throw Error(std::string(who) + ": " + algorithm_name(algorithm) + " is not a batched Delassus algorithm; use " +
                  algorithm_names(is_lane_delassus));
  }

  // G of the block's environments (ws.q gathered), with the constants `c` (the block's
  // parameters), into ws.G.
  void compute(const ModelConstants<L>& c, BlockWorkspace<L>& ws, Algorithm algorithm) const {
    if (algorithm == Algorithm::PvOsim) pv_osim_kernel(c, plan_, *ws.delassus, ws.q.data(), ws.G.data());
    else pv_osimr_kernel(c, plan_, *ws.delassus, ws.q.data(), ws.G.data());
  }
  // L L^T = G + rho I of ws.G into ws.factor.
  void factor(BlockWorkspace<L>& ws, T rho) const { damped_cholesky(ws.G.data(), model_.constraint_rows, L(rho), ws.factor.data()); }

  int size() const { return model_.constraint_rows * model_.constraint_rows; }  // per environment
  T* matrices() const { return G_; }
  // The factors' N x m x m buffer, made at the first factorisation.
  T* factors() {
    if (owned_factors_.empty()) owned_factors_.assign(static_cast<size_t>(n_) * size(), T(0));
    return owned_factors_.data();
  }
  const T* factors() const { return owned_factors_.data(); }
  // Writes the matrices into the caller's N x m x m array instead. Throws Error on a size mismatch.
  void use_buffer(std::span<T> G) {
    check_buffer_size("delassus", G.size(), n_, size(), "m x m");
    G_ = G.data();
  }
  const DelassusPlan& plan() const { return plan_; }

 private:
  const Model& model_;
  int n_;
  DelassusPlan plan_;
  // 64-byte aligned: with m^2 a multiple of 8 (double) or 16 (float) every environment's rows
  // then start on a cache line, so the scatter's full-width stores never straddle two.
  std::vector<T, xsimd::aligned_allocator<T, 64>> owned_G_, owned_factors_;
  T* G_;
};

}  // namespace batchdyn
