// ADMM's solution polishing (kernels/contact/contact_polish.hpp): the rows the iterate shows acting,
// solved exactly, taken only where that meets the tolerance; and the active-set passes that
// correct a guess off by a row. On small problems with closed-form solutions, and on a real
// stalled one against an oracle that tries every active set.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <vector>

#include "helpers.hpp"
#include "kernels/contact/contact_admm.hpp"
#include "kernels/contact/contact_polish.hpp"

using namespace batchdyn;
using namespace batchdyn::test;

namespace {

// The limit rows' problem (G' and g', scaled) of a step of the collapsed humanoid holding a cube
// with welded feet (models/scenes/humanoid_hands_cube_feet.json, double, step 1243 from the
// reference state, joint limits held on the loops: kernels/loops/held_loops.hpp), where ADMM hit its
// cap: two pairs of limits push against each other through the loops (rows 0/2/4 and 10/11,
// correlations up to -0.9986; smallest eigenvalue 6.6e-4).
// clang-format off
constexpr double stalled_G[13 * 13] = {
    1.0, -0.13254124010251125, 0.8773992399567603, -0.05833661782365624, -0.8501578221466622, -0.000777164749840894, 0.0007752361606638411, -0.00014351172246274303, 0.1891044501985651, -0.003482313338849624, -0.0002701382131363841, 0.0006777677976611404, -0.0010728259343403522,
    -0.13254124010251125, 1.0, -0.0612371087330972, 0.3949919319087273, 0.018926279271612445, 5.178230848842849e-05, -8.35032915555131e-05, -0.00021065300626988475, 0.1072871669655348, 0.00043622974142551636, 0.0005081668467166974, -0.0005467377018719285, 0.0016448158730779363,
    0.8773992399567603, -0.0612371087330972, 1.0, -0.13528313792041557, -0.854375895954697, -0.0005991395883933069, 0.0006181420091327759, 0.00012300712521966947, 0.1886814087527073, -0.0028448687253022076, -0.0007803964601683246, 0.0010980184988876622, -0.0026088533436817293,
    -0.05833661782365624, 0.3949919319087272, -0.13528313792041555, 1.0000000000000002, 0.012527867061445104, 0.00030878466596518186, -0.00031039687720633177, 0.00017343046211920122, 0.10717992041449267, 0.0013571315455007751, -0.0002270057722692172, 5.845551153930988e-05, -0.0005679360402615714,
    -0.8501578221466622, 0.018926279271612445, -0.854375895954697, 0.012527867061445104, 0.9999999999999999, 0.0006999972114144667, -0.0012262281923416036, -0.000703181107527179, -0.38283045396510995, 0.005482040557449886, 0.00047971614347131717, -0.0011377265005306845, 0.003306871624520832,
    -0.000777164749840894, 5.178230848842849e-05, -0.0005991395883933069, 0.00030878466596518186, 0.0006999972114144667, 1.0, -0.9628705157260303, 0.03588303922691523, -0.000127211581393739, 0.004748717748551324, 0.00103048533821143, -0.0009535985788447351, 0.020657947790584955,
    0.0007752361606638411, -8.350329155551308e-05, 0.0006181420091327758, -0.00031039687720633177, -0.0012262281923416038, -0.9628705157260304, 1.0000000000000002, 0.07240044827639751, 0.0006172732982171921, 0.00028432122205629856, 0.002916123560459252, -0.003473145684970589, 0.05761450976296672,
    -0.00014351172246274303, -0.00021065300626988475, 0.00012300712521966947, 0.00017343046211920122, -0.0007031811075271789, 0.03588303922691523, 0.07240044827639751, 1.0, 0.0006646033671832889, -0.009031935868817951, 0.004623578692953956, -0.003965018358555928, 0.07382157176132424,
    0.1891044501985651, 0.1072871669655348, 0.18868140875270734, 0.10717992041449267, -0.38283045396510995, -0.000127211581393739, 0.000617273298217192, 0.0006646033671832889, 0.9999999999999998, -0.002791960718605115, -3.2912393265971294e-05, 0.00038157759285769135, -0.0016885950275351972,
    -0.003482313338849623, 0.00043622974142551636, -0.002844868725302207, 0.0013571315455007751, 0.005482040557449887, 0.004748717748551324, 0.00028432122205629856, -0.009031935868817951, -0.002791960718605115, 1.0000000000000002, -0.03976294842181466, 0.004711821999852648, 0.38494039785863193,
    -0.0002701382131363841, 0.0005081668467166974, -0.0007803964601683247, -0.0002270057722692172, 0.0004797161434713172, 0.00103048533821143, 0.002916123560459252, 0.004623578692953955, -3.2912393265971294e-05, -0.039762948421814666, 1.0, -0.9986181242660738, 0.018948530005067323,
    0.0006777677976611404, -0.0005467377018719286, 0.0010980184988876622, 5.845551153930988e-05, -0.0011377265005306845, -0.0009535985788447351, -0.0034731456849705885, -0.003965018358555929, 0.00038157759285769135, 0.004711821999852648, -0.9986181242660737, 1.0, -0.04553277088491059,
    -0.0010728259343403524, 0.0016448158730779363, -0.0026088533436817297, -0.0005679360402615714, 0.003306871624520832, 0.020657947790584955, 0.057614509762966726, 0.07382157176132424, -0.0016885950275351974, 0.3849403978586319, 0.018948530005067327, -0.045532770884910596, 1.0,
};
constexpr double stalled_g[13] = {-0.0073683014089015566, -0.035364674739600255, -0.007122427011864589, -0.035151044499506595, -0.012965574247930359, 0.003834448842268169, 0.01223737296204572, -0.01183839325715285, 0.002237543166189773, 0.001189713933581191, 0.00048383822453636617, -0.002282864490232218, -0.12529822877522712};
// clang-format on

// The solution of the LCP  lambda >= 0, G lambda + g >= 0, complementary, by trying every
// active set (2^m linear solves): the oracle for small m. Requires exactly one solution.
Eigen::VectorXd lcp_by_enumeration(const Eigen::MatrixXd& G, const Eigen::VectorXd& g) {
  const int m = static_cast<int>(g.size());
  int found = 0;
  Eigen::VectorXd solution = Eigen::VectorXd::Zero(m);
  for (int set = 0; set < (1 << m); ++set) {
    std::vector<int> acting;
    for (int i = 0; i < m; ++i)
      if (set >> i & 1) acting.push_back(i);
    const int a = static_cast<int>(acting.size());
    Eigen::MatrixXd GA(a, a);
    Eigen::VectorXd gA(a);
    for (int r = 0; r < a; ++r) {
      gA[r] = g[acting[static_cast<size_t>(r)]];
      for (int c = 0; c < a; ++c) GA(r, c) = G(acting[static_cast<size_t>(r)], acting[static_cast<size_t>(c)]);
    }
    Eigen::VectorXd lambda = Eigen::VectorXd::Zero(m);
    if (a > 0) {
      const Eigen::VectorXd lambda_A = GA.ldlt().solve(-gA);
      for (int r = 0; r < a; ++r) lambda[acting[static_cast<size_t>(r)]] = lambda_A[r];
    }
    if (lambda.minCoeff() >= 0.0 && (G * lambda + g).minCoeff() >= -1e-12) ++found, solution = lambda;
  }
  REQUIRE(found == 1);
  return solution;
}

// Two limit rows that push against each other through a loop (correlation -rho, as a knee and
// an ankle at opposite stops of a welded leg), and a third that separates: lambda_2 = 0 and
//     lambda_01 = -G_01^-1 g_01 = [a + rho b, rho a + b] / (1 - rho^2) >= 0   (g_01 = -[a, b]).
struct OpposedLimits {
  double rho = 0.9986, a = 0.01, b = 0.02, c = 0.03;
  Eigen::MatrixXd G() const {
    Eigen::MatrixXd G = Eigen::MatrixXd::Identity(3, 3);
    G(0, 1) = G(1, 0) = -rho;
    return G;
  }
  Eigen::VectorXd g() const { return Eigen::Vector3d(-a, -b, c); }
  Eigen::VectorXd solution() const { return Eigen::Vector3d(a + rho * b, rho * a + b, 0.0) / (1.0 - rho * rho); }
};

}  // namespace

