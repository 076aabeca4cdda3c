// Lane equivalence: every lane of a SIMD lane block computes what the W = 1 kernel computes
// for that environment. Compiled into the main suite (the build's native ISA) and once per
// lane ISA (tests/isa_main.cpp: SSE2, AVX2+FMA, AVX-512), so each instruction set's lanes
// are checked on hosts that have it.
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include <sys/mman.h>
#include <unistd.h>

#include "batch_helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

// W rows of distinct entries (row l, entry k = 100 l + k), read into lanes entry by entry
// (lanes_from_rows) and by W x W tiles (lanes_from_row_tile), and written back by tiles
// (rows_from_lane_tile) into rows of which one is not to be written.
template <class L>
void check_lane_transposes() {
  using T = lane_scalar<L>;
  constexpr int W = lane_width<L>, entries = 2 * W + 3;
  std::vector<std::vector<T>> rows(W, std::vector<T>(entries)), written(W, std::vector<T>(entries, T(-1)));
  const T* row_pointers[W];
  T* written_pointers[W];
  bool write[W];
  for (int l = 0; l < W; ++l) {
    for (int k = 0; k < entries; ++k) rows[l][k] = static_cast<T>(100 * l + k);
    row_pointers[l] = rows[l].data(), written_pointers[l] = written[l].data(), write[l] = l != W / 2;
  }
  for (int k = 0; k < entries; ++k) {
    const L lanes = lanes_from_rows<L>(row_pointers, k);
    for (int l = 0; l < W; ++l) CHECK(LaneTraits<L>::get(lanes, l) == static_cast<T>(100 * l + k));
  }
  for (int k = 0; k + W <= entries; ++k) {  // tiles at every offset, aligned or not
    L tile[W];
    lanes_from_row_tile<L>(row_pointers, k, tile);
    for (int j = 0; j < W; ++j)
      for (int l = 0; l < W; ++l) CHECK(LaneTraits<L>::get(tile[j], l) == static_cast<T>(100 * l + k + j));
    rows_from_lane_tile<L>(tile, k, written_pointers, write);
  }
  for (int l = 0; l < W; ++l)
    for (int k = 0; k < entries; ++k) CHECK(written[l][k] == (write[l] ? static_cast<T>(100 * l + k) : T(-1)));
}

