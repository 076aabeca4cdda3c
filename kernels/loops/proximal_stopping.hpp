// The stopping test of the joint-space proximal solvers: the dense oracle
// (kernels/loops/constrained_dynamics.hpp) and proxLTL (kernels/loops/prox_ltl.hpp) stop on the same
// conditions, so the two report the same iterations for the same problem. The recursive
// kernels' test on lanes is LoopConvergence (kernels/loops/loop_constraints.hpp).
#pragma once

#include "kernels/loops/proximal_settings.hpp"
#include "layout/dense.hpp"

namespace batchdyn {

// After each proximal iteration, the solve ends when one of these holds (tolerance from
// ProximalSettings, rhs_scale = 1 + ||k - drift||_inf):
//   met:      ||J qdd + drift - k||_inf <= tolerance * rhs_scale;
//   settled:  ||qdd^{k+1} - qdd^k||_inf <= tolerance * (1 + ||qdd^{k+1}||_inf), from the second
//             iteration on;
//   stagnant: the residual's 2-norm fell by no more than tolerance * rhs_scale, from the second
//             iteration on. Per eigenmode of G the residual shrinks by rho / (sigma + rho) each
//             iteration, so its 2-norm decreases monotonically until only the part outside
//             range(J) is left: inconsistent rows end here, at their least-squares solution.
template <class S>
class ProximalStoppingTest {
 public:
  ProximalStoppingTest(const ProximalSettings& settings, S rhs_scale) : tolerance_(S(settings.tolerance)), rhs_scale_(rhs_scale) {}

  // Whether iteration `iteration` (0-based), which left `residual` (J qdd + drift - k) and `qdd`
  // after `qdd_previous`, ends the solve. O(m + n), no allocation.
  bool done(int iteration, const VectorX<S>& residual, const VectorX<S>& qdd, const VectorX<S>& qdd_previous) {
    residual_norm_ = residual.size() ? residual.cwiseAbs().maxCoeff() : S(0);
    const S step = qdd.size() ? (qdd - qdd_previous).cwiseAbs().maxCoeff() : S(0);
    const S qdd_scale = S(1) + (qdd.size() ? qdd.cwiseAbs().maxCoeff() : S(0));
    const bool met = residual_norm_ <= tolerance_ * rhs_scale_;
    const bool settled = iteration > 0 && step <= tolerance_ * qdd_scale;
    const S residual_2norm = residual.norm();
    const bool stagnant = iteration > 0 && previous_2norm_ - residual_2norm <= tolerance_ * rhs_scale_;
    previous_2norm_ = residual_2norm;
    return met || settled || stagnant;
  }
  // ||J qdd + drift - k||_inf of the last iteration done() saw.
  S residual_norm() const { return residual_norm_; }

 private:
  S tolerance_, rhs_scale_;
  S previous_2norm_ = S(-1);
  S residual_norm_ = S(0);
};

}  // namespace batchdyn