TEST_CASE("ADMM polishing: a stalled limit problem of the collapsed humanoid, cold-started, is solved exactly by the warm start's polish, where plain ADMM ends at its cap 0.12 off") {
  const Eigen::MatrixXd G = Eigen::Map<const Eigen::Matrix<double, 13, 13, Eigen::RowMajor>>(stalled_G);
  const Eigen::VectorXd g = Eigen::Map<const Eigen::VectorXd>(stalled_g, 13);
  const Eigen::VectorXd exact = lcp_by_enumeration(G, g);
  ContactSettings settings;
  settings.tolerance = 1e-6, settings.max_iterations = 500;  // step()'s, in double
  for (const bool polish : {true, false}) {
    CAPTURE(polish);
    settings.polish = polish;
    ContactSolverWorkspace<double> ws = rows_problem(G, g);
    std::vector<double> lambda(13, 0.0);
    const ContactSolverReport<double> report = contact_admm(0, 13, 0, settings, ws, lambda.data());
    double error = 0.0;
    for (int i = 0; i < 13; ++i) error = std::max(error, std::abs(lambda[static_cast<size_t>(i)] - exact[i]));
    if (polish) {  // the natural map at lambda = 0 and its active-set passes: reported as 1 iteration
      CHECK(report.converged == 1.0);
      CHECK(report.iterations == 1.0);
      CHECK(error < 1e-11);
    } else {  // what the step did before: the residual falls ~1 % per iteration
      CHECK(report.converged == 0.0);
      CHECK(report.iterations == 500.0);
      CHECK(error > 0.1);
    }
  }
}

