// Real robot files (tests/robots/, from example-robot-data): every URDF and SDF loads with
// default options as Pinocchio loads it, the reference functions ignore a file's damping as
// Pinocchio's do, and the dynamics pass the dense oracle and the batched kernels (with the
// remedies tests/robots/README.md lists where a model is singular).
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <set>

#include "batch/batched_eval.hpp"
#include "batch_helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {
const std::string kCorpus = BATCHDYN_ROBOTS_DIR;

// What each file holds, stated up front so that a change in how it loads is a test failure.
// Rotational inertias that violate the triangle inequality (they load with a warning):
const std::set<std::string> kTriangleInequalityWarnings = {"allegro_left_hand", "romeo", "tiago", "tiago_dual", "cassie"};
const std::set<std::string> kTriangleInequalityWarningsWhenFree = {"icub"};  // its root body: moments (0, 0, 3e-6)
const std::set<std::string> kWorldRoot = {"ur10_robot", "z1"};
// M(q) too ill-conditioned for float: icub's head is a point mass with its centre of mass
// almost on the neck_yaw axis (1e-7 kg m^2 about it; cond(M) ~ 6e6), so float qdd carries
// O(1) relative error in that direction. Float lanes still equal the W = 1 float kernel.
const std::set<std::string> kIllConditionedInFloat = {"icub"};
const std::map<std::string, std::set<std::string>> kSingularJoints = {
    // Both hands are massless: the wrist (LHand/RHand) and every finger joint.
    {"romeo", {"LHand", "LFinger12", "LFinger13", "LFinger21", "LFinger22", "LFinger23", "LFinger31", "LFinger32",
               "LFinger33", "LThumb1", "LThumb2", "LThumb3", "RHand", "RFinger12", "RFinger13", "RFinger21", "RFinger22",
               "RFinger23", "RFinger31", "RFinger32", "RFinger33", "RThumb1", "RThumb2", "RThumb3"}},
    {"falcon_bravo7_gripper", {"bravo_finger1_joint", "bravo_finger2_joint"}},
};
// Files whose joints carry <dynamics damping> / <damping>.
const std::set<std::string> kDamped = {"alex_nub_hands", "allegro_left_hand", "b1-z1", "baxter", "cassie",
                                       "double_pendulum_continuous", "hyq_no_sensors", "icub", "pr2", "talos_left_arm",
                                       "tiago", "tiago_dual", "z1"};

// Corpus file names (stem -> file name), URDF and SDF.
std::map<std::string, std::string> corpus_files() {
  std::map<std::string, std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus))
    if (entry.path().extension() == ".urdf" || entry.path().extension() == ".sdf")
      files[entry.path().stem().string()] = entry.path().filename().string();
  return files;
}
std::vector<std::string> urdf_names() {
  std::vector<std::string> names;
  for (const auto& [name, file] : corpus_files())
    if (!is_sdf_file(file)) names.push_back(name);
  return names;
}

std::string path_of(const std::string& name) { return kCorpus + "/" + corpus_files().at(name); }

bool warns_triangle(const std::string& name, RootJoint root) {
  return kTriangleInequalityWarnings.count(name) || (root == RootJoint::FreeFlyer && kTriangleInequalityWarningsWhenFree.count(name));
}

std::vector<RootJoint> roots_of(const std::string& name) {
  if (kWorldRoot.count(name)) return {RootJoint::Fixed};
  return {RootJoint::Fixed, RootJoint::FreeFlyer};
}

const char* root_name(RootJoint r) { return r == RootJoint::Fixed ? "fixed" : "free"; }

Model load(const std::string& name, RootJoint root, const LoadOptions& options = {}) {
  return load_robot_file(path_of(name), root, LoopClosure::DuplicateLink, options);
}

std::set<std::string> singular_names(const Model& model) {
  std::set<std::string> names;
  for (int i : find_singular_joints(model)) names.insert(model.bodies[i].joint_name);
  return names;
}

int quaternion_joints(const Model& model) {
  int count = 0;
  for (int i = 1; i < model.num_bodies(); ++i) count += quaternion_offset(model.bodies[i].joint_type) >= 0;
  return count;
}

