// batchdyn.Model and batchdyn.load: a robot, loaded from its files, and what it holds.
#include "bindings/common.hpp"

namespace batchdyn::python {
namespace {

Eigen::VectorXd as_vector(const std::vector<double>& x) {
  return Eigen::Map<const Eigen::VectorXd>(x.data(), static_cast<Eigen::Index>(x.size()));
}
std::vector<double> std_vector(const Eigen::VectorXd& x) { return {x.data(), x.data() + x.size()}; }

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
      .def_readonly("friction_loss", &Model::friction_loss)
      .def_readonly("spring_stiffness", &Model::spring_stiffness, "Per coordinate of v: a joint spring's stiffness (0: none).")
      .def_readonly("spring_reference", &Model::spring_reference, "Per coordinate of v: a joint spring's rest position (rad, m).")
      .def_readonly("timestep", &Model::timestep, "The robot file's time step (s; MJCF <option timestep>), 0 when it gives none.")
      .def_readonly("load_notes", &Model::load_notes, "What loading left out because it does not change the dynamics.")
      .def_property_readonly("reference_configuration", [](const Model& m) { return m.reference_configuration; },
                             "Where the engine starts and resets (MJCF: MuJoCo's qpos0); [] for the neutral configuration.")
      .def_property_readonly("keyframes", [](const Model& model) {
        py::dict out;
        for (const Keyframe& k : model.keyframes) {
          py::dict d;
          d["time"] = k.time, d["q"] = as_vector(k.q), d["v"] = as_vector(k.v), d["ctrl"] = as_vector(k.ctrl);
          out[py::str(k.name)] = std::move(d);
        }
        return out;
      }, "The robot file's named states (MJCF <keyframe>): name -> {time, q, v, ctrl}, in batchdyn's coordinates.")
      .def_property_readonly("actuators", [](const Model& model) {
        py::list out;
        for (const Actuator& a : model.actuators) {
          py::dict d;
          d["name"] = a.name, d["kind"] = actuator_kind_name(a.kind), d["joint"] = a.joint, d["dof"] = a.dof, d["gear"] = a.gear;
          d["gain"] = a.gain, d["bias"] = py::make_tuple(a.bias[0], a.bias[1], a.bias[2]);
          d["ctrl_range"] = py::make_tuple(a.ctrl_lower, a.ctrl_upper), d["force_range"] = py::make_tuple(a.force_lower, a.force_upper);
          out.append(std::move(d));
        }
        return out;
      }, "The robot file's actuators (MJCF <actuator>), in ctrl order: a dict each with name, kind (motor, position, velocity, "
         "general), joint, dof, gear, gain, bias (force = gain ctrl + bias . (1, gear q, gear qd)), ctrl_range, force_range.")
      .def_property_readonly("sensors", [](const Model& model) {
        py::list out;
        for (const Sensor& s : model.sensors) {
          py::dict d;
          d["name"] = s.name, d["kind"] = sensor_kind_name(s.kind), d["object"] = s.object, d["address"] = s.address;
          d["size"] = sensor_dimension(s.kind), d["cutoff"] = s.cutoff;
          out.append(std::move(d));
        }
        return out;
      }, "The robot file's sensors that Batch.sense() computes (MJCF <sensor>), in sensordata order: a dict each with name, "
         "kind (jointpos, jointvel, framepos, framequat, framelinvel, frameangvel, gyro, velocimeter, accelerometer, jointactuatorfrc), object "
         "(the joint or frame it reads), address (its first column of sensordata), size, cutoff.")
      .def("body_inertia", [](const Model& model, int body) {
        if (body < 0 || body >= model.num_bodies())
          throw Error("body_inertia: body " + std::to_string(body) + " out of range [0, " + std::to_string(model.num_bodies()) + ")");
        const RigidInertiad& I = model.bodies[static_cast<size_t>(body)].inertia;
        py::array_t<double> com(3), rotational({3, 3});
        for (int r = 0; r < 3; ++r) {
          com.mutable_at(r) = I.com[r];
          for (int c = 0; c < 3; ++c) rotational.mutable_at(r, c) = I.inertia_com.m[r][c];
        }
        return py::make_tuple(I.mass, com, rotational);
      }, py::arg("body"), "Body `body`'s (mass, centre of mass (3,), rotational inertia about it (3, 3)) in its frame: what "
                          "Batch.set_body_inertia takes.")
      .def_property_readonly("motor_torque_limits", [](const Model& model) { return motor_torque_limits(model.effort_limit, model.actuators); },
         "Per dof (nv): the torque a PD controller standing in for the file's motors may exert: the effort limit, tightened to "
         "each motor's largest |gear force| under its control and force ranges (infinite where nothing limits it).")
      .def_property_readonly("site_names", [](const Model& model) {
        std::vector<std::string> names;
        for (const Frame& f : model.frames)
          if (f.kind == FrameKind::Site) names.push_back(f.name);
        return names;
      })
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

