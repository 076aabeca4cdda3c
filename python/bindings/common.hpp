// What the bindings of the Python module share (python/bindings/): argument conversions, NumPy
// views of the engine's memory kept alive by their owner, the Batch wrapper with its lock, and
// the helpers that bind settings fields as properties from one table.
//
// NumPy arrays returned by a Batch are views of the memory the engine reads and writes (no
// copies; torch.from_numpy shares them), each kept alive by the object that owns that memory:
// the Batch for its own buffers, the user's array after use_buffers, the observation array of
// the current set_observed_frames. A view taken before use_buffers or set_observed_frames stays
// valid (it no longer follows the engine). The engine runs with the GIL released; calls on one
// Batch from several Python threads run one at a time (each takes the Batch's lock).
#pragma once

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
#include <string>
#include <type_traits>
#include <vector>

#include "batchdyn.hpp"

namespace batchdyn::python {

namespace py = pybind11;


inline RootJoint root_of(const std::string& root) {
  if (root == "fixed") return RootJoint::Fixed;
  if (root == "free") return RootJoint::FreeFlyer;
  throw Error("load: root must be \"fixed\" or \"free\", got \"" + root + "\"");
}

inline bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A URDF, an SDF or a scene (*.json), with optional constraints / lock_joints / armature / damping JSON.
inline Model load(const std::string& path, const std::string& root, const std::optional<std::string>& constraints,
           const std::string& closure, bool balance_inertia, bool strict_inertia, const std::optional<std::string>& contacts,
           bool self_collision) {
  LoadOptions options;
  options.balance_inertia = balance_inertia, options.strict_inertia = strict_inertia, options.self_collision = self_collision;
  Model model = ends_with(path, ".json") ? load_scene_file(path, options)
                                         : load_robot_file(path, root_of(root), parse_loop_closure(closure), options);
  if (constraints) add_constraints_from_json_file(model, *constraints);
  if (contacts) add_contacts_from_json_file(model, *contacts);
  return model;
}

inline Eigen::VectorXd vector_arg(const Eigen::VectorXd& x, int size, const char* name, const char* what) {
  if (x.size() != size)
    throw Error(std::string(what) + ": '" + name + "' has " + std::to_string(x.size()) + " values, expected " + std::to_string(size));
  return x;
}

// A NumPy view of `count` rows of `shape` values at `data`, owned by `owner` (the Batch).
template <class T>
py::array_t<T> view(T* data, std::vector<py::ssize_t> shape, py::handle owner) {
  return py::array_t<T>(shape, data, owner);
}

// The same, read-only: results the engine keeps (and may leave unwritten where they did not
// change, batch/contact_solving.hpp), which a write would corrupt.
template <class T>
py::array_t<T> readonly_view(T* data, std::vector<py::ssize_t> shape, py::handle owner) {
  py::array_t<T> out = view(data, std::move(shape), owner);
  out.attr("setflags")(py::arg("write") = false);
  return out;
}

// A NumPy int32 array copy of per-environment counts (iterations).
inline py::array_t<std::int32_t> int_array(const std::vector<int>& values) {
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
inline std::vector<int> env_list(const py::object& envs, int n) {
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
                std::string(py::str(py::type::handle_of(envs).attr("__name__"))));
  }
}

// One seed per listed environment, as unsigned 64-bit integers (a NumPy uint64 array in one pass).
inline std::vector<std::uint64_t> seed_list(const py::object& seeds) {
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

inline std::vector<double> flat(const py::array_t<double, py::array::c_style | py::array::forcecast>& a) {
  return std::vector<double>(a.data(), a.data() + a.size());
}

// A Batch<T>, the arrays that own the memory it reads and writes (None: the Batch's own) and
// the lock that serialises calls from several Python threads.
template <class T>
struct PyBatch {
  PyBatch(const Model& model, int num_envs, int threads) : batch(model, num_envs, threads) {}
  Batch<T> batch;
  py::object user_q, user_v, user_tau, user_qdd, user_target, user_ctrl, observations;
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
        if (b.batch.contact_flags()[i]) row[0] = T(1);
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
// The owner of a view: the user's array when one was given, else the Batch itself.
inline py::handle owner_or(const py::object& user, const py::object& self) { return user ? py::handle(user) : py::handle(self); }

// One property per field of a settings struct, from one table: its Python name, the field and
// its doc. bind_setting_fields reads the Batch's settings whole and writes them back whole
// (the engine's setter checks them), so a bad value is refused with the engine's message.
template <class Settings, class Field>
struct SettingField {
  const char* name;
  Field Settings::*field;
  const char* doc;
};
template <class Settings, class Field>
SettingField<Settings, Field> setting(const char* name, Field Settings::*field, const char* doc) {
  return {name, field, doc};
}
template <class B, class Class, class Engine, class Settings, class... Fields>
void bind_setting_fields(Class& cls, const Settings& (Engine::*read)() const, void (Engine::*write)(const Settings&),
                         const SettingField<Settings, Fields>&... fields) {
  (cls.def_property(fields.name, settings_field_getter<B>(read, fields.field), settings_field_setter<B>(read, write, fields.field), fields.doc),
   ...);
}

// The binders of the module's parts (python/bindings/*.cpp).
void bind_model(py::module_& m);
void bind_reference_functions(py::module_& m);
void bind_batch_float32(py::module_& m);
void bind_batch_float64(py::module_& m);

}  // namespace batchdyn::python