// The file with every damping value written as 0, next to the test's working directory.
std::string undamped_copy(const std::string& name) {
  std::ifstream in(path_of(name));
  std::stringstream text;
  text << in.rdbuf();
  std::string content = std::regex_replace(text.str(), std::regex(R"(damping\s*=\s*"[^"]*")"), "damping=\"0\"");
  content = std::regex_replace(content, std::regex(R"(<damping>[^<]*</damping>)"), "<damping>0</damping>");
  const std::string path = (std::filesystem::temp_directory_path() / ("batchdyn_undamped_" + corpus_files().at(name))).string();
  std::ofstream(path) << content;
  return path;
}

// Every (URDF, root) pair as a dynamics-ready model: singular joints given armature
// (0.01 kg m^2) — the lock remedy is tested separately.
struct CorpusModel {
  std::string label;
  std::string file;
  Model model;
};
std::vector<CorpusModel> regular_corpus() {
  std::vector<CorpusModel> models;
  for (const std::string& name : urdf_names())
    for (RootJoint root : roots_of(name)) {
      Model model = load(name, root);
      for (int i : find_singular_joints(model)) set_armature(model, model.bodies[i].joint_name, 0.01);
      models.push_back({name + " (" + root_name(root) + ")", name, std::move(model)});
    }
  return models;
}
}  // namespace

TEST_CASE("the corpus holds every URDF of the shared robot set and the older Cassie SDF") {
  CHECK(urdf_names().size() == 26);
  CHECK(corpus_files().count("cassie"));
}

TEST_CASE("every corpus URDF and SDF loads with default options, with a fixed root and, unless its root link is 'world', a free one") {
  for (const auto& [name, file] : corpus_files())
    for (RootJoint root : roots_of(name)) {
      CAPTURE(file);
      CAPTURE(root_name(root));
      Model model;
      REQUIRE_NOTHROW(model = load(name, root));
      CHECK(model.nv > 0);
      CHECK(model.nq == model.nv + quaternion_joints(model));
      const auto expected = kSingularJoints.count(name) ? kSingularJoints.at(name) : std::set<std::string>{};
      CHECK(singular_names(model) == expected);
    }
}

TEST_CASE("a corpus file whose inertia violates the triangle inequality loads with a warning naming the file and link") {
  for (const auto& [name, file] : corpus_files())
    for (RootJoint root : roots_of(name)) {
      CAPTURE(file);
      CAPTURE(root_name(root));
      const Model model = load(name, root);
      CHECK(model.inertia_warnings.empty() == !warns_triangle(name, root));
      for (const std::string& warning : model.inertia_warnings) {
        CHECK(warning.find(file) != std::string::npos);
        CHECK(warning.find("triangle inequality") != std::string::npos);
      }
    }
}

TEST_CASE("strict_inertia refuses exactly the corpus files with triangle-inequality violations, balance_inertia repairs them") {
  LoadOptions strict, balance;
  strict.strict_inertia = true;
  balance.balance_inertia = true;
  for (const auto& [name, file] : corpus_files())
    for (RootJoint root : roots_of(name)) {
      CAPTURE(file);
      CAPTURE(root_name(root));
      if (warns_triangle(name, root)) CHECK_THROWS_WITH_AS(load(name, root, strict), doctest::Contains("triangle inequality"), Error);
      else CHECK_NOTHROW(load(name, root, strict));
      CHECK(load(name, root, balance).inertia_warnings.empty());
    }
}

TEST_CASE("a corpus file with damping gives the reference dynamics of its copy without damping, exactly") {
  std::mt19937 rng(2028);
  for (const std::string& name : kDamped) {
    CAPTURE(name);
    const Model damped = load(name, RootJoint::Fixed), undamped = load_robot_file(undamped_copy(name), RootJoint::Fixed);
    CHECK(std::any_of(damped.damping.begin(), damped.damping.end(), [](double d) { return d > 0; }));
    CHECK(std::all_of(undamped.damping.begin(), undamped.damping.end(), [](double d) { return d == 0; }));
    Data<double> data(damped), plain(undamped);
    for (int trial = 0; trial < 2; ++trial) {
      const State s = random_state(damped, rng);
      CHECK(aba(damped, data, s.q, s.v, s.tau) == aba(undamped, plain, s.q, s.v, s.tau));
      CHECK(rnea(damped, data, s.q, s.v, s.tau) == rnea(undamped, plain, s.q, s.v, s.tau));
    }
  }
}

TEST_CASE("a root link called 'world' cannot be set free: the error says why") {
  for (const std::string& name : kWorldRoot) {
    CAPTURE(name);
    CHECK_THROWS_WITH_AS(load(name, RootJoint::FreeFlyer), doctest::Contains("the root link is called 'world', which is the world itself"), Error);
  }
}