  m.def("mjcf_supported", &mjcf_supported, "Whether this build reads MJCF (it was compiled with MuJoCo's headers).");
  m.def("mujoco_header_version", &mujoco_header_version, "The MuJoCo version this build reads MJCF with (\"\" without).");
  m.def("_set_mujoco_library", &set_mujoco_library, py::arg("path"));
  m.def("mujoco_library_path", &mujoco_library_path, "The libmujoco that MJCF loading opened (\"\" before the first load).");
  m.def("q_from_mujoco", [](const Model& model, const Eigen::VectorXd& qpos) { return as_vector(q_from_mujoco(model, std_vector(qpos))); },
        py::arg("model"), py::arg("qpos"), "A MuJoCo qpos as batchdyn's q (quaternions w x y z -> x y z w).");
  m.def("q_to_mujoco", [](const Model& model, const Eigen::VectorXd& q) { return as_vector(q_to_mujoco(model, std_vector(q))); },
        py::arg("model"), py::arg("q"), "batchdyn's q as a MuJoCo qpos.");
  m.def("v_from_mujoco", [](const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& qvel) {
          return as_vector(v_from_mujoco(model, std_vector(q), std_vector(qvel)));
        }, py::arg("model"), py::arg("q"), py::arg("qvel"),
        "A MuJoCo qvel at q (batchdyn's) as batchdyn's v: a free joint's linear velocity from the world frame into the base frame.");
  m.def("v_to_mujoco", [](const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v) {
          return as_vector(v_to_mujoco(model, std_vector(q), std_vector(v)));
        }, py::arg("model"), py::arg("q"), py::arg("v"), "batchdyn's v at q as a MuJoCo qvel.");
  m.def("a_to_mujoco", [](const Model& model, const Eigen::VectorXd& q, const Eigen::VectorXd& v, const Eigen::VectorXd& qdd) {
          return as_vector(a_to_mujoco(model, std_vector(q), std_vector(v), std_vector(qdd)));
        }, py::arg("model"), py::arg("q"), py::arg("v"), py::arg("qdd"),
        "batchdyn's qdd at (q, v) as MuJoCo's qacc (a free joint's linear part: the base origin's world acceleration).");
  m.def("load", &load, py::arg("path"), py::arg("root") = "fixed", py::arg("constraints") = py::none(),
        py::arg("closure") = "duplicate", py::arg("balance_inertia") = false, py::arg("strict_inertia") = false,
        py::arg("contacts") = py::none(), py::arg("self_collision") = false,
        "Loads an MJCF (it sets its own root), a URDF or an SDF (root \"fixed\" or \"free\") or a scene JSON, plus an optional constraints JSON and contact "
        "JSON. An SDF's loops close as Pinocchio closes them (closure \"duplicate\": duplicate link + weld) or by cut joints (\"cut\").");
}

}  // namespace batchdyn::python
