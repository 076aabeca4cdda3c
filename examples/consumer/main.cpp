// A user's program against an installed batchdyn: loads a URDF given on the command line,
// checks ABA against RNEA at the neutral configuration, then steps 64 environments with the
// SIMD batch engine on 2 threads. Exit code 0 when everything is consistent.
#include <batchdyn/batchdyn.hpp>
#include <cmath>
#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: consumer MODEL.urdf\n");
    return 1;
  }
  try {
    const batchdyn::Model model = batchdyn::load_urdf_file(argv[1], batchdyn::RootJoint::FreeFlyer);
    batchdyn::Data<double> data(model);
    const Eigen::VectorXd q = batchdyn::neutral_configuration<double>(model);
    const Eigen::VectorXd v = Eigen::VectorXd::Zero(model.nv), tau = Eigen::VectorXd::Ones(model.nv);
    const Eigen::VectorXd qdd = batchdyn::aba(model, data, q, v, tau);
    const double error = (batchdyn::rnea(model, data, q, v, qdd) - tau).norm();

    batchdyn::Batch<double> batch(model, 64, 2);
    for (int k = 0; k < 64 * model.nv; ++k) batch.tau()[k] = 1.0;
    batch.forward_dynamics();
    double lane_error = 0;  // every environment has the same state: same qdd as the reference
    for (int e = 0; e < 64; ++e)
      for (int k = 0; k < model.nv; ++k) lane_error = std::fmax(lane_error, std::fabs(batch.qdd()[e * model.nv + k] - qdd[k]));
    for (int step = 0; step < 100; ++step) batch.step(1e-3);

    std::printf("%s: nv = %d, |RNEA(ABA(tau)) - tau| = %.3g, batched lanes vs reference %.3g, %d lanes x %d threads, "
                "%d failed\n",
                model.name.c_str(), model.nv, error, lane_error, batchdyn::Batch<double>::W, batch.threads(),
                batch.failed_count());
    return error < 1e-9 && lane_error < 1e-9 && batch.failed_count() == 0 ? 0 : 1;
  } catch (const batchdyn::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