TEST_CASE("a singular corpus model refuses forward dynamics, naming the joints and both remedies") {
  const Model romeo = load("romeo", RootJoint::Fixed);
  Data<double> data(romeo);
  const Eigen::VectorXd q = neutral_configuration<double>(romeo), zero = Eigen::VectorXd::Zero(romeo.nv);
  try {
    aba(romeo, data, q, zero, zero);
    FAIL("aba ran on a singular model");
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const std::string& joint : kSingularJoints.at("romeo")) CHECK(message.find(joint) != std::string::npos);
    CHECK(message.find("--lock-joints") != std::string::npos);
    CHECK(message.find("--armature") != std::string::npos);
  }
  CHECK_THROWS_AS(Batch<double>(romeo, 4), Error);
}

TEST_CASE("locking the singular joints of romeo and the falcon gripper gives regular reduced models") {
  for (const auto& [name, joints] : kSingularJoints) {
    CAPTURE(name);
    const Model model = load(name, RootJoint::Fixed);
    std::vector<JointLock> locks;
    for (const std::string& j : joints) locks.push_back({j, std::nullopt});
    const Model reduced = lock_joints(model, locks);
    CHECK(find_singular_joints(reduced).empty());
    CHECK(reduced.nv == model.nv - static_cast<int>(joints.size()));
    for (const std::string& j : joints) CHECK(reduced.has_frame(j, FrameKind::Joint));  // still a frame
    std::mt19937 rng(7);
    Data<double> data(reduced);
    const State s = random_state(reduced, rng);
    const Eigen::VectorXd qdd = aba(reduced, data, s.q, s.v, s.tau);
    CHECK(relative_error(rnea(reduced, data, s.q, s.v, qdd), s.tau) <= 1e-9);
  }
}

TEST_CASE("corpus dynamics: RNEA(q, v, ABA(q, v, tau)) = tau and ABA = M^-1 (tau - b) on random states") {
  std::mt19937 rng(2026);
  for (const CorpusModel& m : regular_corpus()) {
    CAPTURE(m.label);
    Data<double> data(m.model);
    for (int trial = 0; trial < 3; ++trial) {
      const State s = random_state(m.model, rng);
      const Eigen::VectorXd qdd = aba(m.model, data, s.q, s.v, s.tau);
      CHECK(relative_error(rnea(m.model, data, s.q, s.v, qdd), s.tau) <= 1e-9);
      const Eigen::MatrixXd M = crba(m.model, data, s.q);
      const Eigen::VectorXd b = nonlinear_effects(m.model, data, s.q, s.v);
      const Eigen::VectorXd dense = M.llt().solve(s.tau - b);
      CHECK(relative_error(qdd, dense) <= 1e-8);
    }
  }
}

TEST_CASE("corpus batched ABA without passive forces: SIMD lanes equal the reference in double (1e-10) and in float (W = 1 float, and double to 1e-4)") {
  std::mt19937 rng(2027);
  for (const CorpusModel& m : regular_corpus()) {
    CAPTURE(m.label);
    const int nv = m.model.nv;
    const int n = Batch<double>::W + 3;
    Batch<double> batch(m.model, n, 1);
    batch.set_passive_forces(false);  // the reference's dynamics: a file's damping is not applied
    randomise(batch, rng);
    batch.forward_dynamics();
    CHECK(batch.failed_count() == 0);
    Data<double> data(m.model);
    for (int e = 0; e < n; ++e) {
      const Eigen::VectorXd expected = aba(m.model, data, row(batch.q(), e, m.model.nq), row(batch.v(), e, nv), row(batch.tau(), e, nv));
      CHECK(relative_error(row(batch.qdd(), e, nv), expected) <= 1e-10);
    }
    Batch<float> fbatch(m.model, n, 1);
    ScalarBatch<float> fscalar(m.model, n, 1);
    fbatch.set_passive_forces(false), fscalar.set_passive_forces(false);
    fbatch.remove_effort_limits();  // the random torques unclamped, as for `batch`
    for (int k = 0; k < n * m.model.nq; ++k) fbatch.q()[k] = static_cast<float>(batch.q()[k]);
    for (int k = 0; k < n * nv; ++k) fbatch.v()[k] = static_cast<float>(batch.v()[k]), fbatch.tau()[k] = static_cast<float>(batch.tau()[k]);
    copy_state(fbatch, fscalar);
    fbatch.forward_dynamics();
    fscalar.forward_dynamics();
    CHECK(fbatch.failed_count() == 0);
    for (int e = 0; e < n; ++e) {
      const Eigen::VectorXd lanes = row(fbatch.qdd(), e, nv);
      CHECK(relative_error(lanes, row(fscalar.qdd(), e, nv)) <= 1e-3);
      if (kIllConditionedInFloat.count(m.file)) continue;
      CHECK(relative_error(lanes, aba(m.model, data, row(fbatch.q(), e, m.model.nq), row(fbatch.v(), e, nv),
                                      row(fbatch.tau(), e, nv))) <= 1e-4);
    }
  }
}

