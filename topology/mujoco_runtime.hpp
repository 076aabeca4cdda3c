// libmujoco, opened at run time for the MJCF loader (topology/mjcf.cpp): the functions it calls,
// looked up once. Private to the library (not installed): it includes MuJoCo's C headers, which
// exist only where the `mujoco` wheel was found at configure time (BATCHDYN_HAVE_MUJOCO).
#pragma once

#include <mujoco/mujoco.h>

#include <string>
#include <vector>

namespace batchdyn::mujoco_runtime {

struct Api {
  decltype(&mj_parseXML) parse_xml;
  decltype(&mj_parseXMLString) parse_xml_string;
  decltype(&mj_compile) compile;
  decltype(&mj_deleteSpec) delete_spec;
  decltype(&mj_deleteModel) delete_model;
  decltype(&mjs_getError) spec_error;
  decltype(&mjs_firstElement) first_element;
  decltype(&mjs_nextElement) next_element;
  decltype(&mjs_asTendon) as_tendon;
  decltype(&mjs_asActuator) as_actuator;
  decltype(&mjs_asEquality) as_equality;
  decltype(&mjs_asJoint) as_joint;
  decltype(&mjs_getName) element_name;
  decltype(&mjs_getString) string;  // mjString is libmujoco's own std::string (another C++ library's): read through it
};

// The opened library's functions. Opens it on first use (topology/mjcf.hpp says where it looks);
// throws Error naming every place tried when it cannot, or when its version differs from the
// headers'.
const Api& api();

// Runs `body` with MuJoCo's error and warning handlers redirected: an error (mju_error, which
// would end the process) throws Error(`where` + message); warnings are appended to `warnings`.
// Serialised: the handlers are process-wide.
void call_guarded(const std::string& where, std::vector<std::string>& warnings, void (*body)(void*), void* context);

}  // namespace batchdyn::mujoco_runtime
