// batchdyn.Model and batchdyn.load: a robot, loaded from its files, and what it holds.
#include "bindings/common.hpp"

namespace batchdyn::python {
namespace {

// A placement as the 4x4 homogeneous matrix [R p; 0 1] (NumPy, row-major).
Eigen::Matrix4d homogeneous(const Transformd& X) {
  Eigen::Matrix4d H = Eigen::Matrix4d::Identity();
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) H(r, c) = X.rotation.m[r][c];
    H(r, 3) = X.translation[r];
  }
  return H;
}

// The model's constraints as resolved against its bodies: what a peer (Pinocchio's
// RigidConstraintModel: joint, placement in the joint's frame) needs to state the same rows.
py::list constraint_list(const Model& model) {
  py::list out;
  for (const Constraint& c : model.constraints) {
    py::dict d;
    d["name"] = c.name;
    d["type"] = constraint_type_name(c.type);
    d["link1"] = c.spec.link1;
    d["link2"] = c.spec.link2;
    d["body1"] = model.bodies[c.body1].name;
    d["body2"] = c.body2 == 0 ? std::string("world") : model.bodies[c.body2].name;
    d["joint1"] = model.bodies[c.body1].joint_name;
    d["joint2"] = c.body2 == 0 ? std::string() : model.bodies[c.body2].joint_name;
    d["placement1"] = homogeneous(c.placement1);
    d["placement2"] = homogeneous(c.placement2);
    d["axis"] = Eigen::Vector3d(c.axis.x, c.axis.y, c.axis.z);
    d["dim"] = c.dim;
    d["row"] = c.row;
    d["kp"] = c.kp;
    d["kd"] = c.kd;
    out.append(std::move(d));
  }
  return out;
}

}  // namespace

void bind_model(py::module_& m) {
  py::class_<Model>(m, "Model", "A robot: its tree, inertias, limits and constraints.")
      .def_readonly("name", &Model::name)
      .def_readonly("nq", &Model::nq)
      .def_readonly("nv", &Model::nv)
      .def_readonly("constraint_rows", &Model::constraint_rows)
      .def_property_readonly("num_bodies", [](const Model& model) { return model.num_bodies(); })
      .def_property_readonly("body_names", [](const Model& model) {
        std::vector<std::string> names;
        for (const Body& b : model.bodies) names.push_back(b.name);
        return names;
      })
      .def_property_readonly("joint_names", [](const Model& model) {
        std::vector<std::string> names;
        for (int i = 1; i < model.num_bodies(); ++i) names.push_back(model.bodies[i].joint_name);
        return names;
      })
      .def("body_index", &Model::body_index, py::arg("link_name"))
      .def("joint_index", &Model::joint_index, py::arg("joint_name"))
      .def_readonly("lower_position_limit", &Model::lower_position_limit)
      .def_readonly("upper_position_limit", &Model::upper_position_limit)
      .def_readonly("effort_limit", &Model::effort_limit)
      .def_readonly("damping", &Model::damping)
      .def_readonly("armature", &Model::armature)
      .def_readonly("inertia_warnings", &Model::inertia_warnings)
      .def_property_readonly("constraints", &constraint_list,
                             "The constraints (loops, welds, connects), resolved: a dict each with name, type, link1, link2, "
                             "body1, body2 (\"world\" for an external one), joint1, joint2 (the joints moving those bodies), "
                             "placement1 / placement2 (4x4: constraint frame k in body k's frame, which is its joint's frame; "
                             "the world's for body2 = world), axis (revolute), dim, row (first row in the stacked rows), kp, kd.")
      .def_property_readonly("contact_warning", [](const Model& m) { return contact_warning(m); },
                             "A free-floating model with no collision candidate over its ground (it will fall through): why "
                             "and the remedy; \"\" otherwise. load() also issues it as a UserWarning.")
      .def("info_json", [](const Model& model) { return model_info_json(model, find_singular_joints(model)); })
      .def("neutral", [](const Model& model) { return neutral_configuration<double>(model); })
      .def("__repr__", [](const Model& model) {
        return "<batchdyn.Model '" + model.name + "' nq=" + std::to_string(model.nq) + " nv=" + std::to_string(model.nv) +
               " constraint_rows=" + std::to_string(model.constraint_rows) + ">";
      });

  m.def("load", &load, py::arg("path"), py::arg("root") = "fixed", py::arg("constraints") = py::none(),
        py::arg("closure") = "duplicate", py::arg("balance_inertia") = false, py::arg("strict_inertia") = false,
        py::arg("contacts") = py::none(),
        "Loads a URDF or an SDF (root \"fixed\" or \"free\") or a scene JSON, plus an optional constraints JSON and contact "
        "JSON. An SDF's loops close as Pinocchio closes them (closure \"duplicate\": duplicate link + weld) or by cut joints (\"cut\").");
}

}  // namespace batchdyn::python