TEST_CASE("ADMM polishing: where the warm start slides (no linear guess), the stalled limit problem is solved exactly by the iterate's polish at the 10th iteration") {
  // A contact beside the stalled rows, uncoupled (G = I on its rows), that sticks at the solution
  // (lambda_c = -g_c, inside the cone of mu = 0.8) but is warm-started on the cone's rim, where
  // the natural map slides: the warm start's polish has no guess, ADMM iterates, and the
  // limits stall it until the polish after 10 iterations.
  const Eigen::MatrixXd limits_G = Eigen::Map<const Eigen::Matrix<double, 13, 13, Eigen::RowMajor>>(stalled_G);
  const Eigen::VectorXd limits_g = Eigen::Map<const Eigen::VectorXd>(stalled_g, 13);
  const Eigen::VectorXd limits_exact = lcp_by_enumeration(limits_G, limits_g);
  const int m = 16;
  ContactSettings settings;
  settings.tolerance = 1e-6, settings.max_iterations = 500;
  for (const bool polish : {true, false}) {
    CAPTURE(polish);
    settings.polish = polish;
    ContactSolverWorkspace<double> ws(1, 13);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j) ws.G[static_cast<size_t>(i * m + j)] = (i < 3 || j < 3) ? (i == j ? 1.0 : 0.0) : limits_G(i - 3, j - 3);
    ws.g[0] = -1.0, ws.g[1] = 0.5, ws.g[2] = 0.0;
    for (int i = 0; i < 13; ++i) ws.g[static_cast<size_t>(3 + i)] = limits_g[i];
    ws.mu[0] = 0.8;
    for (int c = 0; c < 14; ++c) ws.in_contact[static_cast<size_t>(c)] = 1.0;
    std::vector<double> lambda(m, 0.0);
    lambda[0] = 1.0, lambda[1] = 0.8;  // on the rim: |lambda_t| = mu lambda_n
    const ContactSolverReport<double> report = contact_admm(1, 13, 0, settings, ws, lambda.data());
    double error = std::max({std::abs(lambda[0] - 1.0), std::abs(lambda[1] + 0.5), std::abs(lambda[2])});
    for (int i = 0; i < 13; ++i) error = std::max(error, std::abs(lambda[static_cast<size_t>(3 + i)] - limits_exact[i]));
    if (polish) {
      CHECK(report.converged == 1.0);
      CHECK(report.iterations == 10.0);
      CHECK(error < 1e-11);
    } else {
      CHECK(report.converged == 0.0);
      CHECK(report.iterations == 500.0);
    }
  }
}

