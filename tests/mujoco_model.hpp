// MuJoCo itself as the oracle of the MJCF tests (tests/test_mjcf.cpp, tests/test_touch_sensors.cpp):
// a file compiled by the `mujoco` wheel's libmujoco, which their executable links.
#pragma once

#include <mujoco/mujoco.h>

#include <string>

#include <doctest/doctest.h>

namespace batchdyn::test {

// MuJoCo's own model of a file, compiled as batchdyn compiles it (visual geoms discarded).
struct MujocoModel {
  mjSpec* spec = nullptr;
  mjModel* model = nullptr;
  mjData* data = nullptr;
  explicit MujocoModel(const std::string& path_or_xml, bool is_xml = false) {
    char error[1024] = "";
    spec = is_xml ? mj_parseXMLString(path_or_xml.c_str(), nullptr, error, sizeof error)
                  : mj_parseXML(path_or_xml.c_str(), nullptr, error, sizeof error);
    REQUIRE_MESSAGE(spec, error);
    spec->compiler.discardvisual = 1;
    model = mj_compile(spec, nullptr);
    REQUIRE_MESSAGE(model, mjs_getError(spec));
    data = mj_makeData(model);
  }
  MujocoModel(const MujocoModel&) = delete;
  MujocoModel& operator=(const MujocoModel&) = delete;
  ~MujocoModel() {
    mj_deleteData(data);
    mj_deleteModel(model);
    mj_deleteSpec(spec);
  }
};

}  // namespace batchdyn::test
