// Every world in these tests is small enough that, at the default thresholds, its steps
// would run on one thread alone however many threads it is given (docs/performance.md,
// "Small work on one thread"), and the thread-count tests would compare the one-thread
// path with itself. Setting both thresholds to 0 before any test steps makes every
// multi-thread test here run the shared stages, which is what those tests are for.
#include <cstdlib>

namespace {

struct ShareSmallWork {
  ShareSmallWork() {
    setenv("KEEL_STEP_MIN_WORK", "0", 1);
    setenv("KEEL_SOLVE_MIN_BATCHES_PER_STAGE", "0", 1);
  }
};

const ShareSmallWork share_small_work;

}  // namespace