TEST_CASE("ADMM polishing: a guess with a row too many (an impulse creeping to zero) is corrected by an active-set pass") {
  // The iterate says all three rows act; the third one's exact impulse would be negative, so the
  // first solve is rejected and its natural map drops that row.
  const OpposedLimits p;
  ContactSolverWorkspace<double> ws = rows_problem(p.G(), p.g());
  const double z[3] = {1.0, 1.0, 1e-3};
  for (int i = 0; i < 3; ++i) ws.z[static_cast<size_t>(i)] = z[i], ws.sigma[static_cast<size_t>(i)] = 0.0;  // z > sigma: all act
  double residual = 1.0;
  const double taken = polish_contact_solution(0, 3, 0, 1.0, 1e-12, p.g().cwiseAbs().maxCoeff(), ws, residual);
  CHECK(taken == 1.0);
  CHECK(residual <= 1e-12);
  for (int i = 0; i < 3; ++i) CHECK(ws.z[static_cast<size_t>(i)] == doctest::Approx(p.solution()[i]).epsilon(1e-12).scale(1.0));
}

TEST_CASE("ADMM polishing: a lane whose guess cannot be solved (a sliding contact) or that is done keeps its iterate") {
  // One contact sliding: its rows are not linear, so no guess is solved.
  ContactSolverWorkspace<double> sliding(1, 0);
  const double G[9] = {1.0, 0.1, 0.0, 0.1, 1.0, 0.0, 0.0, 0.0, 1.0};
  for (int i = 0; i < 9; ++i) sliding.G[static_cast<size_t>(i)] = G[i];
  sliding.g[0] = -1.0, sliding.g[1] = 2.0, sliding.g[2] = 0.0;
  sliding.mu[0] = 0.5, sliding.in_contact[0] = 1.0;
  // The iterate on the cone's rim, slipping along +y: the natural map keeps it there.
  const double z[3] = {1.0, -0.5, 0.0};
  for (int i = 0; i < 3; ++i) {
    sliding.z[static_cast<size_t>(i)] = z[i];
    double s = sliding.g[static_cast<size_t>(i)];
    for (int j = 0; j < 3; ++j) s += G[i * 3 + j] * z[j];
    sliding.sigma[static_cast<size_t>(i)] = s;
  }
  double residual = 0.5;
  CHECK(polish_contact_solution(1, 0, 0, 1.0, 1e-12, 2.0, sliding, residual) == 0.0);
  CHECK(residual == 0.5);
  for (int i = 0; i < 3; ++i) CHECK(sliding.z[static_cast<size_t>(i)] == z[i]);

  // A lane no longer live (converged before) is left alone even where the polish would succeed.
  const OpposedLimits p;
  ContactSolverWorkspace<double> done = rows_problem(p.G(), p.g());
  for (int i = 0; i < 3; ++i) done.z[static_cast<size_t>(i)] = 0.25, done.sigma[static_cast<size_t>(i)] = 0.0;
  CHECK(polish_contact_solution(0, 3, 0, 0.0, 1e-12, 0.03, done, residual) == 0.0);
  for (int i = 0; i < 3; ++i) CHECK(done.z[static_cast<size_t>(i)] == 0.25);
}

