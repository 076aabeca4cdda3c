// The engine's worker threads (batch/batch.hpp): a oneTBB task arena of a chosen size, rebuilt
// when the size changes (an initialised arena ignores a new size).
#pragma once

#include <tbb/task_arena.h>

#include <algorithm>

#include "batch/argument_checks.hpp"

namespace batchdyn {

class ThreadArena {
 public:
  // Worker threads: 0 = every core oneTBB sees, at most max_threads(). Throws Error for a count
  // out of range.
  void set(int threads) {
    check_thread_count("Batch", threads, max_threads());
    threads_ = threads == 0 ? tbb::this_task_arena::max_concurrency() : threads;
    if (arena_.is_active()) arena_.terminate();
    arena_.initialize(threads_);
  }
  int threads() const { return threads_; }
  // The largest count set() accepts: max(256, 8 x the cores oneTBB sees).
  static int max_threads() { return std::max(256, 8 * tbb::this_task_arena::max_concurrency()); }
  template <class F>
  void execute(F&& f) { arena_.execute(f); }

 private:
  int threads_ = 1;
  tbb::task_arena arena_;
};

}  // namespace batchdyn
