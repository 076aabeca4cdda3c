// Loads a URDF given on the command line, runs ABA at the neutral configuration and checks
// the result against RNEA. Exit code 0 when consistent.
#include <batchdyn/batchdyn.hpp>
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
    std::printf("%s: nv = %d, |RNEA(ABA(tau)) - tau| = %.3g\n", model.name.c_str(), model.nv, error);
    return error < 1e-9 ? 0 : 1;
  } catch (const batchdyn::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