TEST_CASE("ADMM polishing: a sticking contact beside a limit is solved exactly (sigma = 0 on all four rows), as the dense solve says") {
  // A contact pressed onto the plane with a small tangential push (inside its cone: it sticks)
  // and one limit row coupled to it that acts too: every row acts, lambda = -G^-1 g.
  Eigen::MatrixXd G(4, 4);
  G << 1.0, 0.2, 0.0, 0.1,  //
      0.2, 1.0, 0.1, 0.0,   //
      0.0, 0.1, 1.0, 0.0,   //
      0.1, 0.0, 0.0, 1.0;
  const Eigen::Vector4d g(-1.0, 0.05, -0.02, -0.3);
  const Eigen::Vector4d exact = G.ldlt().solve(-g);
  REQUIRE(exact[0] > 0.0);
  REQUIRE(exact.segment<2>(1).norm() < 0.5 * 0.8 * exact[0]);  // well inside the cone of mu = 0.8
  REQUIRE(exact[3] > 0.0);
  ContactSolverWorkspace<double> ws(1, 1);
  for (int i = 0; i < 4; ++i) {
    ws.g[static_cast<size_t>(i)] = g[i];
    for (int j = 0; j < 4; ++j) ws.G[static_cast<size_t>(i * 4 + j)] = G(i, j);
  }
  ws.mu[0] = 0.8, ws.in_contact[0] = ws.in_contact[1] = 1.0;
  // An iterate 10 % off the solution, as ADMM's after a few iterations, and its velocities.
  const Eigen::Vector4d z = 1.1 * exact;
  const Eigen::Vector4d sigma = G * z + g;
  for (int i = 0; i < 4; ++i) ws.z[static_cast<size_t>(i)] = z[i], ws.sigma[static_cast<size_t>(i)] = sigma[i];
  double residual = 1.0;
  CHECK(polish_contact_solution(1, 1, 0, 1.0, 1e-12, g.cwiseAbs().maxCoeff(), ws, residual) == 1.0);
  CHECK(residual <= 1e-12);
  for (int i = 0; i < 4; ++i) CHECK(ws.z[static_cast<size_t>(i)] == doctest::Approx(exact[i]).epsilon(1e-12).scale(1.0));
}

namespace {

// A contact pressed onto the plane (mu = 0.8) beside a limit row, both acting, with lambda =
// -G^-1 g inside the cone: the problem of the test above, as contact_admm's workspace.
struct StickingBesideLimit {
  Eigen::Matrix4d G;
  Eigen::Vector4d g{-1.0, 0.05, -0.02, -0.3};
  StickingBesideLimit() {
    G << 1.0, 0.2, 0.0, 0.1,  //
        0.2, 1.0, 0.1, 0.0,   //
        0.0, 0.1, 1.0, 0.0,   //
        0.1, 0.0, 0.0, 1.0;
  }
  Eigen::Vector4d solution() const { return G.ldlt().solve(-g); }
  ContactSolverWorkspace<double> workspace() const {
    ContactSolverWorkspace<double> ws(1, 1);
    for (int i = 0; i < 4; ++i) {
      ws.g[static_cast<size_t>(i)] = g[i];
      for (int j = 0; j < 4; ++j) ws.G[static_cast<size_t>(i * 4 + j)] = G(i, j);
    }
    ws.mu[0] = 0.8, ws.in_contact[0] = ws.in_contact[1] = 1.0;
    return ws;
  }
};

}  // namespace

