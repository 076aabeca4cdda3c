// Real robot files (tests/robots/, from example-robot-data): every URDF loads as Pinocchio
// loads it, with the remedies listed in tests/robots/README.md where the file's data is
// non-physical or singular, and its dynamics pass the dense oracle and the batched kernels.
#include <filesystem>
#include <map>
#include <set>

#include "batch_helpers.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {
const std::string kCorpus = BATCHDYN_ROBOTS_DIR;

// What each file needs, stated up front so that a change in what loads is a test failure.
const std::set<std::string> kNeedsBalancedInertia = {"allegro_left_hand", "romeo", "tiago", "tiago_dual"};
const std::set<std::string> kNeedsBalancedInertiaWhenFree = {"icub"};
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

std::vector<std::string> corpus_files() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kCorpus))
    if (entry.path().extension() == ".urdf") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string path_of(const std::string& name) { return kCorpus + "/" + name + ".urdf"; }

bool needs_balance(const std::string& name, RootJoint root) {
  return kNeedsBalancedInertia.count(name) || (root == RootJoint::FreeFlyer && kNeedsBalancedInertiaWhenFree.count(name));
}

std::vector<RootJoint> roots_of(const std::string& name) {
  if (kWorldRoot.count(name)) return {RootJoint::Fixed};
  return {RootJoint::Fixed, RootJoint::FreeFlyer};
}

const char* root_name(RootJoint r) { return r == RootJoint::Fixed ? "fixed" : "free"; }

Model load(const std::string& name, RootJoint root) {
  LoadOptions options;
  options.balance_inertia = needs_balance(name, root);
  return load_urdf_file(path_of(name), root, options);
}

std::set<std::string> singular_names(const Model& model) {
  std::set<std::string> names;
  for (int i : model.singular_joints) names.insert(model.bodies[i].joint_name);
  return names;
}

// Every (file, root) pair as a dynamics-ready model: singular joints given armature
// (0.01 kg m^2) — the lock remedy is tested separately.
struct CorpusModel {
  std::string label;
  std::string file;
  Model model;
};
std::vector<CorpusModel> regular_corpus() {
  std::vector<CorpusModel> models;
  for (const std::string& name : corpus_files())
    for (RootJoint root : roots_of(name)) {
      Model model = load(name, root);
      for (int i : std::vector<int>(model.singular_joints)) set_armature(model, model.bodies[i].joint_name, 0.01);
      models.push_back({name + " (" + root_name(root) + ")", name, std::move(model)});
    }
  return models;
}
}  // namespace

TEST_CASE("the corpus holds every URDF of the shared robot set") {
  CHECK(corpus_files().size() == 26);
}

TEST_CASE("every corpus URDF loads with a fixed root and, unless its root link is 'world', a free-flyer root") {
  for (const std::string& name : corpus_files())
    for (RootJoint root : roots_of(name)) {
      CAPTURE(name);
      CAPTURE(root_name(root));
      Model model;
      REQUIRE_NOTHROW(model = load(name, root));
      CHECK(model.nv > 0);
      CHECK(model.nq == model.nv + (root == RootJoint::FreeFlyer ? 1 : 0));
      const auto expected = kSingularJoints.count(name) ? kSingularJoints.at(name) : std::set<std::string>{};
      CHECK(singular_names(model) == expected);
    }
}

TEST_CASE("a corpus file with non-physical inertia is refused without balance_inertia, naming the file and link") {
  for (const std::string& name : kNeedsBalancedInertia) {
    CAPTURE(name);
    try {
      load_urdf_file(path_of(name), RootJoint::Fixed);
      FAIL("loaded without balance_inertia");
    } catch (const Error& e) {
      const std::string message = e.what();
      CHECK(message.find(name + ".urdf") != std::string::npos);
      CHECK(message.find("triangle inequality") != std::string::npos);
      CHECK(message.find("balance_inertia") != std::string::npos);
    }
  }
}

TEST_CASE("icub with a free root is refused without balance_inertia: its root body's moments are (0, 0, 3e-6)") {
  for (const std::string& name : kNeedsBalancedInertiaWhenFree) {
    CAPTURE(name);
    CHECK_NOTHROW(load_urdf_file(path_of(name), RootJoint::Fixed));
    CHECK_THROWS_WITH_AS(load_urdf_file(path_of(name), RootJoint::FreeFlyer), doctest::Contains("triangle inequality"), Error);
  }
}

TEST_CASE("a root link called 'world' cannot be set free: the error says why") {
  for (const std::string& name : kWorldRoot) {
    CAPTURE(name);
    CHECK_THROWS_WITH_AS(load_urdf_file(path_of(name), RootJoint::FreeFlyer),
                         doctest::Contains("the root link is called 'world', which is the world itself"), Error);
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
    CHECK(reduced.singular_joints.empty());
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

TEST_CASE("corpus batched ABA: SIMD lanes equal the reference in double (1e-10) and in float (W = 1 float, and double to 1e-4)") {
  std::mt19937 rng(2027);
  for (const CorpusModel& m : regular_corpus()) {
    CAPTURE(m.label);
    const int nv = m.model.nv;
    const int n = Batch<double>::W + 3;
    Batch<double> batch(m.model, n, 1);
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
