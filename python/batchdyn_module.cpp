// The Python module `batchdyn` (compiled part: batchdyn._batchdyn). NumPy arrays returned by a
// Batch are views of the memory the engine reads and writes (no copies; torch.from_numpy shares
// them), each kept alive by the object that owns that memory: the Batch for its own buffers, the
// user's array after use_buffers, the observation array of the current set_observed_frames. A
// view taken before use_buffers or set_observed_frames stays valid (it no longer follows the
// engine). The engine runs with the GIL released; calls on one Batch from several Python threads
// run one at a time (each takes the Batch's lock). batchdyn.Error is a ValueError.
#include <pybind11/eigen.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <string>
#include <vector>

#include "batchdyn.hpp"

namespace py = pybind11;
using namespace batchdyn;

namespace {

RootJoint root_of(const std::string& root) {
  if (root == "fixed") return RootJoint::Fixed;
  if (root == "free") return RootJoint::FreeFlyer;
  throw Error("load: root must be \"fixed\" or \"free\", got \"" + root + "\"");
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A URDF, an SDF or a scene (*.json), with optional constraints / lock_joints / armature / damping JSON.
Model load(const std::string& path, const std::string& root, const std::optional<std::string>& constraints,
           const std::string& closure, bool balance_inertia, bool strict_inertia, const std::optional<std::string>& contacts) {
  LoadOptions options;
  options.balance_inertia = balance_inertia, options.strict_inertia = strict_inertia;
  Model model = ends_with(path, ".json") ? load_scene_file(path, options)
                                         : load_robot_file(path, root_of(root), parse_loop_closure(closure), options);
  if (constraints) add_constraints_from_json_file(model, *constraints);
  if (contacts) add_contacts_from_json_file(model, *contacts);
  return model;
}

Eigen::VectorXd vector_arg(const Eigen::VectorXd& x, int size, const char* name, const char* what) {
  if (x.size() != size)
    throw Error(std::string(what) + ": '" + name + "' has " + std::to_string(x.size()) + " values, expected " + std::to_string(size));
  return x;
}

// A NumPy view of `count` rows of `shape` values at `data`, owned by `owner` (the Batch).
template <class T>
py::array_t<T> view(T* data, std::vector<py::ssize_t> shape, py::handle owner) {
  return py::array_t<T>(shape, data, owner);
}

// A NumPy int32 array copy of per-environment counts (iterations).
py::array_t<std::int32_t> int_array(const std::vector<int>& values) {
  py::array_t<std::int32_t> out(static_cast<py::ssize_t>(values.size()));
  std::copy(values.begin(), values.end(), out.mutable_data());
  return out;
}

// A user array for use_buffers: dtype, shape (N, width) and C-contiguity checked.
template <class T>
std::span<T> user_buffer(py::array& a, int rows, int width, const char* name) {
  const std::string what = std::string("use_buffers: '") + name + "'";
  if (!py::isinstance<py::array_t<T>>(a) || a.dtype().kind() != 'f' || a.itemsize() != static_cast<py::ssize_t>(sizeof(T)))
    throw Error(what + " must have dtype " + (sizeof(T) == 4 ? "float32" : "float64") + ", got " + std::string(py::str(a.dtype())));
  if (a.ndim() != 2 || a.shape(0) != rows || a.shape(1) != width)
    throw Error(what + " must have shape (" + std::to_string(rows) + ", " + std::to_string(width) + "), got " + std::string(py::str(py::tuple(py::cast(std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()))))));
  if (!(a.flags() & py::array::c_style)) throw Error(what + " must be C-contiguous (np.ascontiguousarray)");
  if (!a.writeable()) throw Error(what + " must be writeable");
  return {static_cast<T*>(a.mutable_data()), static_cast<size_t>(rows) * static_cast<size_t>(width)};
}

// The environments a call lists: None = all n; a NumPy integer array is read in one pass (a
// per-step reset of the environments that ended should not convert element by element).
std::vector<int> env_list(const py::object& envs, int n) {
  if (envs.is_none()) {
    std::vector<int> all(static_cast<size_t>(n));
    for (int e = 0; e < n; ++e) all[static_cast<size_t>(e)] = e;
    return all;
  }
  if (py::isinstance<py::array>(envs) && py::array(envs.cast<py::array>()).dtype().kind() == 'i') {
    const auto a = py::array_t<long long, py::array::c_style | py::array::forcecast>::ensure(envs);
    if (a.ndim() != 1) throw Error("envs: expected a 1-D array of environment indices, got " + std::to_string(a.ndim()) + " dimensions");
    std::vector<int> list(static_cast<size_t>(a.size()));
    for (py::ssize_t k = 0; k < a.size(); ++k) {  // checked before narrowing: 2^32 must not become 0
      const long long e = a.data()[k];
      if (e < 0 || e >= n) throw Error("environment index " + std::to_string(e) + " out of range [0, " + std::to_string(n) + ")");
      list[static_cast<size_t>(k)] = static_cast<int>(e);
    }
    return list;
  }
  try {
    return envs.cast<std::vector<int>>();
  } catch (const py::cast_error&) {
    throw Error("envs: expected environment indices (a sequence of ints or an integer array), got " +
                std::string(py::str(envs.get_type().attr("__name__"))));
  }
}

// One seed per listed environment, as unsigned 64-bit integers (a NumPy uint64 array in one pass).
std::vector<std::uint64_t> seed_list(const py::object& seeds) {
  if (py::isinstance<py::array>(seeds) && py::array(seeds.cast<py::array>()).dtype().kind() == 'u') {
    const auto a = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(seeds);
    if (a.ndim() != 1) throw Error("seeds: expected a 1-D array, got " + std::to_string(a.ndim()) + " dimensions");
    return std::vector<std::uint64_t>(a.data(), a.data() + a.size());
  }
  try {
    return seeds.cast<std::vector<std::uint64_t>>();
  } catch (const py::cast_error&) {
    throw Error("seeds: expected one integer in [0, 2^64) per environment, got " + std::string(py::str(seeds)).substr(0, 80));
  }
}

std::vector<double> flat(const py::array_t<double, py::array::c_style | py::array::forcecast>& a) {
  return std::vector<double>(a.data(), a.data() + a.size());
}

// A Batch<T>, the arrays that own the memory it reads and writes (None: the Batch's own) and
// the lock that serialises calls from several Python threads.
template <class T>
struct PyBatch {
  PyBatch(const Model& model, int num_envs, int threads) : batch(model, num_envs, threads) {}
  Batch<T> batch;
  py::object user_q, user_v, user_tau, user_qdd, user_target, observations;
  // set_observed_contacts: per observed geometry, its candidates with the sign of their force on
  // it (+1: the geometry is the candidate's A; -1: a pair's B), and the (N, g, 4) array observe() fills.
  std::vector<std::vector<std::pair<int, double>>> observed_contacts;
  py::object contact_observations;
  std::recursive_mutex mutex;  // recursive: a binding may read a property of its own Batch
};

// The contact observations of the observed geometries into b.contact_observations: per
// environment and geometry, 1 when any of its candidates is in contact (else 0), then the summed
// world-frame force on it (N), from the last step's contact_flags and contact_forces.
template <class T>
void observe_contacts(PyBatch<T>& b) {
  auto out = b.contact_observations.template cast<py::array_t<T>>();
  T* o = out.mutable_data();
  const int n = b.batch.num_envs(), candidates = b.batch.contact_candidates();
  const size_t g = b.observed_contacts.size();
  py::gil_scoped_release release;
  for (int e = 0; e < n; ++e)
    for (size_t k = 0; k < g; ++k) {
      T* row = o + (static_cast<size_t>(e) * g + k) * 4;
      std::fill_n(row, 4, T(0));
      for (const auto& [c, sign] : b.observed_contacts[k]) {
        const size_t i = static_cast<size_t>(e) * static_cast<size_t>(candidates) + static_cast<size_t>(c);
        row[0] = std::max(row[0], b.batch.contact_flags()[i]);
        for (int d = 0; d < 3; ++d) row[1 + d] += static_cast<T>(sign) * b.batch.contact_forces()[i * 3 + static_cast<size_t>(d)];
      }
    }
}

// Takes the Batch's lock; while another thread holds it (a step() with the GIL released), waits
// with the GIL released so that thread can finish.
template <class B>
std::unique_lock<std::recursive_mutex> lock_batch(B& b) {
  std::unique_lock<std::recursive_mutex> held(b.mutex, std::try_to_lock);
  if (!held.owns_lock()) {
    py::gil_scoped_release release;
    held.lock();
  }
  return held;
}

// Wraps a binding f(self, args...) (self: B& or the Python object) so it runs under the Batch's lock.
template <class B, class F, class R, class Self, class... A>
auto serialised_call(F f, R (F::*)(Self, A...) const) {
  return [f](Self self, A... args) -> R {
    B* b = nullptr;
    if constexpr (std::is_same_v<std::decay_t<Self>, py::object>) b = &self.template cast<B&>();
    else b = &self;
    const auto held = lock_batch(*b);
    return f(std::forward<Self>(self), std::forward<A>(args)...);
  };
}
template <class B, class F>
auto serialised(F f) {
  return serialised_call<B>(f, &F::operator());
}

// The getter and the setter of a property that is one field of one of the Batch's settings
// structs: read whole with `read`, written back whole with `write` (which checks it).
template <class B, class Engine, class Settings, class Field>
auto settings_field_getter(const Settings& (Engine::*read)() const, Field Settings::*field) {
  return serialised<B>([read, field](B& b) { return (b.batch.*read)().*field; });
}
template <class B, class Engine, class Settings, class Field>
auto settings_field_setter(const Settings& (Engine::*read)() const, void (Engine::*write)(const Settings&),
                           Field Settings::*field) {
  return serialised<B>([read, write, field](B& b, Field value) {
    Settings s = (b.batch.*read)();
    s.*field = value;
    (b.batch.*write)(s);
  });
}
// The loop stabilisation's fields (Batch::set_loop_stabilisation checks them).
template <class B, class Field>
auto loop_stabilisation_getter(Field LoopStabilisationSettings::*field) {
  return settings_field_getter<B>(&decltype(B::batch)::loop_stabilisation, field);
}
template <class B, class Field>
auto loop_stabilisation_setter(Field LoopStabilisationSettings::*field) {
  return settings_field_setter<B>(&decltype(B::batch)::loop_stabilisation, &decltype(B::batch)::set_loop_stabilisation, field);
}
// The contact settings' fields (Batch::set_contact_settings checks them).
template <class B, class Field>
auto contact_setting_getter(Field ContactSettings::*field) {
  return settings_field_getter<B>(&decltype(B::batch)::contact_settings, field);
}
template <class B, class Field>
auto contact_setting_setter(Field ContactSettings::*field) {
  return settings_field_setter<B>(&decltype(B::batch)::contact_settings, &decltype(B::batch)::set_contact_settings, field);
}

// The owner of a view: the user's array when one was given, else the Batch itself.
inline py::handle owner_or(const py::object& user, const py::object& self) { return user ? py::handle(user) : py::handle(self); }

template <class T>
void bind_batch(py::module_& m, const char* name) {
  using B = PyBatch<T>;
  const auto rows = [](B& b, int width) { return std::vector<py::ssize_t>{b.batch.num_envs(), width}; };
  py::class_<B>(m, name, "N environments of one Model stepped together (see batchdyn.Batch).")
      .def(py::init<const Model&, int, int>(), py::arg("model"), py::arg("num_envs"), py::arg("threads") = 0)
      .def_property_readonly("num_envs", serialised<B>([](B& b) { return b.batch.num_envs(); }))
      .def_property("passive_forces", serialised<B>([](B& b) { return b.batch.passive_forces(); }),
                    serialised<B>([](B& b, bool on) { b.batch.set_passive_forces(on); }),
                    "Whether step() and forward_dynamics() apply the model's joint damping -d qd (default True, as "
                    "simulators do); False: the rigid-body dynamics as Pinocchio defines it.")
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
      .def_property_readonly("target", serialised<B>([rows](py::object self) { B& b = self.cast<B&>(); return view(b.batch.target(), rows(b, b.batch.model().nv), owner_or(b.user_target, self)); }))
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
      .def("forward_dynamics", serialised<B>([](B& b) { py::gil_scoped_release release; b.batch.forward_dynamics(); }),
           "qdd = FD(q, v, applied torque) for every environment (constraints included when the model has any).")
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
      }), py::arg("dt"), py::arg("substeps"), py::arg("calls"))
      .def_property("control_mode",
                    serialised<B>([](B& b) { return b.batch.control_mode() == ControlMode::Torque ? "torque" : "pd"; }),
                    serialised<B>([](B& b, const std::string& mode) {
                      if (mode == "torque") b.batch.set_control_mode(ControlMode::Torque);
                      else if (mode == "pd") b.batch.set_control_mode(ControlMode::PositionPD);
                      else throw Error("control_mode must be \"torque\" or \"pd\", got \"" + mode + "\"");
                    }))
      .def_property("integrator",
                    serialised<B>([](B& b) { return b.batch.integrator() == Integrator::RungeKutta4 ? "rk4" : "euler"; }),
                    serialised<B>([](B& b, const std::string& name) {
                      if (name == "euler") b.batch.set_integrator(Integrator::SemiImplicitEuler);
                      else if (name == "rk4") b.batch.set_integrator(Integrator::RungeKutta4);
                      else throw Error("integrator must be \"euler\" or \"rk4\", got \"" + name + "\"");
                    }),
                    "step()'s integrator: \"euler\" (semi-implicit, the default: one evaluation of the dynamics per "
                    "substep) or \"rk4\" (four per substep; keeps a passive, undamped model's energy bounded where Euler "
                    "can blow up).")
      .def("set_pd_gains", serialised<B>([](B& b, const std::vector<double>& kp, const std::vector<double>& kd) { b.batch.set_pd_gains(kp, kd); }),
           py::arg("kp"), py::arg("kd"))
      .def_property("effort_limits", serialised<B>([](B& b) { return b.batch.effort_limits(); }),
                    serialised<B>([](B& b, const std::vector<double>& limits) { b.batch.set_effort_limits(limits); }))
      .def("remove_effort_limits", serialised<B>([](B& b) { b.batch.remove_effort_limits(); }))
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
      .def("set_reference_configuration", serialised<B>([](B& b, py::array_t<T, py::array::c_style | py::array::forcecast> q) {
        b.batch.set_reference_configuration(std::span<const T>(q.data(), static_cast<size_t>(q.size())));
      }))
      .def_property_readonly("failed_count", serialised<B>([](B& b) { return b.batch.failed_count(); }))
      .def("status_message", serialised<B>([](B& b, int env) { return b.batch.status_message(env); }))
      .def_property("use_constraints", serialised<B>([](B& b) { return b.batch.constrained(); }),
                    serialised<B>([](B& b, bool on) { b.batch.set_use_constraints(on); }))
      .def_property("constraint_solver", serialised<B>([](B& b) { return std::string(algorithm_name(b.batch.constraint_solver())); }),
                    serialised<B>([](B& b, const std::string& name) {
                      b.batch.set_constraint_solver(parse_algorithm(name, "constraint_solver", is_constraint_solver));
                    }), "Constrained forward dynamics solver: \"lcaba\" (recursive, on the lanes; default), \"proxbbo\" "
                       "(recursive, accurate at stiff mu) or \"constrained\" (dense, the oracle; \"dense\" is accepted too).")
      .def_property("constraint_mu", serialised<B>([](B& b) { return b.batch.constraint_settings().mu; }),
                    serialised<B>([](B& b, double mu) {
                      ProximalSettings s = b.batch.constraint_settings();
                      s.mu = mu;
                      b.batch.set_constraint_settings(s);
                    }), "The augmented-Lagrangian penalty mu of the constraint solver.")
      .def_property("constraint_max_iterations", serialised<B>([](B& b) { return b.batch.constraint_settings().max_iterations; }),
                    serialised<B>([](B& b, int iterations) {
                      ProximalSettings s = b.batch.constraint_settings();
                      s.max_iterations = iterations;
                      b.batch.set_constraint_settings(s);
                    }), "The constraint solver's iteration cap (1 to 1000000).")
      .def_property("constraint_tolerance", serialised<B>([](B& b) { return b.batch.constraint_settings().tolerance; }),
                    serialised<B>([](B& b, double tolerance) {
                      ProximalSettings s = b.batch.constraint_settings();
                      s.tolerance = tolerance;
                      b.batch.set_constraint_settings(s);
                    }), "The constraint solver's relative tolerance (finite, >= 0; see ProximalSettings).")
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
      .def_property("loop_time_constant", loop_stabilisation_getter<B>(&LoopStabilisationSettings::time_constant),
                    loop_stabilisation_setter<B>(&LoopStabilisationSettings::time_constant),
                    "Time constant T (s) of the stabilisation step() gives loop constraints whose file gives no gains, T at least "
                    "2 h (default 0.02; 0: off): with Euler and loop_velocity_level, J v+ = -e/T; otherwise Baumgarte gains "
                    "kd = 2/T, kp = 1/(T zeta)^2.")
      .def_property("loop_damping_ratio", loop_stabilisation_getter<B>(&LoopStabilisationSettings::damping_ratio),
                    loop_stabilisation_setter<B>(&LoopStabilisationSettings::damping_ratio),
                    "Damping ratio zeta of the Baumgarte gains (default 1: critically damped; not used by velocity-level rows).")
      .def_property("loop_velocity_level", loop_stabilisation_getter<B>(&LoopStabilisationSettings::velocity_level),
                    loop_stabilisation_setter<B>(&LoopStabilisationSettings::velocity_level),
                    "True (default): with the Euler integrator, step() holds those loops at the velocity level, J v+ = -e/T "
                    "without the drift Jdot v (stable through a closed chain's singular poses); False: acceleration-level "
                    "Baumgarte rows (as with RK4).")
      .def_property("loop_drift_tolerance", loop_stabilisation_getter<B>(&LoopStabilisationSettings::drift_tolerance),
                    loop_stabilisation_setter<B>(&LoopStabilisationSettings::drift_tolerance),
                    "Largest loop position error (m, rad) at a step's start before status 6 (loop drift); inf: not checked "
                    "(default 0.01).")
      .def_property("loop_plateau_tolerance", loop_stabilisation_getter<B>(&LoopStabilisationSettings::plateau_tolerance),
                    loop_stabilisation_setter<B>(&LoopStabilisationSettings::plateau_tolerance),
                    "step()'s loop solves (LCABA, proxBBO) also stop where the rows' violation sits on a plateau within this "
                    "of its terms (default 1e-9: near singular poses the rows pin qdd no better; 0: solve to "
                    "constraint_tolerance, as forward_dynamics() does).")
      .def_property_readonly("loop_drift", serialised<B>([](B& b) {
        return py::array_t<T>(static_cast<py::ssize_t>(b.batch.loop_drift().size()), b.batch.loop_drift().data());
      }), "(N,) the largest loop position error (m, rad) at the start of the last step (a copy; 0 when not measured).")
      // Contact (batch/contact_solving.hpp): the model's candidates against the ground, in step()
      .def_property("contacts", serialised<B>([](B& b) { return b.batch.contacts(); }),
                    serialised<B>([](B& b, bool on) { b.batch.set_contacts(on); }),
                    "Whether step() solves frictional contact with the ground and contact pairs (default: on for a model "
                    "with collision geometry and a ground or pairs, and no loop constraints; can be turned on with them, "
                    "whose loops are then bilateral rows of the contact problem).")
      .def_property_readonly("contact_candidates", serialised<B>([](B& b) { return b.batch.contact_candidates(); }),
                             "C: the model's contact candidates (model.info()['contacts'] lists them).")
      .def_property("contact_solver", serialised<B>([](B& b) { return std::string(contact_solver_name(b.batch.contact_settings().solver)); }),
                    serialised<B>([](B& b, const std::string& name) {
                      if (name != "admm" && name != "pgs")
                        throw Error("Batch.contact_solver: expected 'admm' or 'pgs', got '" + name + "'");
                      ContactSettings s = b.batch.contact_settings();
                      s.solver = name == "pgs" ? ContactSolver::Pgs : ContactSolver::Admm;
                      b.batch.set_contact_settings(s);
                    }), "The contact problem's solver: 'admm' (proximal ADMM, the default) or 'pgs' (projected Gauss-Seidel, "
                        "the baseline most engines use), with the same cap, tolerance and stopping test.")
      .def_property("admm_linear_solve",
                    serialised<B>([](B& b) { return std::string(admm_linear_solve_name(b.batch.contact_settings().admm_linear_solve)); }),
                    serialised<B>([](B& b, const std::string& name) {
                      if (name != "cholesky" && name != "pv-soft")
                        throw Error("Batch.admm_linear_solve: expected 'cholesky' or 'pv-soft', got '" + name + "'");
                      ContactSettings s = b.batch.contact_settings();
                      s.admm_linear_solve = name == "pv-soft" ? AdmmLinearSolve::PvSoft : AdmmLinearSolve::Cholesky;
                      b.batch.set_contact_settings(s);
                    }), "ADMM's linear solve with G + rho I: 'cholesky' (a factor of the formed Delassus matrix, the default) or "
                        "'pv-soft' (on the tree, O(n + m) per solve; ground contacts and joint limits only: refused on a model "
                        "with contact pairs or loop constraints).")
      .def_property("admm_polish", contact_setting_getter<B>(&ContactSettings::polish),
                    contact_setting_setter<B>(&ContactSettings::polish),
                    "Whether ADMM on the formed Delassus matrix polishes its iterate (default True): after 10, 20, 40, ... "
                    "iterations it solves the rows it finds acting exactly (active-set passes), and a solution is taken "
                    "only where it meets the tolerance. Turns caps on nearly redundant joint limits into exact solves.")
      .def_property("contact_max_iterations", contact_setting_getter<B>(&ContactSettings::max_iterations),
                    contact_setting_setter<B>(&ContactSettings::max_iterations),
                    "The contact solver's iteration cap per substep (1 to 1000000; default 500).")
      .def_property("contact_tolerance", contact_setting_getter<B>(&ContactSettings::tolerance),
                    contact_setting_setter<B>(&ContactSettings::tolerance),
                    "The contact solver's relative tolerance (finite, >= 0; default 1e-6 in float64, 1e-5 in float32).")
      .def_property("joint_limits", contact_setting_getter<B>(&ContactSettings::joint_limits),
                    contact_setting_setter<B>(&ContactSettings::joint_limits),
                    "Whether step() keeps the 1-dof joints within their position limits (unilateral rows of the "
                    "contact problem, default True; with loop constraints and no contacts, on the mechanism with its loops "
                    "closed). The reference "
                    "functions never apply them.")
      .def("set_ground", serialised<B>([](B& b, const std::vector<int>& envs, double height, const std::array<double, 3>& normal) {
             b.batch.set_ground(envs, height, Vec3d{normal[0], normal[1], normal[2]});
           }), py::arg("envs"), py::arg("height"), py::arg("normal") = std::array<double, 3>{0.0, 0.0, 1.0},
           "The ground plane n . x = height of the listed environments (n normalised).")
      .def("set_friction", serialised<B>([](B& b, const std::vector<int>& envs, double mu) { b.batch.set_friction(envs, mu); }),
           py::arg("envs"), py::arg("mu"), "One friction coefficient (>= 0) for every candidate of the listed environments.")
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
        return view(const_cast<T*>(b.batch.contact_forces()), {b.batch.num_envs(), b.batch.contact_candidates(), 3}, self);
      }), "(N, C, 3) world-frame contact forces of the last step (N), a view.")
      .def_property_readonly("contact_gaps", serialised<B>([](py::object self) {
        B& b = self.cast<B&>();
        return view(const_cast<T*>(b.batch.contact_gaps()), {b.batch.num_envs(), b.batch.contact_candidates()}, self);
      }), "(N, C) gaps to the ground at the last step's start (m; < 0: penetration), a view.")
      .def_property_readonly("contact_flags", serialised<B>([](py::object self) {
        B& b = self.cast<B&>();
        return view(const_cast<T*>(b.batch.contact_flags()), {b.batch.num_envs(), b.batch.contact_candidates()}, self);
      }), "(N, C) 1 where a candidate was within its margin of the ground in the last step, else 0, a view.")
      .def_property_readonly("contact_iterations", serialised<B>([](B& b) { return int_array(b.batch.contact_iterations()); }),
                             "(N,) int32: the contact solver's (ADMM) iterations per environment in the last step's last substep (a copy).")
      .def_property_readonly("contact_residual", serialised<B>([](B& b) {
        return py::array_t<T>(static_cast<py::ssize_t>(b.batch.contact_residual().size()), b.batch.contact_residual().data());
      }))
      .def("delassus", serialised<B>([](py::object self) {
        B& b = self.cast<B&>();
        {
          py::gil_scoped_release release;
          b.batch.delassus();
        }
        const py::ssize_t rows = b.batch.constraint_rows();
        return view(const_cast<T*>(b.batch.delassus_matrices()), {b.batch.num_envs(), rows, rows}, self);
      }), "The (N, m, m) Delassus matrices J M^-1 J^T at every q (PV-OSIMr).");
}

}  // namespace

PYBIND11_MODULE(_batchdyn, m) {
  m.doc() = "batchdyn: batched rigid-body dynamics (compiled core)";
  static py::exception<Error> error(m, "Error", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(error.ptr(), e.what());
    }
  });

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
        "One time step of length h with frictional contact against the ground (the dense reference, kernels/contact_step.hpp): "
        "dict(q, v, active (candidate indices), impulses (k, 3: normal, two tangents, N s), forces (k, 3, world, N), "
        "gaps (every candidate at q), limits ((dof, side, distance, impulse) per joint limit in the problem), iterations, converged).");
  m.def("delassus", [](const Model& model, const Eigen::VectorXd& q) {
    require_constraints(model, "batchdyn.delassus");
    Data<double> data(model);
    ConstrainedData<double> cdata(model);
    return Eigen::MatrixXd(delassus(model, data, cdata, vector_arg(q, model.nq, "q", "delassus")));
  }, py::arg("model"), py::arg("q"), "The Delassus matrix J M^-1 J^T (dense).");

  bind_batch<float>(m, "BatchFloat32");
  bind_batch<double>(m, "BatchFloat64");
  m.attr("simd_width_float32") = Batch<float>::W;
  m.attr("simd_width_float64") = Batch<double>::W;
}