TEST_CASE("ADMM polishing: warm-started with its active set still holding, a step is solved exactly by the warm start's polish, with no ADMM iteration") {
  const StickingBesideLimit p;
  ContactSettings settings;
  settings.tolerance = 1e-6, settings.max_iterations = 500;
  // The previous step's impulses: the solution of a problem 5 % weaker (the same rows act).
  const Eigen::Vector4d previous = 0.95 * p.solution();
  for (const bool polish : {true, false}) {
    CAPTURE(polish);
    settings.polish = polish;
    ContactSolverWorkspace<double> ws = p.workspace();
    std::vector<double> lambda(previous.data(), previous.data() + 4);
    const ContactSolverReport<double> report = contact_admm(1, 1, 0, settings, ws, lambda.data());
    CHECK(report.converged == 1.0);
    if (polish) {
      CHECK(report.iterations == 1.0);  // the polish, no ADMM iteration
      CHECK(report.residual <= 1e-12);
      for (int i = 0; i < 4; ++i) CHECK(lambda[static_cast<size_t>(i)] == doctest::Approx(p.solution()[i]).epsilon(1e-12).scale(1.0));
    } else {  // ADMM iterates its way there, to the tolerance
      CHECK(report.iterations > 1.0);
      for (int i = 0; i < 4; ++i) CHECK(lambda[static_cast<size_t>(i)] == doctest::Approx(p.solution()[i]).epsilon(1e-5).scale(1.0));
    }
  }
}

TEST_CASE("ADMM polishing: where the contact of the warm start has lifted off, the warm start's polish drops it, exactly and with no ADMM iteration") {
  // The same rows, but the ground has moved away: the contact's normal velocity is now
  // separating (g_n > 0), so only the limit acts, lambda = (0, 0, 0, -g_l / G_ll). The previous
  // step's impulses still press; at them, the natural map finds the contact open.
  StickingBesideLimit p;
  p.g[0] = 0.5;
  const Eigen::Vector4d exact(0.0, 0.0, 0.0, -p.g[3] / p.G(3, 3));
  ContactSettings settings;
  settings.tolerance = 1e-6, settings.max_iterations = 500;
  ContactSolverWorkspace<double> ws = p.workspace();
  const Eigen::Vector4d previous = StickingBesideLimit().solution();
  std::vector<double> lambda(previous.data(), previous.data() + 4);
  const ContactSolverReport<double> report = contact_admm(1, 1, 0, settings, ws, lambda.data());
  CHECK(report.converged == 1.0);
  CHECK(report.iterations == 1.0);
  for (int i = 0; i < 4; ++i) CHECK(lambda[static_cast<size_t>(i)] == doctest::Approx(exact[i]).epsilon(1e-12).scale(1.0));
}

TEST_CASE("ADMM polishing: on redundant rows the warm start's polish keeps its split of the load, the solution nearest to it") {
  // Two limit rows that repeat each other (two corners of one face: G singular), g consistent:
  // every lambda >= 0 with lambda_1 + lambda_2 = 1 solves the problem. The previous step's
  // impulses (0.6, 0.3) carry 0.9; the polish, a proximal point anchored at them, adds the
  // missing 0.1 equally and keeps their difference: (0.65, 0.35). An undamped solve would be free
  // to return any split, and the contact forces would jump from step to step.
  Eigen::Matrix2d G;
  G << 1.0, 1.0, 1.0, 1.0;
  const Eigen::Vector2d g(-1.0, -1.0);
  ContactSettings settings;
  settings.tolerance = 1e-6, settings.max_iterations = 500;
  ContactSolverWorkspace<double> ws = rows_problem(G, g);
  std::vector<double> lambda = {0.6, 0.3};
  const ContactSolverReport<double> report = contact_admm(0, 2, 0, settings, ws, lambda.data());
  CHECK(report.converged == 1.0);
  CHECK(report.iterations == 1.0);  // the warm start's polish, no ADMM iteration
  CHECK(lambda[0] + lambda[1] == doctest::Approx(1.0).epsilon(1e-12).scale(1.0));
  // The split to eps / delta (2e-8): along the null direction the factor's pivot is rounding.
  CHECK(lambda[0] == doctest::Approx(0.65).epsilon(1e-8).scale(1.0));
  CHECK(lambda[1] == doctest::Approx(0.35).epsilon(1e-8).scale(1.0));
}