TEST_CASE("corpus eval: batched = reference with torques beyond the effort limits, neither clamps nor damps") {
  std::mt19937 rng(2028);
  int limited_models = 0;
  for (const CorpusModel& m : regular_corpus()) {
    CAPTURE(m.label);
    const int n = Batch<double>::W + 3;
    EnvironmentStates states;
    int beyond = 0;  // torques past their dof's limit: the case the clamp would change
    for (int e = 0; e < n; ++e) {
      State s = random_state(m.model, rng);
      s.v *= 0.5;
      for (int k = 0; k < m.model.nv; ++k) {
        const double limit = m.model.effort_limit[static_cast<size_t>(k)];
        if (std::isfinite(limit) && limit > 0) s.tau[k] = (e % 2 ? 3.0 : -3.0) * limit * (1 + 0.1 * std::abs(s.tau[k])), ++beyond;
      }
      states.q.push_back(s.q), states.v.push_back(s.v), states.tau.push_back(s.tau);
    }
    const std::vector<EnvironmentResult> reference = evaluate_reference(m.model, Algorithm::Aba, states);
    const std::vector<EnvironmentResult> batched = evaluate_batched(m.model, Algorithm::Aba, states, {}, false);
    for (int e = 0; e < n; ++e) {
      REQUIRE(reference[static_cast<size_t>(e)].ok());
      REQUIRE(batched[static_cast<size_t>(e)].ok());
      Data<double> data(m.model);
      const Eigen::MatrixXd M = crba(m.model, data, states.q[static_cast<size_t>(e)]);
      const Eigen::VectorXd dense_qdd =
          M.llt().solve(states.tau[static_cast<size_t>(e)] -
                        nonlinear_effects(m.model, data, states.q[static_cast<size_t>(e)], states.v[static_cast<size_t>(e)]));
      // Two backward-stable solves agree to about nv cond(M) eps (Higham, Accuracy and Stability
      // of Numerical Algorithms, Thm 10.4): the hands' light phalanges give iCub cond(M) ~ 1e7
      // (median over random states; up to 1e10).
      const Eigen::VectorXd eigenvalues = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(M, Eigen::EigenvaluesOnly).eigenvalues();
      const double condition = eigenvalues.maxCoeff() / eigenvalues.minCoeff();
      CAPTURE(condition);
      CHECK(relative_error(reference[static_cast<size_t>(e)].qdd, dense_qdd) <= std::max(1e-8, m.model.nv * condition * std::numeric_limits<double>::epsilon()));
      CHECK(relative_error(batched[static_cast<size_t>(e)].qdd, reference[static_cast<size_t>(e)].qdd) <= 1e-10);
    }
    if (beyond == 0) continue;
    ++limited_models;
    Batch<double> clamped(m.model, n, 1);  // the simulator's default: the same torques clamped change qdd
    clamped.set_passive_forces(false);
    for (int e = 0; e < n; ++e) {
      std::copy_n(states.q[static_cast<size_t>(e)].data(), m.model.nq, clamped.q() + static_cast<long>(e) * m.model.nq);
      std::copy_n(states.v[static_cast<size_t>(e)].data(), m.model.nv, clamped.v() + static_cast<long>(e) * m.model.nv);
      std::copy_n(states.tau[static_cast<size_t>(e)].data(), m.model.nv, clamped.tau() + static_cast<long>(e) * m.model.nv);
    }
    clamped.forward_dynamics();
    CHECK(relative_error(row(clamped.qdd(), 0, m.model.nv), reference[0].qdd) > 1e-3);
  }
  CHECK(limited_models >= 10);  // most corpus files give effort limits
}
