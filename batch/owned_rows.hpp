// The engine's own state rows (batch/batch.hpp), env-major as training code holds them: q is
// N x nq, every row the start configuration; v, tau and qdd are N x nv, zero. The engine works on
// them until use_buffers points it at the caller's arrays.
#pragma once

#include <algorithm>
#include <vector>

#include "topology/model.hpp"

namespace batchdyn {

template <class T>
struct OwnedRows {
  OwnedRows(const Model& model, int num_envs, const std::vector<T>& start)
      : q(static_cast<size_t>(num_envs) * static_cast<size_t>(model.nq)), v(static_cast<size_t>(num_envs) * static_cast<size_t>(model.nv), T(0)),
        tau(v), qdd(v) {
    for (int e = 0; e < num_envs; ++e) std::copy(start.begin(), start.end(), q.begin() + static_cast<long>(e) * model.nq);
  }
  std::vector<T> q, v, tau, qdd;
};

}  // namespace batchdyn
