#include "topology/mujoco_runtime.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "topology/mjcf.hpp"
#include "topology/model.hpp"

namespace batchdyn {

namespace {

// "4.0.1" from mjVERSION_HEADER = 4000001.
std::string version_text(int version) {
  return std::to_string(version / 1000000) + "." + std::to_string(version / 1000 % 1000) + "." + std::to_string(version % 1000);
}
std::string library_name() { return "libmujoco.so." + version_text(mjVERSION_HEADER); }

std::mutex runtime_mutex;           // guards everything below
std::mutex handler_mutex;           // serialises call_guarded: MuJoCo's error handlers are process-wide
std::string chosen_path;            // set_mujoco_library
std::string opened_path;            // the library api() opened
mujoco_runtime::Api opened_api{};
bool opened = false;

// Where the library that holds this function lives (libbatchdyn, or the program linking it).
std::filesystem::path own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_directory), &info) && info.dli_fname)
    return std::filesystem::path(info.dli_fname).parent_path();
  return {};
}

// The places to look, in order, as topology/mjcf.hpp documents.
std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (!chosen_path.empty()) return {chosen_path};
  if (const char* env = std::getenv("BATCHDYN_LIBMUJOCO"); env && *env) out.emplace_back(env);
  if (const auto dir = own_directory(); !dir.empty()) out.push_back((dir / ".." / ".." / "mujoco" / library_name()).string());
#ifdef BATCHDYN_MUJOCO_LIBRARY
  out.emplace_back(BATCHDYN_MUJOCO_LIBRARY);
#endif
  out.push_back(library_name());  // the dynamic linker's search path
  return out;
}

template <class F>
void bind(void* handle, F& out, const char* symbol, const std::string& path) {
  void* address = dlsym(handle, symbol);
  if (!address) throw Error("MJCF: " + path + " has no function " + symbol + ": not a libmujoco " + version_text(mjVERSION_HEADER));
  out = reinterpret_cast<F>(address);
}

void open_library() {
  std::string tried;
  for (const std::string& path : candidates()) {
    if (path.find('/') != std::string::npos && !std::filesystem::exists(path)) {
      tried += "\n  " + path + " (no such file)";
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      tried += "\n  " + path + " (" + dlerror() + ")";
      continue;
    }
    int (*version)() = nullptr;
    bind(handle, version, "mj_version", path);
    if (version() != mjVERSION_HEADER)
      throw Error("MJCF: " + path + " is MuJoCo " + version_text(version()) + ", but batchdyn was built with MuJoCo " +
                  version_text(mjVERSION_HEADER) + "'s headers (their data layouts differ): pip install mujoco==" +
                  version_text(mjVERSION_HEADER) + ", or rebuild batchdyn against the installed one");
    mujoco_runtime::Api a{};
    bind(handle, a.parse_xml, "mj_parseXML", path);
    bind(handle, a.parse_xml_string, "mj_parseXMLString", path);
    bind(handle, a.compile, "mj_compile", path);
    bind(handle, a.delete_spec, "mj_deleteSpec", path);
    bind(handle, a.delete_model, "mj_deleteModel", path);
    bind(handle, a.spec_error, "mjs_getError", path);
    bind(handle, a.first_element, "mjs_firstElement", path);
    bind(handle, a.next_element, "mjs_nextElement", path);
    bind(handle, a.as_tendon, "mjs_asTendon", path);
    bind(handle, a.as_actuator, "mjs_asActuator", path);
    bind(handle, a.as_equality, "mjs_asEquality", path);
    bind(handle, a.as_joint, "mjs_asJoint", path);
    bind(handle, a.element_name, "mjs_getName", path);
    bind(handle, a.string, "mjs_getString", path);
    opened_api = a;
    opened_path = path;
    opened = true;
    return;
  }
  throw Error("MJCF needs MuJoCo " + version_text(mjVERSION_HEADER) + "'s libmujoco (the `mujoco` wheel: pip install mujoco==" +
              version_text(mjVERSION_HEADER) + "; or set BATCHDYN_LIBMUJOCO to its " + library_name() + "). Tried:" + tried);
}

// MuJoCo's handlers during call_guarded.
std::vector<std::string>* warning_sink = nullptr;  // under handler_mutex: one guarded call at a time
void throw_mujoco_error(const char* message) { throw Error(std::string("MuJoCo: ") + message); }
void collect_mujoco_warning(const char* message) {
  if (warning_sink) warning_sink->emplace_back(message);
}

}  // namespace

const mujoco_runtime::Api& mujoco_runtime::api() {
  std::lock_guard lock(runtime_mutex);
  if (!opened) open_library();
  return opened_api;
}

void mujoco_runtime::call_guarded(const std::string& where, std::vector<std::string>& warnings, void (*body)(void*), void* context) {
  api();
  std::lock_guard lock(handler_mutex);
  void* handle = dlopen(opened_path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  auto** error_handler = reinterpret_cast<void (**)(const char*)>(dlsym(handle, "mju_user_error"));
  auto** warning_handler = reinterpret_cast<void (**)(const char*)>(dlsym(handle, "mju_user_warning"));
  if (handle) dlclose(handle);  // RTLD_NOLOAD took a reference
  if (!error_handler || !warning_handler) throw Error(where + opened_path + " has no mju_user_error / mju_user_warning");
  // Restored however body() ends.
  struct Restore {
    void (**error_handler)(const char*);
    void (**warning_handler)(const char*);
    void (*saved_error)(const char*) = *error_handler;
    void (*saved_warning)(const char*) = *warning_handler;
    ~Restore() { *error_handler = saved_error, *warning_handler = saved_warning, warning_sink = nullptr; }
  } restore{error_handler, warning_handler};
  *error_handler = &throw_mujoco_error;
  *warning_handler = &collect_mujoco_warning;
  warning_sink = &warnings;
  try {
    body(context);
  } catch (const Error& e) {
    throw Error(where + e.what());
  }
}

bool mjcf_supported() { return true; }

std::string mujoco_header_version() { return version_text(mjVERSION_HEADER); }

void set_mujoco_library(const std::string& path) {
  std::lock_guard lock(runtime_mutex);
  if (opened) {
    if (path == opened_path) return;
    throw Error("set_mujoco_library: " + opened_path + " is already in use; call it before the first MJCF load");
  }
  chosen_path = path;
}

std::string mujoco_library_path() {
  std::lock_guard lock(runtime_mutex);
  return opened_path;
}

}  // namespace batchdyn
