// The scalar reference functions (double), one environment at a time, computing the dynamics as
// Pinocchio defines them: for checking, and for single environments.
#include "bindings/common.hpp"

namespace batchdyn::python {

void bind_reference_functions(py::module_& m) {
  // Scalar reference functions (double), for checking and for single environments.
  m.def("aba", [](const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& tau) {
    Data<double> data(model);
    return Eigen::VectorXd(aba(model, data, vector_arg(q, model.nq, "q", "aba"), vector_arg(v, model.nv, "v", "aba"),
                               vector_arg(tau, model.nv, "tau", "aba")));
  }, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), "Forward dynamics of the tree as Pinocchio defines it (constraints ignored, no joint damping).");
  m.def("rnea", [](const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& qdd) {
    Data<double> data(model);
    return Eigen::VectorXd(rnea(model, data, vector_arg(q, model.nq, "q", "rnea"), vector_arg(v, model.nv, "v", "rnea"),
                                vector_arg(qdd, model.nv, "qdd", "rnea")));
  }, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("qdd"), "Inverse dynamics tau = M qdd + b (Pinocchio's: no joint damping).");
  m.def("crba", [](const Model& model, const Eigen::VectorXd& q) {
    Data<double> data(model);
    return Eigen::MatrixXd(crba(model, data, vector_arg(q, model.nq, "q", "crba")));
  }, py::arg("model"), py::arg("q"), "The joint-space inertia matrix M(q).");
  m.def("constrained_forward_dynamics",
        [](const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& tau, double mu,
           int max_iterations, double tolerance) {
          require_constraints(model, "batchdyn.constrained_forward_dynamics");
          Data<double> data(model);
          ConstrainedData<double> cdata(model);
          ProximalSettings settings;
          settings.mu = mu, settings.max_iterations = max_iterations, settings.tolerance = tolerance;
          constrained_forward_dynamics(model, data, cdata, vector_arg(q, model.nq, "q", "constrained_forward_dynamics"),
                                       vector_arg(v, model.nv, "v", "constrained_forward_dynamics"),
                                       vector_arg(tau, model.nv, "tau", "constrained_forward_dynamics"), settings);
          py::dict out;
          out["qdd"] = Eigen::VectorXd(cdata.qdd);
          out["lambda"] = Eigen::VectorXd(cdata.lambda);
          out["iterations"] = cdata.iterations;
          out["residual"] = static_cast<double>(cdata.residual_norm);
          return out;
        },
        py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("mu") = ProximalSettings{}.mu,
        py::arg("max_iterations") = ProximalSettings{}.max_iterations, py::arg("tolerance") = ProximalSettings{}.tolerance,
        "Dense proximal constrained forward dynamics: dict(qdd, lambda, iterations, residual, converged).");
  // The loop kernels' reference entry points share their signature and result.
  auto bind_loop_solver = [&m](const char* name, auto solve, double default_mu, const char* doc) {
    m.def(name,
          [name, solve](const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& tau, double mu,
                        int max_iterations, double tolerance) {
            require_constraints(model, std::string("batchdyn.") + name);
            ProximalSettings settings;
            settings.mu = mu, settings.max_iterations = max_iterations, settings.tolerance = tolerance;
            const auto data = solve(model, vector_arg(q, model.nq, "q", name), vector_arg(v, model.nv, "v", name),
                                    vector_arg(tau, model.nv, "tau", name), settings);
            py::dict out;
            out["qdd"] = Eigen::VectorXd(data->qdd);
            out["lambda"] = Eigen::VectorXd(data->lambda);
            out["iterations"] = data->iterations;
            out["residual"] = static_cast<double>(data->residual);
            out["converged"] = data->converged;
            return out;
          },
          py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("mu") = default_mu,
          py::arg("max_iterations") = ProximalSettings{}.max_iterations, py::arg("tolerance") = ProximalSettings{}.tolerance, doc);
  };
  bind_loop_solver("lcaba", [](const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& tau,
                               const ProximalSettings& settings) {
    auto data = std::make_unique<LcabaData<double>>(model);
    lcaba(model, *data, q, v, tau, settings);
    return data;
  }, algorithm_traits(Algorithm::Lcaba).default_mu,
  "Constrained forward dynamics by LCABA (recursive, O(n) for local loops): dict(qdd, lambda, iterations, residual, converged).");
  bind_loop_solver("proxbbo", [](const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& tau,
                                 const ProximalSettings& settings) {
    auto data = std::make_unique<ProxBboData<double>>(model);
    proxbbo(model, *data, q, v, tau, settings);
    return data;
  }, algorithm_traits(Algorithm::ProxBbo).default_mu,
  "Constrained forward dynamics by proxBBO (recursive, multipliers eliminated at the loop roots): dict(qdd, lambda, "
  "iterations, residual, converged).");
  m.def("project_to_constraints",
        [](const Model& model, const Eigen::VectorXd& q, int max_iterations, double tolerance) {
          require_constraints(model, "batchdyn.project_to_constraints");
          Eigen::VectorXd projected = vector_arg(q, model.nq, "q", "project_to_constraints");
          ProjectionSettings settings;
          settings.max_iterations = max_iterations, settings.tolerance = tolerance;
          const ProjectionReport report = project_to_constraints(model, projected, settings);
          py::dict info;
          info["iterations"] = report.iterations;
          info["residual"] = report.residual;
          info["converged"] = report.converged;
          return py::make_tuple(projected, info);
        },
        py::arg("model"), py::arg("q"), py::arg("max_iterations") = ProjectionSettings{}.max_iterations,
        py::arg("tolerance") = ProjectionSettings{}.tolerance,
        "The configuration nearest q at which every loop closes (damped Gauss-Newton): (q, dict(iterations, residual, converged)).");
  m.def("dense_contact_step",
        [](const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& tau, double h,
           int max_iterations, double tolerance, double baumgarte, double max_push_out) {
          ContactSettings settings;
          settings.max_iterations = max_iterations, settings.tolerance = tolerance;
          settings.baumgarte = baumgarte, settings.max_push_out = max_push_out;
          Data<double> data(model);
          const ContactStepResult r = dense_contact_step(model, data, vector_arg(q, model.nq, "q", "dense_contact_step"),
                                                         vector_arg(v, model.nv, "v", "dense_contact_step"),
                                                         vector_arg(tau, model.nv, "tau", "dense_contact_step"), h, settings);
          const py::ssize_t k = static_cast<py::ssize_t>(r.active.size());
          py::array_t<double> impulses({k, py::ssize_t(3)}), forces({k, py::ssize_t(3)});
          for (py::ssize_t a = 0; a < k; ++a) {
            const Vec3d f = r.world_force(static_cast<int>(a), model, h);
            for (py::ssize_t c = 0; c < 3; ++c) {
              impulses.mutable_at(a, c) = r.impulses[3 * a + c];
              forces.mutable_at(a, c) = f[static_cast<int>(c)];
            }
          }
          std::vector<double> gaps;
          for (const CandidateState& state : r.states) gaps.push_back(state.gap);
          py::dict out;
          out["q"] = r.q;
          out["v"] = r.v;
          out["active"] = r.active;
          out["impulses"] = impulses;
          out["forces"] = forces;
          out["gaps"] = gaps;
          py::list limits;  // joint limits in the problem: (dof, "lower" | "upper", distance, impulse)
          for (size_t l = 0; l < r.limits.size(); ++l)
            limits.append(py::make_tuple(r.limits[l].dof, r.limits[l].side > 0 ? "lower" : "upper", r.limits[l].distance,
                                         r.impulses[3 * k + static_cast<py::ssize_t>(l)]));
          out["limits"] = limits;
          out["iterations"] = r.iterations;
          out["converged"] = r.converged;
          return out;
        },
        py::arg("model"), py::arg("q"), py::arg("v"), py::arg("tau"), py::arg("h"), py::arg("max_iterations") = ContactSettings{}.max_iterations,
        py::arg("tolerance") = ContactSettings{}.tolerance, py::arg("baumgarte") = ContactSettings{}.baumgarte,
        py::arg("max_push_out") = ContactSettings{}.max_push_out,
        "One time step of length h with frictional contact against the ground (the dense reference, kernels/contact/contact_step.hpp): "
        "dict(q, v, active (candidate indices), impulses (k, 3: normal, two tangents, N s), forces (k, 3, world, N), "
        "gaps (every candidate at q), limits ((dof, side, distance, impulse) per joint limit in the problem), iterations, converged).");
  m.def("candidate_states", [](const Model& model, const Eigen::VectorXd& q) {
    Data<double> data(model);
    forward_kinematics(model, data, vector_arg(q, model.nq, "q", "candidate_states"));
    const std::vector<CandidateState> states = candidate_states(model, data);
    const py::ssize_t c = static_cast<py::ssize_t>(states.size());
    py::array_t<double> points({c, py::ssize_t(3)}), normals({c, py::ssize_t(3)}), gaps(c);
    for (py::ssize_t k = 0; k < c; ++k) {
      const CandidateState& s = states[static_cast<size_t>(k)];
      for (int r = 0; r < 3; ++r) points.mutable_at(k, r) = s.lowest_point[r], normals.mutable_at(k, r) = s.normal[r];
      gaps.mutable_at(k) = s.gap;
    }
    py::dict out;
    out["points"] = points, out["normals"] = normals, out["gaps"] = gaps;
    return out;
  }, py::arg("model"), py::arg("q"),
        "The contact candidates at q (the engine's order, Batch.contact_forces' second axis): dict(points (C, 3), the "
        "contact point on the candidate's geometry, world frame; normals (C, 3); gaps (C,), m, < 0: penetration).");
  m.def("delassus", [](const Model& model, const Eigen::VectorXd& q) {
    require_constraints(model, "batchdyn.delassus");
    Data<double> data(model);
    ConstrainedData<double> cdata(model);
    return Eigen::MatrixXd(delassus(model, data, cdata, vector_arg(q, model.nq, "q", "delassus")));
  }, py::arg("model"), py::arg("q"), "The Delassus matrix J M^-1 J^T (dense).");
}

}  // namespace batchdyn::python
