// The Python Batch (batchdyn.BatchFloat32, batchdyn.BatchFloat64): one class template, bound per
// precision (python/bindings/batch_float32.cpp, batch_float64.cpp), by concern: its buffers and
// calls; actuation, parameters, observations and states; its loop constraints and Delassus
// matrices; its contact stage. Settings fields are properties from one table each
// (bind_setting_fields).
#pragma once

#include "bindings/common.hpp"

namespace batchdyn::python {

// The buffers (views), forward_dynamics and step.
template <class T>
void bind_batch_core(py::class_<PyBatch<T>>& cls) {
  using B = PyBatch<T>;
  const auto rows = [](B& b, int width) { return std::vector<py::ssize_t>{b.batch.num_envs(), width}; };
  cls.def(py::init<const Model&, int, int>(), py::arg("model"), py::arg("num_envs"), py::arg("threads") = 0)
      .def_property_readonly("num_envs", serialised<B>([](B& b) { return b.batch.num_envs(); }))
      .def_property("passive_forces", serialised<B>([](B& b) { return b.batch.passive_forces(); }),
                    serialised<B>([](B& b, bool on) { b.batch.set_passive_forces(on); }),
          "Whether step() and forward_dynamics() apply the model's joint damping -d qd and friction loss (default "
          "True, as simulators do); False: the rigid-body dynamics as Pinocchio defines it.")
      .def_property("friction_loss", serialised<B>([](B& b) { return b.batch.friction_loss(); }),
                    serialised<B>([](B& b, bool on) { b.batch.set_friction_loss(on); }),
          "Whether the passive forces include the joints' friction loss (MJCF frictionloss; default True): a dry "
          "friction of at most F, regularised below 0.01 rad/s (docs/mjcf.md).")
      .def_property_readonly("dtype", serialised<B>([](B&) { return py::dtype::of<T>(); }))
      .def_property("threads", serialised<B>([](B& b) { return b.batch.threads(); }), serialised<B>([](B& b, int t) { b.batch.set_threads(t); }),
          "Worker threads: 0 = all cores, at most max_threads.")
      .def_property_readonly_static("max_threads", [](const py::object&) { return Batch<T>::max_threads(); },
                                    "The largest thread count accepted: max(256, 8 x the cores).")
      .def_property_readonly("nq", serialised<B>([](B& b) { return b.batch.model().nq; }))
      .def_property_readonly("nv", serialised<B>([](B& b) { return b.batch.model().nv; }))
      // Views of the engine's buffers (N x nq, N x nv): writes go straight to the engine.
      .def_property_readonly("q", serialised<B>([rows](py::object self) { B& b = self.cast<B&>(); return view(b.batch.q(), rows(b, b.batch.model().nq), owner_or(b.user_q, self)); }))
      .def_property_readonly("v", serialised<B>([rows](py::object self) { B& b = self.cast<B&>(); return view(b.batch.v(), rows(b, b.batch.model().nv), owner_or(b.user_v, self)); }))
      .def_property_readonly("tau", serialised<B>([rows](py::object self) { B& b = self.cast<B&>(); return view(b.batch.tau(), rows(b, b.batch.model().nv), owner_or(b.user_tau, self)); }))
      .def_property_readonly("qdd", serialised<B>([rows](py::object self) {
        B& b = self.cast<B&>();
        return view(const_cast<T*>(b.batch.qdd()), rows(b, b.batch.model().nv), owner_or(b.user_qdd, self));
      }))
      .def_property_readonly("actuator_torques", serialised<B>([rows](py::object self) {
        B& b = self.cast<B&>();
        return view(const_cast<T*>(b.batch.actuator_torques()), rows(b, b.batch.model().nv), self);
      }), "(N, nv) view: the torque the actuation applied in the last substep (tau + PD, clamped to the effort limits "
          "when effort_clamp), before damping.")
      .def_property_readonly("target", serialised<B>([rows](py::object self) { B& b = self.cast<B&>(); return view(b.batch.target(), rows(b, b.batch.model().nv), owner_or(b.user_target, self)); }))
      .def_property_readonly("ctrl", serialised<B>([rows](py::object self) {
        B& b = self.cast<B&>();
        return view(b.batch.ctrl(), rows(b, b.batch.num_actuators()), owner_or(b.user_ctrl, self));
      }), "(N, nu) view: the controls of the model's actuators (Model.actuators, in order), read in control_mode 'ctrl'.")
      .def_property_readonly("nu", serialised<B>([](B& b) { return b.batch.num_actuators(); }), "The model's actuators: ctrl's columns.")
      .def_property_readonly("status", serialised<B>([](py::object self) {
        B& b = self.cast<B&>();
        auto* data = reinterpret_cast<std::uint8_t*>(const_cast<EnvStatus*>(b.batch.status().data()));
        return view(data, {b.batch.num_envs()}, self);
      }))
      .def_property_readonly("observations", serialised<B>([](B& b) {
        if (!b.observations) throw Error("observations: no frames chosen (call set_observed_frames first)");
        return b.observations;
      }), "The (N, k, 13) observations of the frames of the last set_observed_frames (an array the engine writes into).")
      .def("use_buffers",
           serialised<B>([](B& b, std::optional<py::array> q, std::optional<py::array> v, std::optional<py::array> tau, std::optional<py::array> qdd) {
             const Model& model = b.batch.model();
             const int n = b.batch.num_envs();
             // Unset ones keep the engine's current buffers.
             std::span<T> sq{b.batch.q(), static_cast<size_t>(n) * model.nq}, sv{b.batch.v(), static_cast<size_t>(n) * model.nv},
                 st{b.batch.tau(), sv.size()}, sd{const_cast<T*>(b.batch.qdd()), sv.size()};
             if (q) sq = user_buffer<T>(*q, n, model.nq, "q");
             if (v) sv = user_buffer<T>(*v, n, model.nv, "v");
             if (tau) st = user_buffer<T>(*tau, n, model.nv, "tau");
             if (qdd) sd = user_buffer<T>(*qdd, n, model.nv, "qdd");
             b.batch.use_buffers(sq, sv, st, sd);
             if (q) b.user_q = *q;
             if (v) b.user_v = *v;
             if (tau) b.user_tau = *tau;
             if (qdd) b.user_qdd = *qdd;
           }),
           py::arg("q") = py::none(), py::arg("v") = py::none(), py::arg("tau") = py::none(), py::arg("qdd") = py::none(),
           "Uses the given (N, nq) / (N, nv) C-contiguous arrays of the batch's dtype as its buffers (no copy).")
      .def("use_target_buffer", serialised<B>([](B& b, py::array target) {
        b.batch.use_target_buffer(user_buffer<T>(target, b.batch.num_envs(), b.batch.model().nv, "target"));
        b.user_target = target;
      }))
      .def("use_ctrl_buffer", serialised<B>([](B& b, py::array ctrl) {
        b.batch.use_ctrl_buffer(user_buffer<T>(ctrl, b.batch.num_envs(), b.batch.num_actuators(), "ctrl"));
        b.user_ctrl = ctrl;
      }), "Uses the given (N, nu) C-contiguous array of the batch's dtype as the controls (no copy).")
      .def("forward_dynamics", serialised<B>([](B& b) { py::gil_scoped_release release; b.batch.forward_dynamics(); }),
           "qdd = FD(q, v, applied torque) for every environment (constraints included when the model has any). The "
           "applied torque is the simulator's: tau (+ PD), clamped to effort_limits, minus damping; with "
           "effort_clamp = False and passive_forces = False it is tau, and qdd is Pinocchio's forward dynamics.")
      .def("step", serialised<B>([](B& b, double dt, int substeps) { py::gil_scoped_release release; b.batch.step(static_cast<T>(dt), substeps); }),
           py::arg("dt"), py::arg("substeps") = 1,
           "One control step of dt seconds in `substeps` semi-implicit Euler substeps (PD recomputed in each).")
      .def("time_steps_in_cpp", serialised<B>([](B& b, double dt, int substeps, int calls) {
        // `calls` steps in a C++ loop (no Python between them): the reference for the Python
        // call overhead (bench/python_step_overhead.py). Returns seconds.
        py::gil_scoped_release release;
        const auto start = std::chrono::steady_clock::now();
        for (int k = 0; k < calls; ++k) b.batch.step(static_cast<T>(dt), substeps);
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      }), py::arg("dt"), py::arg("substeps"), py::arg("calls"));
}

// Actuation, per-environment parameters, observations, resets and saved states, status.
template <class T>
void bind_batch_training(py::class_<PyBatch<T>>& cls) {
  using B = PyBatch<T>;
  cls.def_property("control_mode",
                    serialised<B>([](B& b) { return name_of(kControlModes, b.batch.control_mode()); }),
                    serialised<B>([](B& b, const std::string& mode) { b.batch.set_control_mode(parse_name(kControlModes, mode, "control_mode")); }),
          "'torque' (tau is the joint torque), 'pd' (tau is the feed-forward of PD on the targets) or 'ctrl' (tau is "
          "the feed-forward of the model's actuators driven by ctrl: MuJoCo's motor / position / velocity actuators).")
      .def_property("integrator",
                    serialised<B>([](B& b) { return name_of(kIntegrators, b.batch.integrator()); }),
                    serialised<B>([](B& b, const std::string& name) { b.batch.set_integrator(parse_name(kIntegrators, name, "integrator")); }),
          "step()'s integrator: \"euler\" (semi-implicit, the default: one evaluation of the dynamics per "
          "substep) or \"rk4\" (four per substep; keeps a passive, undamped model's energy bounded where Euler "
          "can blow up).")
      .def("set_pd_gains", serialised<B>([](B& b, const std::vector<double>& kp, const std::vector<double>& kd) { b.batch.set_pd_gains(kp, kd); }),
           py::arg("kp"), py::arg("kd"))
      .def_property("effort_limits", serialised<B>([](B& b) { return b.batch.effort_limits(); }),
                    serialised<B>([](B& b, const std::vector<double>& limits) { b.batch.set_effort_limits(limits); }))
      .def("remove_effort_limits", serialised<B>([](B& b) { b.batch.remove_effort_limits(); }))
      .def_property("effort_clamp", serialised<B>([](B& b) { return b.batch.effort_clamp(); }),
                    serialised<B>([](B& b, bool on) { b.batch.set_effort_clamp(on); }),
          "Whether step() and forward_dynamics() clamp the applied torque to effort_limits (default True, as "
          "simulators do); False, with passive_forces = False: the dynamics as Pinocchio defines it.")
      .def("set_body_inertia",
           serialised<B>([](B& b, const std::vector<int>& envs, int body, py::array_t<double, py::array::c_style | py::array::forcecast> mass,
              py::array_t<double, py::array::c_style | py::array::forcecast> com,
              py::array_t<double, py::array::c_style | py::array::forcecast> inertia) {
             b.batch.set_body_inertia(envs, body, flat(mass), flat(com), flat(inertia));
           }),
           py::arg("envs"), py::arg("body"), py::arg("mass"), py::arg("com"), py::arg("inertia"))
      .def("set_gravity", serialised<B>([](B& b, const std::vector<int>& envs, py::array_t<double, py::array::c_style | py::array::forcecast> g) {
        b.batch.set_gravity(envs, flat(g));
      }))
      .def("set_damping", serialised<B>([](B& b, const std::vector<int>& envs, py::array_t<double, py::array::c_style | py::array::forcecast> d) {
        b.batch.set_damping(envs, flat(d));
      }))
      .def("set_armature", serialised<B>([](B& b, const std::vector<int>& envs, py::array_t<double, py::array::c_style | py::array::forcecast> a) {
        b.batch.set_armature(envs, flat(a));
      }))
      .def("set_motor_strength", serialised<B>([](B& b, const std::vector<int>& envs, py::array_t<double, py::array::c_style | py::array::forcecast> s) {
        b.batch.set_motor_strength(envs, flat(s));
      }), py::arg("envs"), py::arg("strength"),
           "Per-environment motor strength (len(envs) x nv, finite, >= 0; 1 = as computed): the factor on the actuation "
           "stage's torque (tau + PD, or the actuators'), before the clamp to effort_limits.")
      .def("motor_strength", serialised<B>([](B& b, int env, int dof) { return b.batch.motor_strength(env, dof); }), py::arg("env"), py::arg("dof"))
      .def("reset_parameters", serialised<B>([](B& b) { b.batch.reset_parameters(); }))
      .def_property_readonly("per_env_parameters", serialised<B>([](B& b) { return b.batch.per_env_parameters(); }))
      .def("body_mass", serialised<B>([](B& b, int env, int body) { return b.batch.body_inertia(env, body).mass; }))
      .def("set_observed_frames", serialised<B>([](B& b, const std::vector<std::string>& names) {
        b.batch.set_observed_frames(names);
        b.observations = py::object();
        if (names.empty()) return;
        // A new array for each frame set, so an earlier `observations` stays a valid array.
        const py::ssize_t k = static_cast<py::ssize_t>(names.size());
        py::array_t<T> out({static_cast<py::ssize_t>(b.batch.num_envs()), k, static_cast<py::ssize_t>(kFrameObservationSize)});
        std::fill_n(out.mutable_data(), out.size(), T(0));
        b.batch.use_observation_buffer(std::span<T>(out.mutable_data(), static_cast<size_t>(out.size())));
        b.observations = std::move(out);
      }), py::arg("names"))
      .def("set_observed_contacts", serialised<B>([](B& b, const std::vector<std::string>& names) {
        const ContactModel& cm = b.batch.model().contacts;
        std::vector<std::vector<std::pair<int, double>>> observed;
        for (const std::string& name : names) {
          const int geometry = find_collision_geometry(cm, name);
          if (geometry < 0) {
            std::string known;
            for (const CollisionGeometry& g : cm.geometries) known += (known.empty() ? "" : ", ") + g.name;
            throw Error("set_observed_contacts: the model has no collision geometry named '" + name + "' (it has: " +
                        (known.empty() ? "none" : known) + ")");
          }
          std::vector<std::pair<int, double>> list;
          for (size_t c = 0; c < cm.candidates.size(); ++c) {
            if (cm.candidates[c].geometry == geometry) list.emplace_back(static_cast<int>(c), 1.0);
            else if (cm.candidates[c].geometry2 == geometry) list.emplace_back(static_cast<int>(c), -1.0);
          }
          observed.push_back(std::move(list));
        }
        b.observed_contacts = std::move(observed);
        b.contact_observations = py::object();
        if (names.empty()) return;
        // A new array for each geometry set, so an earlier `contact_observations` stays a valid array.
        py::array_t<T> out({static_cast<py::ssize_t>(b.batch.num_envs()), static_cast<py::ssize_t>(names.size()), py::ssize_t{4}});
        std::fill_n(out.mutable_data(), out.size(), T(0));
        b.contact_observations = std::move(out);
      }), py::arg("names"),
           "Chooses collision geometries (model.info()['contacts']['geometries'] names, e.g. the feet) whose contact "
           "observe() reports in contact_observations.")
      .def_property_readonly("contact_observations", serialised<B>([](B& b) {
        if (!b.contact_observations) throw Error("contact_observations: no geometries chosen (call set_observed_contacts first)");
        return b.contact_observations;
      }), "The (N, g, 4) contact observations of the geometries of the last set_observed_contacts, filled by observe(): "
          "1 when any of the geometry's candidates is in contact (else 0), then the world-frame force on it (N), summed.")
      .def("observe", serialised<B>([](B& b) {
        if (b.contact_observations && b.batch.observed_frames().empty()) {
          observe_contacts(b);
          return b.contact_observations;
        }
        {
          py::gil_scoped_release release;
          b.batch.observe();
        }
        if (b.contact_observations) observe_contacts(b);
        return b.observations;
      }), "Fills and returns the (N, k, 13) observations of the set_observed_frames: world position, quaternion xyzw, linear "
          "and angular velocity. Also fills contact_observations when set_observed_contacts chose geometries (and returns "
          "them when no frames are chosen).")
      .def("sense", serialised<B>([](py::object self) {
        B& b = self.cast<B&>();
        {
          py::gil_scoped_release release;
          b.batch.sense();
        }
        return view(const_cast<T*>(b.batch.sensordata()), {b.batch.num_envs(), b.batch.sensordata_size()}, self);
      }), "Fills and returns the (N, sensordata_size) readings of the robot file's sensors (Model.sensors) at the current q, v "
          "and the last qdd (after step(): the last substep's, contact included), a view.")
      .def_property_readonly("sensordata", serialised<B>([](py::object self) {
        B& b = self.cast<B&>();
        return view(const_cast<T*>(b.batch.sensordata()), {b.batch.num_envs(), b.batch.sensordata_size()}, self);
      }), "(N, sensordata_size) sensor readings of the last sense(), a view.")
      .def("reset",
           serialised<B>([](B& b, const py::object& envs, std::optional<std::uint64_t> seed, std::optional<double> noise,
              double velocity_noise, const py::object& seeds) {
             const std::vector<int> list = env_list(envs, b.batch.num_envs());
             if (seed && !seeds.is_none()) throw Error("reset: give seed (one for the call) or seeds (one per environment), not both");
             if (!seeds.is_none()) b.batch.reset(list, std::span<const std::uint64_t>(seed_list(seeds)), noise, velocity_noise);
             else if (seed) b.batch.reset(list, *seed, noise, velocity_noise);
             else if (noise || velocity_noise != 0) throw Error("reset: noise needs a seed");
             else b.batch.reset(list);
           }),
           py::arg("envs") = py::none(), py::arg("seed") = py::none(), py::arg("noise") = py::none(),
           py::arg("velocity_noise") = 0.0, py::arg("seeds") = py::none(),
           "Without seed: the reference configuration. With seed: q uniform within the joint limits, or "
           "reference ⊕ uniform(-noise, noise) when noise is given; reproducible per (seed, env). With seeds "
           "(one unsigned 64-bit seed per listed environment, each listed once): the same draws, each depending on "
           "its own seed alone (environments given the same seed start alike).")
      .def("reset_to", serialised<B>([](B& b, const std::vector<int>& envs, py::array_t<T, py::array::c_style | py::array::forcecast> q,
                          py::array_t<T, py::array::c_style | py::array::forcecast> v) {
        b.batch.reset(envs, std::span<const T>(q.data(), static_cast<size_t>(q.size())), std::span<const T>(v.data(), static_cast<size_t>(v.size())));
      }))
      .def_property_readonly("state_size", serialised<B>([](B& b) { return b.batch.state_size(); }),
                             "Values per environment of get_state(): nq + nv + the solvers' warm starts.")
      .def("get_state", serialised<B>([](B& b, const py::object& envs) {
        const std::vector<int> list = env_list(envs, b.batch.num_envs());
        py::array_t<T> rows({static_cast<py::ssize_t>(list.size()), static_cast<py::ssize_t>(b.batch.state_size())});
        b.batch.get_state(list, std::span<T>(rows.mutable_data(), static_cast<size_t>(rows.size())));
        return rows;
      }), py::arg("envs") = py::none(),
           "A (len(envs), state_size) copy of everything step() reads of the listed environments (all by default) besides "
           "tau and the PD targets: q, v and the contact, joint-limit and loop solvers' warm starts. set_state(rows, envs) "
           "restores them, and the environments then continue bitwise as they did (MuJoCo's mj_getState / mj_setState).")
      .def("set_state", serialised<B>([](B& b, py::array_t<T, py::array::c_style | py::array::forcecast> rows, const py::object& envs) {
        const std::vector<int> list = env_list(envs, b.batch.num_envs());
        b.batch.set_state(list, std::span<const T>(rows.data(), static_cast<size_t>(rows.size())));
      }), py::arg("rows"), py::arg("envs") = py::none(),
           "Restores the listed environments (all by default) from rows of get_state(); clears tau, qdd and the contact "
           "outputs as reset does.")
      .def("set_reference_configuration", serialised<B>([](B& b, py::array_t<T, py::array::c_style | py::array::forcecast> q) {
        b.batch.set_reference_configuration(std::span<const T>(q.data(), static_cast<size_t>(q.size())));
      }))
      .def_property_readonly("failed_count", serialised<B>([](B& b) { return b.batch.failed_count(); }))
      .def("status_message", serialised<B>([](B& b, int env) { return b.batch.status_message(env); }));
}

// Loop constraints: the solver, its settings and reports, the loop stabilisation, the Delassus
// matrices.
template <class T>
void bind_batch_loops(py::class_<PyBatch<T>>& cls) {
  using B = PyBatch<T>;
  cls.def_property("use_constraints", serialised<B>([](B& b) { return b.batch.constrained(); }),
                    serialised<B>([](B& b, bool on) { b.batch.set_use_constraints(on); }))
      .def_property("constraint_solver", serialised<B>([](B& b) { return std::string(algorithm_name(b.batch.constraint_solver())); }),
                    serialised<B>([](B& b, const std::string& name) {
                      b.batch.set_constraint_solver(parse_algorithm(name, "constraint_solver", is_constraint_solver));
                    }), "Constrained forward dynamics solver: \"lcaba\" (recursive, on the lanes; default), \"proxbbo\" "
                       "(recursive, accurate at stiff mu) or \"constrained\" (dense, the oracle; \"dense\" is accepted too).")
      .def_property_readonly("constraint_forces", serialised<B>([](py::object self) {
        B& b = self.cast<B&>();
        return view(const_cast<T*>(b.batch.constraint_forces()), {b.batch.num_envs(), b.batch.constraint_rows()}, self);
      }), "(N, m) constraint multipliers of the last call (M qdd + b = tau + J^T lambda), a view.")
      .def_property_readonly("constraint_iterations", serialised<B>([](B& b) { return int_array(b.batch.constraint_iterations()); }),
                             "(N,) int32: the constraint solver's iterations per environment in the last call (a copy).")
      .def_property_readonly("constraint_residual", serialised<B>([](B& b) {
        return py::array_t<T>(static_cast<py::ssize_t>(b.batch.constraint_residual().size()), b.batch.constraint_residual().data());
      }))
      .def_property_readonly("constraint_converged", serialised<B>([](B& b) {
        const std::vector<std::uint8_t>& c = b.batch.constraint_converged();
        py::array_t<bool> out(static_cast<py::ssize_t>(c.size()));
        std::copy(c.begin(), c.end(), out.mutable_data());
        return out;
      }), "(N,) bool: whether the stopping test, not the iteration cap, ended each environment's last solve (a copy).")
      // Loop stabilisation in step() (batch/loop_stabilisation.hpp)
      .def_property_readonly("loop_drift", serialised<B>([](B& b) {
        return py::array_t<T>(static_cast<py::ssize_t>(b.batch.loop_drift().size()), b.batch.loop_drift().data());
      }), "(N,) the largest loop position error (m, rad) at the start of the last step (a copy; 0 when not measured).");
  cls.def("delassus", serialised<B>([](py::object self) {
        B& b = self.cast<B&>();
        {
          py::gil_scoped_release release;
          b.batch.delassus();
        }
        const py::ssize_t rows = b.batch.constraint_rows();
        return view(const_cast<T*>(b.batch.delassus_matrices()), {b.batch.num_envs(), rows, rows}, self);
      }), "The (N, m, m) Delassus matrices J M^-1 J^T at every q (PV-OSIMr).");
  bind_setting_fields<B>(cls, &Batch<T>::constraint_settings, &Batch<T>::set_constraint_settings,
      setting("constraint_mu", &ProximalSettings::mu, "The augmented-Lagrangian penalty mu of the constraint solver."),
      setting("constraint_max_iterations", &ProximalSettings::max_iterations, "The constraint solver's iteration cap (1 to 1000000)."),
      setting("constraint_tolerance", &ProximalSettings::tolerance, "The constraint solver's relative tolerance (finite, >= 0; see ProximalSettings)."));
  bind_setting_fields<B>(cls, &Batch<T>::loop_stabilisation, &Batch<T>::set_loop_stabilisation,
      setting("loop_time_constant", &LoopStabilisationSettings::time_constant, "Time constant T (s) of the stabilisation step() gives loop constraints whose file gives no gains, T at least "
          "2 h (default 0.02; 0: off): with Euler and loop_velocity_level, J v+ = -e/T; otherwise Baumgarte gains "
          "kd = 2/T, kp = 1/(T zeta)^2."),
      setting("loop_damping_ratio", &LoopStabilisationSettings::damping_ratio, "Damping ratio zeta of the Baumgarte gains (default 1: critically damped; not used by velocity-level rows)."),
      setting("loop_velocity_level", &LoopStabilisationSettings::velocity_level, "True (default): with the Euler integrator, step() holds those loops at the velocity level, J v+ = -e/T "
          "without the drift Jdot v (stable through a closed chain's singular poses); False: acceleration-level "
          "Baumgarte rows (as with RK4)."),
      setting("loop_drift_tolerance", &LoopStabilisationSettings::drift_tolerance, "Largest loop position error (m, rad) at a step's start before status 6 (loop drift); inf: not checked "
          "(default 0.01)."),
      setting("loop_plateau_tolerance", &LoopStabilisationSettings::plateau_tolerance, "step()'s loop solves (LCABA, proxBBO) also stop where the rows' violation sits on a plateau within this "
          "of its terms (default 1e-9: near singular poses the rows pin qdd no better; 0: solve to "
          "constraint_tolerance, as forward_dynamics() does)."));
}

// The contact stage: its switch and settings, the ground and terrain, its results.
template <class T>
void bind_batch_contact(py::class_<PyBatch<T>>& cls) {
  using B = PyBatch<T>;
  cls// Contact (batch/contact_solving.hpp): the model's candidates against the ground, in step()
      .def_property("contacts", serialised<B>([](B& b) { return b.batch.contacts(); }),
                    serialised<B>([](B& b, bool on) { b.batch.set_contacts(on); }),
          "Whether step() solves frictional contact with the ground and contact pairs (default: on for a model "
          "with collision geometry and a ground or pairs, and no loop constraints; can be turned on with them, "
          "whose loops are then bilateral rows of the contact problem).")
      .def_property_readonly("contact_candidates", serialised<B>([](B& b) { return b.batch.contact_candidates(); }),
                             "C: the model's contact candidates (model.info()['contacts'] lists them).")
      .def_property("contact_solver", serialised<B>([](B& b) { return std::string(contact_solver_name(b.batch.contact_settings().solver)); }),
                    serialised<B>([](B& b, const std::string& name) {
                      ContactSettings s = b.batch.contact_settings();
                      s.solver = parse_name(kContactSolvers, name, "Batch.contact_solver");
                      b.batch.set_contact_settings(s);
                    }), "The contact problem's solver: 'admm' (proximal ADMM, the default) or 'pgs' (projected Gauss-Seidel, "
                        "the baseline most engines use), with the same cap, tolerance and stopping test.")
      .def_property("admm_linear_solve",
                    serialised<B>([](B& b) { return std::string(admm_linear_solve_name(b.batch.contact_settings().admm_linear_solve)); }),
                    serialised<B>([](B& b, const std::string& name) {
                      ContactSettings s = b.batch.contact_settings();
                      s.admm_linear_solve = parse_name(kAdmmLinearSolves, name, "Batch.admm_linear_solve");
                      b.batch.set_contact_settings(s);
                    }), "ADMM's linear solve with G + rho I: 'cholesky' (a factor of the formed Delassus matrix, the default) or "
                        "'pv-soft' (on the tree, O(n + m) per solve; ground contacts and joint limits only: refused on a model "
                        "with contact pairs or loop constraints).")
      .def("set_ground", serialised<B>([](B& b, const std::vector<int>& envs, double height, const std::array<double, 3>& normal) {
             b.batch.set_ground(envs, height, Vec3d{normal[0], normal[1], normal[2]});
           }), py::arg("envs"), py::arg("height"), py::arg("normal") = std::array<double, 3>{0.0, 0.0, 1.0},
           "The ground plane n . x = height of the listed environments (n normalised).")
      .def("set_friction", serialised<B>([](B& b, const std::vector<int>& envs, double mu) { b.batch.set_friction(envs, mu); }),
           py::arg("envs"), py::arg("mu"), "One friction coefficient (>= 0) for every candidate of the listed environments.")
      .def("reserve_contacts", serialised<B>([](B& b, int contacts) { b.batch.reserve_contacts(contacts); }), py::arg("contacts"),
           "Room for that many contacts in a lane block's contact problem, made now in every thread's workspace: steps that "
           "meet no more do not allocate (contact_candidates: every case). Without it the room grows when a step needs more.")
      .def("friction", serialised<B>([](B& b, int env, int candidate) { return b.batch.friction(env, candidate); }),
           py::arg("env"), py::arg("candidate"), "Environment env's friction coefficient at a contact candidate.")
      .def("set_terrain", serialised<B>([](B& b, py::array_t<double, py::array::c_style | py::array::forcecast> heights, double spacing,
                                           const std::array<double, 2>& origin) {
             if (heights.ndim() != 2) throw Error("set_terrain: heights must be a 2-d array (ny, nx): one row per y");
             HeightField field{static_cast<int>(heights.shape(1)), static_cast<int>(heights.shape(0)), origin[0], origin[1], spacing,
                               std::vector<double>(heights.data(), heights.data() + heights.size())};
             b.batch.set_terrain(field);
           }), py::arg("heights"), py::arg("spacing"), py::arg("origin") = std::array<double, 2>{0.0, 0.0},
           "A height field z = h(x, y) shared by every environment, replacing the ground plane: heights (ny, nx), "
           "heights[j, i] at (origin[0] + i spacing, origin[1] + j spacing), bilinear between, flat beyond the grid.")
      .def("set_terrain_heights", serialised<B>([](B& b, const std::vector<int>& envs,
                                                   py::array_t<double, py::array::c_style | py::array::forcecast> heights) {
             const HeightField& t = b.batch.terrain();
             if (!t.present()) throw Error("set_terrain_heights: no terrain (call set_terrain first)");
             const auto points = static_cast<py::ssize_t>(t.nx) * t.ny;
             const bool one = heights.ndim() == 2, each = heights.ndim() == 3 && heights.shape(0) == static_cast<py::ssize_t>(envs.size());
             if (!(one || each) || heights.shape(heights.ndim() - 2) != t.ny || heights.shape(heights.ndim() - 1) != t.nx)
               throw Error("set_terrain_heights: heights must be (ny, nx) = (" + std::to_string(t.ny) + ", " + std::to_string(t.nx) +
                           ") or (len(envs), ny, nx)");
             for (size_t k = 0; k < envs.size(); ++k)
               b.batch.set_terrain_heights(std::span<const int>(&envs[k], 1),
                                           std::span<const double>(heights.data() + (each ? static_cast<py::ssize_t>(k) * points : 0),
                                                                   static_cast<size_t>(points)));
           }), py::arg("envs"), py::arg("heights"),
           "The listed environments' own heights on the terrain's grid: (ny, nx) for all of them, or (len(envs), ny, nx).")
      .def("clear_terrain", serialised<B>([](B& b) { b.batch.clear_terrain(); }), "Back to the ground plane.")
      .def_property_readonly("terrain_shape", serialised<B>([](B& b) {
        const HeightField& t = b.batch.terrain();
        return py::make_tuple(t.ny, t.nx);
      }), "(ny, nx) of the terrain's grid; (0, 0) without a terrain.")
      .def_property_readonly("contact_forces", serialised<B>([](py::object self) {
        B& b = self.cast<B&>();
        return readonly_view(const_cast<T*>(b.batch.contact_forces()), {b.batch.num_envs(), b.batch.contact_candidates(), 3}, self);
      }), "(N, C, 3) world-frame contact forces of the last step (N), a read-only view.")
      .def_property_readonly("contact_gaps", serialised<B>([](py::object self) {
        B& b = self.cast<B&>();
        return readonly_view(const_cast<T*>(b.batch.contact_gaps()), {b.batch.num_envs(), b.batch.contact_candidates()}, self);
      }), "(N, C) gaps to the ground or the pair's other geometry at the last substep's start (m; < 0: penetration; "
          "+inf before the first step and after a reset), a read-only view.")
      .def_property_readonly("contact_impulses", serialised<B>([](py::object self) {
        B& b = self.cast<B&>();
        return readonly_view(const_cast<T*>(b.batch.contact_impulses()), {b.batch.num_envs(), b.batch.contact_candidates(), 3}, self);
      }), "(N, C, 3) contact impulses of the last substep (N s): normal, tangent 1, tangent 2 (the next step's warm start; set_state sets it), a read-only view.")
      .def_property_readonly("contact_flags", serialised<B>([](py::object self) {
        B& b = self.cast<B&>();
        // The engine's bytes are 0 or 1: NumPy's bool, viewed as they are.
        return readonly_view(reinterpret_cast<bool*>(const_cast<std::uint8_t*>(b.batch.contact_flags())), {b.batch.num_envs(), b.batch.contact_candidates()}, self);
      }), "(N, C) bool: True where a candidate was in the last substep's contact problem (within its margin, or closing that gap "
          "within the substep), a read-only view.")
      .def_property_readonly("contact_iterations", serialised<B>([](B& b) { return int_array(b.batch.contact_iterations()); }),
                             "(N,) int32: the contact solver's (ADMM) iterations per environment in the last step's last substep (a copy).")
      .def_property_readonly("contact_residual", serialised<B>([](B& b) {
        return py::array_t<T>(static_cast<py::ssize_t>(b.batch.contact_residual().size()), b.batch.contact_residual().data());
      }));
  bind_setting_fields<B>(cls, &Batch<T>::contact_settings, &Batch<T>::set_contact_settings,
      setting("admm_polish", &ContactSettings::polish, "Whether ADMM on the formed Delassus matrix polishes its iterate (default True): after 10, 20, 40, ... "
          "iterations it solves the rows it finds acting exactly (active-set passes), and a solution is taken "
          "only where it meets the tolerance. Turns caps on nearly redundant joint limits into exact solves."),
      setting("contact_max_iterations", &ContactSettings::max_iterations, "The contact solver's iteration cap per substep (1 to 1000000; default 500)."),
      setting("contact_tolerance", &ContactSettings::tolerance, "The contact solver's relative tolerance (finite, >= 0; default 1e-6 in float64, 1e-5 in float32)."),
      setting("contact_baumgarte", &ContactSettings::baumgarte, "The fraction of a penetration (or of a joint's overshoot past its limit) removed per substep, in [0, 1] "
          "(default 0.2)."),
      setting("contact_max_push_out", &ContactSettings::max_push_out, "The largest separating velocity (m/s) the push-out asks for (default 0.5): a state reset into the ground "
          "is pushed out over several steps instead of launched."),
      setting("contact_limit_margin", &ContactSettings::limit_margin, "How near (rad or m) a joint limit must be to enter the problem (default 0.01)."),
      setting("contact_max_penetration", &ContactSettings::max_penetration, "A contact deeper than this (m, default 0.02) at a substep's start marks its environment with status 7 "
          "(a report: it is stepped); float('inf') turns the check off."),
      setting("joint_limits", &ContactSettings::joint_limits, "Whether step() keeps the 1-dof joints within their position limits (unilateral rows of the "
          "contact problem, default True; with loop constraints and no contacts, on the mechanism with its loops "
          "closed). The reference "
          "functions never apply them."));
}

template <class T>
void bind_batch(py::module_& m, const char* name) {
  py::class_<PyBatch<T>> cls(m, name, "N environments of one Model stepped together (see batchdyn.Batch).");
  bind_batch_core(cls);
  bind_batch_training(cls);
  bind_batch_loops(cls);
  bind_batch_contact(cls);
}

}  // namespace batchdyn::python
