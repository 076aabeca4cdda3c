// A general 6 x 6 block H_{a,b} coupling the spatial accelerations of two bodies in a
// quadratic cost a_a^T H_{a,b} a_b (LCABA's coupling inertias, lcaba-proxbbo eq. 23): rows in
// body a's frame, columns multiplying a_b's components. Kept as its six columns, each the force
// on body a (frame a) that a unit component of a_b produces.
#pragma once

#include "layout/spatial.hpp"

namespace batchdyn {

template <class S>
struct CouplingBlock {
  Force<S> column[6];

  static CouplingBlock zero() {
    CouplingBlock b;
    for (Force<S>& c : b.column) c = Force<S>::zero();
    return b;
  }
  // H m: the force on body a (frame a) for a motion m of body b.
  BATCHDYN_INLINE Force<S> times(const Motion<S>& m) const {
    Force<S> f = column[0] * m[0];
    for (int c = 1; c < 6; ++c) f += column[c] * m[c];
    return f;
  }
  // H^T m: the force on body b (frame b) for a motion m of body a.
  BATCHDYN_INLINE Force<S> transpose_times(const Motion<S>& m) const {
    Force<S> f;
    for (int c = 0; c < 6; ++c) f[c] = dot(column[c], m);
    return f;
  }
  // Row r as a force-like 6-vector (column r of H^T).
  BATCHDYN_INLINE Force<S> row(int r) const {
    Force<S> f;
    for (int c = 0; c < 6; ++c) f[c] = column[c][r];
    return f;
  }
  // this += s u w^T for 6-vectors u (rows) and w (columns).
  BATCHDYN_INLINE void add_outer(const Force<S>& u, const Force<S>& w, const S& s) {
    for (int c = 0; c < 6; ++c) column[c] += u * (w[c] * s);
  }
};

// Dot product of two force-like 6-vectors (columns of K^T, rows of coupling blocks).
template <class S>
BATCHDYN_INLINE S dot6(const Force<S>& a, const Force<S>& b) {
  return dot(a.linear, b.linear) + dot(a.angular, b.angular);
}

// The force-like 6-vector as a motion (same components), to apply a row as a linear form.
template <class S>
BATCHDYN_INLINE Motion<S> as_motion(const Force<S>& f) {
  return {f.linear, f.angular};
}

}  // namespace batchdyn