// Rows of `count` entries that end where a page ends, the next page unreadable and unwritable:
// a range transpose that touched an entry past a row's end would fault. Every count from 1 to
// 2 W + 3, so each remainder count % W (the partial tiles) is met after zero, one and two
// whole tiles. The written rows' other entries, and every entry of the row not to be written,
// keep their -1.
template <class L>
void check_range_transposes_stay_within_rows() {
  using T = lane_scalar<L>;
  constexpr int W = lane_width<L>;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (int count = 1; count <= 2 * W + 3; ++count) {
    INFO("W = ", W, ", count = ", count);
    const size_t row_bytes = static_cast<size_t>(count) * sizeof(T);
    const size_t span = (row_bytes + page - 1) / page * page;  // whole pages holding one row, at their end
    std::vector<void*> mappings;
    const auto guarded_row = [&]() {
      void* mapping = mmap(nullptr, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      REQUIRE(mapping != MAP_FAILED);
      REQUIRE(mprotect(static_cast<char*>(mapping) + span, page, PROT_NONE) == 0);
      mappings.push_back(mapping);
      return reinterpret_cast<T*>(static_cast<char*>(mapping) + span - row_bytes);
    };
    const T* row_pointers[W];
    T* written_pointers[W];
    bool write[W];
    for (int l = 0; l < W; ++l) {
      T* row = guarded_row();
      T* written = guarded_row();
      for (int k = 0; k < count; ++k) row[k] = static_cast<T>(100 * l + k), written[k] = T(-1);
      row_pointers[l] = row, written_pointers[l] = written, write[l] = l != W / 2;
    }
    std::vector<L> lanes(static_cast<size_t>(count));
    lanes_from_row_range<L>(row_pointers, count, lanes.data());
    for (int k = 0; k < count; ++k)
      for (int l = 0; l < W; ++l) CHECK(LaneTraits<L>::get(lanes[static_cast<size_t>(k)], l) == static_cast<T>(100 * l + k));
    rows_from_lane_range<L>(lanes.data(), count, written_pointers, write);
    for (int l = 0; l < W; ++l)
      for (int k = 0; k < count; ++k) CHECK(written_pointers[l][k] == (write[l] ? static_cast<T>(100 * l + k) : T(-1)));
    for (void* mapping : mappings) munmap(mapping, span + page);
  }
}

TEST_CASE("range transposes move every entry, whole tiles and the rest, and touch nothing past a row's end") {
  INFO("partial tiles in registers: double ", has_partial_tiles<SimdLane<double>>, ", float ", has_partial_tiles<SimdLane<float>>);
  check_range_transposes_stay_within_rows<SimdLane<double>>();
  check_range_transposes_stay_within_rows<SimdLane<float>>();
  check_range_transposes_stay_within_rows<double>();
}

TEST_CASE("the rest of a range is a partial tile through the register network on 512-bit lanes only") {
  // Not a timing check: which code path the gather and the scatter take for a range's last
  // count % W entries (both paths are correct: the test above).
  CHECK(has_partial_tiles<SimdLane<double>> == (sizeof(SimdLane<double>) == 64));
  CHECK(has_partial_tiles<SimdLane<float>> == (sizeof(SimdLane<float>) == 64));
  CHECK_FALSE(has_partial_tiles<double>);
}

TEST_CASE("the gather's and the scatter's transposes move entry k of row l to lane l and back (double and float lanes, and W = 1)") {
  INFO("register transpose: double ", has_register_transpose<SimdLane<double>>, ", float ", has_register_transpose<SimdLane<float>>);
  check_lane_transposes<SimdLane<double>>();
  check_lane_transposes<SimdLane<float>>();
  check_lane_transposes<double>();
}

TEST_CASE("tiles of 256-bit and 512-bit lanes are transposed in registers, not assembled entry by entry") {
  // Not a timing check: which code path the gather and the scatter take. The entry-by-entry
  // path is correct too (the test above), but it made the scatter of AVX-512 Delassus matrices
  // 17 % of their time.
  CHECK(has_register_transpose<SimdLane<double>> == (sizeof(SimdLane<double>) >= 32));
  CHECK(has_register_transpose<SimdLane<float>> == (sizeof(SimdLane<float>) >= 32));
  CHECK_FALSE(has_register_transpose<double>);
}

// lane_sincos: one lane holding `angle`, its block mates each of the other angles in turn. The
// lane's sine and cosine must be the bits it gets alone (a broadcast), which are xsimd's own
// (xsimd reduces a batch whose lanes all hold one angle by that angle's formula), within
// epsilon of the C library's long-double sine and cosine (which also check the reduction of the
// largest angles, up to the type's max), and the scalar lane_sincos must return them too.
template <class T>
void check_lane_sincos_independent_of_block_mates() {
  using B = SimdLane<T>;
  constexpr T inf = std::numeric_limits<T>::infinity();
  const T angles[] = {T(0),       -T(0),      std::numeric_limits<T>::denorm_min(), T(1e-3), T(0.7853981), T(0.7853982),
                      T(1.5707963), T(-3),     T(62.8),    T(62.9), T(-1000.5), T(1.5e6), T(3e7), T(1e12), T(-1e30),
                      std::numeric_limits<T>::max(), inf, -inf, std::numeric_limits<T>::quiet_NaN(),
                      // angles whose xsimd::sincos bits did change with a mate at 1e30 (near a multiple of pi/2)
                      T(4.7120700512707794), T(58.08762803104041), T(912.69759934194167), T(1.5461082458496094),
                      T(3.1070902347564697), T(24.735673904418945)};
  const auto same_bits = [](T a, T b) { return std::memcmp(&a, &b, sizeof(T)) == 0; };
  for (const T angle : angles) {
    CAPTURE(angle);
    const auto [sin_alone, cos_alone] = lane_sincos(B(angle));
    const auto [sin_scalar, cos_scalar] = lane_sincos(angle);
    CHECK(same_bits(sin_scalar, sin_alone.get(0)));
    CHECK(same_bits(cos_scalar, cos_alone.get(0)));
    if (std::isfinite(angle)) {
      const auto [sin_xsimd, cos_xsimd] = xsimd::sincos(B(angle));
      CHECK(same_bits(sin_alone.get(0), sin_xsimd.get(0)));
      CHECK(same_bits(cos_alone.get(0), cos_xsimd.get(0)));
      const long double exact_sin = std::sin(static_cast<long double>(angle)), exact_cos = std::cos(static_cast<long double>(angle));
      const long double ulp = std::numeric_limits<T>::epsilon();
      CHECK(std::fabs(static_cast<long double>(sin_alone.get(0)) - exact_sin) <= ulp);
      CHECK(std::fabs(static_cast<long double>(cos_alone.get(0)) - exact_cos) <= ulp);
    } else {
      CHECK(std::isnan(sin_alone.get(0)));
      CHECK(std::isnan(cos_alone.get(0)));
    }
    for (const T mate : angles) {
      alignas(64) T block[B::size];
      for (T& x : block) x = mate;
      block[B::size / 2] = angle;
      const auto [sin_block, cos_block] = lane_sincos(B::load_aligned(block));
      CHECK(same_bits(sin_block.get(B::size / 2), sin_alone.get(0)));
      CHECK(same_bits(cos_block.get(B::size / 2), cos_alone.get(0)));
    }
  }
}

TEST_CASE("lane_sincos: a lane's sine and cosine are its own angle's, bitwise xsimd's, whatever its block mates hold") {
  check_lane_sincos_independent_of_block_mates<double>();
  check_lane_sincos_independent_of_block_mates<float>();
}

TEST_CASE("each SIMD lane of batched double ABA equals the scalar ABA of its environment (1e-12)") {
  std::mt19937 rng(80);
  for (const NamedModel& m : tree_models()) {
    CAPTURE(m.name);
    const int n = 3 * Batch<double>::W + 3;  // not a multiple of W: the last block is padded
    Batch<double> batch(m.model, n, 1);
    randomise(batch, rng);
    batch.forward_dynamics();
    CHECK(batch.failed_count() == 0);
    for (int e = 0; e < n; ++e) {
      const Eigen::VectorXd expected = simulated_forward_dynamics(m.model, row(batch.q(), e, m.model.nq),
                                                                  row(batch.v(), e, m.model.nv), row(batch.tau(), e, m.model.nv));
      CHECK(relative_error(row(batch.qdd(), e, m.model.nv), expected) <= 1e-12);
    }
  }
}

TEST_CASE("batched float ABA equals the W = 1 float kernel to 1e-5 and the double reference to float accuracy") {
  std::mt19937 rng(81);
  for (const NamedModel& m : tree_models()) {
    CAPTURE(m.name);
    const int n = 2 * Batch<float>::W + 1;
    Batch<float> batch(m.model, n, 1);
    ScalarBatch<float> scalar(m.model, n, 1);
    randomise(batch, rng);
    copy_state(batch, scalar);
    batch.forward_dynamics();
    scalar.forward_dynamics();
    for (int e = 0; e < n; ++e) {
      const int nq = m.model.nq, nv = m.model.nv;
      const Eigen::VectorXd lanes = row(batch.qdd(), e, nv);
      CHECK(relative_error(lanes, row(scalar.qdd(), e, nv)) <= 1e-5);
      CHECK(relative_error(lanes, simulated_forward_dynamics(m.model, row(batch.q(), e, nq), row(batch.v(), e, nv),
                                                             row(batch.tau(), e, nv))) <= 1e-3);
    }
  }
}

TEST_CASE("a SIMD step (ABA, then integration on the manifold) equals the W = 1 step of each environment") {
  std::mt19937 rng(83);
  for (const NamedModel& m : tree_models()) {
    CAPTURE(m.name);
    const int n = 2 * Batch<double>::W + 1;
    Batch<double> batch(m.model, n, 1);
    ScalarBatch<double> scalar(m.model, n, 1);
    // Random states put the robots deep into the ground and beyond their joint limits, where
    // ADMM may hit its cap; contact and limit lanes have their own equivalence tests (test_contact_batch.cpp, test_contact_pairs.cpp).
    batch.set_contacts(false), scalar.set_contacts(false);
    ContactSettings no_limits = batch.contact_settings();  // and beyond their joint limits
    no_limits.joint_limits = false;
    batch.set_contact_settings(no_limits), scalar.set_contact_settings(no_limits);
    randomise(batch, rng);
    copy_state(batch, scalar);
    for (int k = 0; k < 3; ++k) batch.step(1e-3), scalar.step(1e-3);
    CHECK(batch.failed_count() == 0);
    for (int e = 0; e < n; ++e) {
      CHECK(relative_error(row(batch.q(), e, m.model.nq), row(scalar.q(), e, m.model.nq)) <= 1e-12);
      CHECK(relative_error(row(batch.v(), e, m.model.nv), row(scalar.v(), e, m.model.nv)) <= 1e-12);
    }
  }
}

TEST_CASE("each SIMD lane of the batched Delassus matrices equals the scalar PV-OSIMr (double 1e-12) for both algorithms") {
  std::mt19937 rng(98);
  for (const NamedModel& m : constrained_models()) {
    CAPTURE(m.name);
    const int n = 2 * Batch<double>::W + 1, mm = m.model.constraint_rows * m.model.constraint_rows;
    Batch<double> batch(m.model, n, 1);
    randomise(batch, rng);
    Data<double> data(m.model);
    DelassusData<double> dd(m.model);
    for (auto algorithm : {Batch<double>::DelassusAlgorithm::PvOsimr, Batch<double>::DelassusAlgorithm::PvOsim}) {
      batch.delassus(algorithm);
      CHECK(batch.failed_count() == 0);
      for (int e = 0; e < n; ++e) {
        const Eigen::VectorXd expected = Eigen::Map<const Eigen::VectorXd>(pv_osimr_delassus(m.model, data, dd, row(batch.q(), e, m.model.nq)).data(), mm);
        CHECK(relative_error(row(batch.delassus_matrices(), e, mm), expected) <= 1e-12);
      }
    }
  }
}

TEST_CASE("batched float Delassus matrices equal the W = 1 float kernel to 1e-5") {
  std::mt19937 rng(99);
  for (const NamedModel& m : constrained_models()) {
    CAPTURE(m.name);
    const int n = Batch<float>::W + 3, mm = m.model.constraint_rows * m.model.constraint_rows;
    Batch<float> batch(m.model, n, 1);
    ScalarBatch<float> scalar(m.model, n, 1);
    randomise(batch, rng);
    copy_state(batch, scalar);
    batch.delassus();
    scalar.delassus();
    for (int e = 0; e < n; ++e)
      CHECK(relative_error(row(batch.delassus_matrices(), e, mm), row(scalar.delassus_matrices(), e, mm)) <= 1e-5);
  }
}

TEST_CASE("PD steps with substeps, per-environment parameters and observations: SIMD lanes equal W = 1") {
  const Model model = load_urdf_file(model_path("humanoid.urdf"), RootJoint::FreeFlyer);
  std::mt19937 rng(84);
  std::vector<double> kp(static_cast<size_t>(model.nv), 60.0), kd(static_cast<size_t>(model.nv), 3.0);
  for (int k = 0; k < 6; ++k) kp[static_cast<size_t>(k)] = kd[static_cast<size_t>(k)] = 0.0;
  const std::vector<std::string> frames = {model.bodies[1].name, model.bodies.back().name};
  const auto configure = [&](auto& b) {
    using T = typename std::remove_reference_t<decltype(b)>::T;
    b.set_pd_gains(kp, kd);
    b.set_control_mode(ControlMode::PositionPD);
    for (int k = 0; k < b.num_envs() * model.nv; ++k) b.target()[k] = T(0.2);
    const std::vector<int> envs = {1, b.num_envs() - 1};
    b.set_body_inertia(envs, 3, std::vector<double>{2.0, 0.5}, std::vector<double>{0.01, 0, 0, 0, 0.02, 0},
                       std::vector<double>{0.02, 0, 0, 0, 0.02, 0, 0, 0, 0.03, 0.01, 0, 0, 0, 0.01, 0, 0, 0, 0.01});
    b.set_gravity(envs, std::vector<double>{0, 0, -5, 1, 0, -9});
    b.set_observed_frames(frames);
  };
  const auto compare = [&](auto& batch, auto& scalar, double tolerance) {
    randomise(batch, rng);
    copy_state(batch, scalar);
    configure(batch), configure(scalar);
    for (int k = 0; k < 3; ++k) batch.step(1e-3f, 2), scalar.step(1e-3f, 2);
    batch.observe(), scalar.observe();
    CHECK(batch.failed_count() == 0);
    const int n = batch.num_envs(), obs = batch.observation_size();
    for (int e = 0; e < n; ++e) {
      CHECK(relative_error(row(batch.q(), e, model.nq), row(scalar.q(), e, model.nq)) <= tolerance);
      CHECK(relative_error(row(batch.v(), e, model.nv), row(scalar.v(), e, model.nv)) <= tolerance);
      CHECK(relative_error(row(batch.observations(), e, obs), row(scalar.observations(), e, obs)) <= tolerance);
    }
  };
  SUBCASE("double, 1e-12") {
    Batch<double> batch(model, 2 * Batch<double>::W + 1, 1);
    ScalarBatch<double> scalar(model, batch.num_envs(), 1);
    compare(batch, scalar, 1e-12);
  }
  SUBCASE("float, 1e-5") {
    Batch<float> batch(model, 2 * Batch<float>::W + 1, 1);
    ScalarBatch<float> scalar(model, batch.num_envs(), 1);
    compare(batch, scalar, 1e-5);
  }
}

// A lane computes exactly what the W = 1 kernel computes (the same operations in the same
// order, the same sin and cos: layout/lanes.hpp), so the lanes agree with the scalar kernel
// to rounding-free precision even where LCABA's penalty amplifies rounding ~mu times.
// Checks qdd and the multipliers of every environment, lanes vs W = 1, on every loop model.
template <class T>
void check_loop_lanes_equal_scalar(ConstraintSolver solver, double tolerance, unsigned seed,
                                   const std::optional<ProximalSettings>& settings = std::nullopt) {
  std::mt19937 rng(seed);
  for (const NamedModel& m : constrained_models()) {
    CAPTURE(m.name);
    const int n = 2 * Batch<T>::W + 3;
    Batch<T> lanes(m.model, n, 1);
    ScalarBatch<T> scalar(m.model, n, 1);
    lanes.set_constraint_solver(solver), scalar.set_constraint_solver(solver);
    if (settings) lanes.set_constraint_settings(*settings), scalar.set_constraint_settings(*settings);
    randomise(lanes, rng);
    copy_state(lanes, scalar);
    lanes.forward_dynamics();
    scalar.forward_dynamics();
    for (int e = 0; e < n; ++e) {
      // Computed: at random states (the loops open) a slow mode may end at the cap, a report.
      const EnvStatus status = lanes.status()[static_cast<size_t>(e)];
      CHECK((status == EnvStatus::Ok || status == EnvStatus::ConstraintNotConverged));
      CHECK(relative_error(row(lanes.qdd(), e, m.model.nv), row(scalar.qdd(), e, m.model.nv)) <= tolerance);
      CHECK(relative_error(row(lanes.constraint_forces(), e, m.model.constraint_rows),
                           row(scalar.constraint_forces(), e, m.model.constraint_rows)) <= tolerance);
    }
  }
}

TEST_CASE("each SIMD lane of batched double LCABA equals the W = 1 double kernel to 1e-12, multipliers too") {
  check_loop_lanes_equal_scalar<double>(ConstraintSolver::Lcaba, 1e-12, 84);
}

TEST_CASE("batched float LCABA equals the W = 1 float kernel to 1e-5, multipliers too") {
  check_loop_lanes_equal_scalar<float>(ConstraintSolver::Lcaba, 1e-5, 85);
}

TEST_CASE("an LCABA lane's result does not depend on the environments sharing its block") {
  // Environment 0 alone (its block padded with neutral states) and next to W - 1 others whose
  // states need more iterations: bitwise the same qdd and iteration count.
  Model m = build_generated(generate_from_spec("ladder:4"));
  std::mt19937 rng(86);
  const int n = Batch<double>::W;
  Batch<double> crowded(m, n, 1), alone(m, 1, 1);
  randomise(crowded, rng);
  std::copy_n(crowded.q(), m.nq, alone.q());
  std::copy_n(crowded.v(), m.nv, alone.v());
  std::copy_n(crowded.tau(), m.nv, alone.tau());
  crowded.forward_dynamics();
  alone.forward_dynamics();
  for (int k = 0; k < m.nv; ++k) CHECK(crowded.qdd()[k] == alone.qdd()[k]);
  CHECK(crowded.constraint_iterations()[0] == alone.constraint_iterations()[0]);
}

TEST_CASE("each SIMD lane of batched double proxBBO equals the W = 1 double kernel to 1e-12, multipliers too") {
  // proxBBO keeps its accuracy at the API's stiff default mu in double.
  check_loop_lanes_equal_scalar<double>(ConstraintSolver::ProxBbo, 1e-12, 87, ProximalSettings{});
}

TEST_CASE("batched float proxBBO equals the W = 1 float kernel to 1e-5, multipliers too") {
  // float keeps the engine's default mu (1e2): with redundant rows (the weld closing the
  // planar cycle) a 1e-6 dual regularisation leaves float too few digits.
  check_loop_lanes_equal_scalar<float>(ConstraintSolver::ProxBbo, 1e-5, 88);
}
