// URDF <collision><mesh>: the mesh file's vertices (STL binary or ASCII, OBJ, COLLADA;
// topology/mesh_file.hpp), scaled, become a convex hull on the link (topology/urdf.cpp), found
// through package:// paths; a missing file or another format is skipped and listed, a malformed
// one refused with its file and line. The oracles for the hull are the mesh file read here byte
// by byte and COLLADA scenes whose vertices are worked out by hand; a mesh cube dropped on the
// ground comes to rest on its face.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

#include "batch_helpers.hpp"
#include "topology/contacts.hpp"
#include "topology/mesh_file.hpp"
#include "topology/urdf.hpp"

using namespace batchdyn;
using namespace batchdyn::test;
namespace fs = std::filesystem;

namespace {

const std::string kAnkle = std::string(BATCHDYN_ROBOTS_DIR) + "/mjcf/unitree_h1/assets/left_ankle_link.STL";

// A fresh scratch folder for one test case (removed at its end).
struct ScratchFolder {
  fs::path path;
  explicit ScratchFolder(const std::string& name) : path(fs::temp_directory_path() / ("batchdyn_mesh_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchFolder() { fs::remove_all(path); }
  fs::path write(const std::string& relative, const std::string& text) const {
    const fs::path file = path / relative;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }
};

// One free-floating link (a 1 kg body) whose only collision is `mesh` (a <mesh> element).
std::string one_link_urdf(const std::string& mesh) {
  return R"(<robot name="meshed"><link name="body">
    <inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><geometry>)" + mesh + R"(</geometry></collision></link></robot>)";
}

// The corners of every triangle of a binary STL file, read here byte by byte.
std::vector<Vec3d> binary_stl_corners(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::uint32_t triangles = 0;
  std::memcpy(&triangles, bytes.data() + 80, 4);
  REQUIRE(bytes.size() == 84 + 50 * static_cast<size_t>(triangles));
  std::vector<Vec3d> corners;
  for (std::uint32_t t = 0; t < triangles; ++t)
    for (int c = 0; c < 3; ++c) {
      float xyz[3];
      std::memcpy(xyz, bytes.data() + 84 + 50 * static_cast<size_t>(t) + 12 + 12 * static_cast<size_t>(c), 12);
      corners.push_back({xyz[0], xyz[1], xyz[2]});
    }
  return corners;
}

double support(const std::vector<Vec3d>& points, const Vec3d& d) {
  double best = -1e300;
  for (const Vec3d& p : points) best = std::max(best, dot(p, d));
  return best;
}

// A cube of side `side` centred at the origin: 8 "v" lines, 12 triangles as OBJ faces.
std::string cube_obj(double side) {
  const double h = side / 2;
  std::string text = "# a cube\no cube\n";
  for (int k = 0; k < 8; ++k)
    text += "v " + std::to_string(k & 1 ? h : -h) + " " + std::to_string(k & 2 ? h : -h) + " " + std::to_string(k & 4 ? h : -h) + "\n";
  text += "vn 0 0 1\nf 1 2 4\nf 1 4 3\nf 5 6 8\nf 5 8 7\nf 1 2 6\nf 1 6 5\nf 3 4 8\nf 3 8 7\nf 1 3 7\nf 1 7 5\nf 2 4 8\nf 2 8 6\n";
  return text;
}

// A COLLADA document in `unit` metres with `up_axis`, one geometry "box" (the 8 corners of the
// box [0, size.x] x [0, size.y] x [0, size.z], 12 triangles), and the visual scene's `nodes`.
std::string collada_document(double unit, const std::string& up_axis, const Vec3d& size, const std::string& nodes) {
  std::string positions;
  for (int k = 0; k < 8; ++k)
    positions += std::to_string(k & 1 ? size.x : 0.0) + " " + std::to_string(k & 2 ? size.y : 0.0) + " " + std::to_string(k & 4 ? size.z : 0.0) + " ";
  return R"(<?xml version="1.0" encoding="utf-8"?>
<COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1">
  <asset><unit name="unit" meter=")" + std::to_string(unit) + R"("/><up_axis>)" + up_axis + R"(</up_axis></asset>
  <library_geometries><geometry id="box"><mesh>
    <source id="box-positions"><float_array id="box-array" count="24">)" + positions + R"(</float_array>
      <technique_common><accessor source="#box-array" count="8" stride="3">
        <param name="X" type="float"/><param name="Y" type="float"/><param name="Z" type="float"/></accessor></technique_common></source>
    <vertices id="box-vertices"><input semantic="POSITION" source="#box-positions"/></vertices>
    <triangles count="12"><input semantic="VERTEX" source="#box-vertices" offset="0"/>
      <p>0 1 3 0 3 2 4 5 7 4 7 6 0 1 5 0 5 4 2 3 7 2 7 6 0 2 6 0 6 4 1 3 7 1 7 5</p></triangles>
  </mesh></geometry></library_geometries>
  <library_visual_scenes><visual_scene id="scene">)" + nodes + R"(</visual_scene></library_visual_scenes>
  <scene><instance_visual_scene url="#scene"/></scene>
</COLLADA>
)";
}

const CollisionGeometry& only_geometry(const Model& model) {
  REQUIRE(model.contacts.geometries.size() == 1);
  return model.contacts.geometries[0];
}

}  // namespace

TEST_CASE("a URDF mesh collides through the convex hull of its binary STL file's vertices, scaled") {
  ScratchFolder folder("stl");
  const fs::path urdf = folder.write("robot.urdf", one_link_urdf("<mesh filename=\"" + kAnkle + "\" scale=\"1 1.5 2\"/>"));
  const Model model = load_urdf_file(urdf.string(), RootJoint::FreeFlyer);
  const CollisionGeometry& hull = only_geometry(model);
  CHECK(hull.shape == CollisionShape::ConvexHull);
  CHECK(hull.vertices.size() == static_cast<size_t>(kHullVertexBudget));  // thousands of vertices, decimated
  std::vector<Vec3d> corners = binary_stl_corners(kAnkle);
  for (Vec3d& p : corners) p = {p.x, 1.5 * p.y, 2.0 * p.z};
  for (const Vec3d& v : hull.vertices) {  // each kept vertex is one of the file's, scaled
    const bool in_file = std::any_of(corners.begin(), corners.end(), [&](const Vec3d& p) { return p.x == v.x && p.y == v.y && p.z == v.z; });
    CHECK(in_file);
  }
  // Along any direction the kept hull reaches the full one to the decimation's few millimetres.
  std::mt19937 rng(17);
  std::normal_distribution<double> normal(0.0, 1.0);
  double worst = 0.0;
  for (int k = 0; k < 500; ++k) {
    Vec3d d{normal(rng), normal(rng), normal(rng)};
    d = d * (1.0 / std::sqrt(dot(d, d)));
    const double gap = support(corners, d) - support(hull.vertices, d);
    CHECK(gap >= 0.0);
    worst = std::max(worst, gap);
  }
  CHECK(worst < 3e-3);
  CHECK(std::count_if(model.contacts.candidates.begin(), model.contacts.candidates.end(), [](const ContactCandidate& c) { return c.slot >= 0; }) == 4);
  const bool noted = std::any_of(model.load_notes.begin(), model.load_notes.end(), [](const std::string& n) {
    return n.find("left_ankle_link.STL") != std::string::npos && n.find("vertices kept at 64 (lies inside the full hull by at most") != std::string::npos;
  });
  CHECK(noted);
}

TEST_CASE("an ASCII STL, an OBJ and a COLLADA mesh of the same cube give the same hull: its 8 corners") {
  ScratchFolder folder("cube");
  std::string stl = "solid cube\n";
  const int faces[12][3] = {{0, 1, 3}, {0, 3, 2}, {4, 5, 7}, {4, 7, 6}, {0, 1, 5}, {0, 5, 4}, {2, 3, 7}, {2, 7, 6}, {0, 2, 6}, {0, 6, 4}, {1, 3, 7}, {1, 7, 5}};
  for (const auto& f : faces) {
    stl += "  facet normal 0 0 0\n    outer loop\n";
    for (int c : f) stl += "      vertex " + std::string(c & 1 ? "0.1" : "-0.1") + " " + (c & 2 ? "0.1" : "-0.1") + " " + (c & 4 ? "0.1" : "-0.1") + "\n";
    stl += "    endloop\n  endfacet\n";
  }
  stl += "endsolid cube\n";
  folder.write("cube.stl", stl);
  folder.write("cube.obj", cube_obj(0.2));
  // The COLLADA cube: [0, 0.2]^3 moved to the centre by its node; Y_UP, which is not applied.
  folder.write("cube.dae", collada_document(1.0, "Y_UP", {0.2, 0.2, 0.2},
                                            R"(<node id="cube"><translate>-0.1 -0.1 -0.1</translate><instance_geometry url="#box"/></node>)"));
  for (const std::string file : {"cube.stl", "cube.obj", "cube.dae"}) {
    CAPTURE(file);
    const fs::path urdf = folder.write("robot.urdf", one_link_urdf("<mesh filename=\"" + file + "\"/>"));  // relative to the URDF
    const Model model = load_urdf_file(urdf.string(), RootJoint::FreeFlyer);
    const CollisionGeometry& hull = only_geometry(model);
    REQUIRE(hull.vertices.size() == 8);  // 36 corners in the STL, merged
    const double tolerance = file == "cube.dae" ? 1e-7 : 1e-12;  // assimp keeps coordinates in float
    for (const Vec3d& v : hull.vertices)
      for (int k = 0; k < 3; ++k) CHECK(std::abs(v[k]) == doctest::Approx(0.1).epsilon(tolerance));
  }
}

TEST_CASE("a COLLADA mesh is placed by its scene's nodes and scaled by its unit, and its up_axis is not applied") {
  // The box [0, 10] x [0, 20] x [0, 30] mm instanced three times, in a Z_UP file:
  //   under a translation of 100 mm along x, then a scale of 2 along x: x in [100, 120] mm;
  //   rotated by 90 degrees about z, (x, y, z) -> (-y, x, z): x in [-20, 0], y in [0, 10];
  //   under a <matrix> that moves it 50 mm up: z in [50, 80].
  const std::string nodes = R"(<node id="moved"><translate>100 0 0</translate><node id="stretched"><scale>2 1 1</scale><instance_geometry url="#box"/></node></node>
    <node id="turned"><rotate>0 0 1 90</rotate><instance_geometry url="#box"/></node>
    <node id="raised"><matrix>1 0 0 0 0 1 0 0 0 0 1 50 0 0 0 1</matrix><instance_geometry url="#box"/></node>)";
  std::vector<Vec3d> expected;
  for (int k = 0; k < 8; ++k) {
    const double x = k & 1 ? 10 : 0, y = k & 2 ? 20 : 0, z = k & 4 ? 30 : 0;
    for (const Vec3d& p : {Vec3d{100 + 2 * x, y, z}, Vec3d{-y, x, z}, Vec3d{x, y, z + 50}}) expected.push_back(p * 1e-3);
  }
  const std::vector<Vec3d> read = parse_mesh_vertices(collada_document(1e-3, "Z_UP", {10, 20, 30}, nodes), MeshFormat::Collada, "boxes.dae");
  REQUIRE(read.size() == expected.size());  // 24 distinct corners (the triangles' repeated ones merged)
  const auto same_point = [](const Vec3d& a, const Vec3d& b) { return std::abs(a.x - b.x) + std::abs(a.y - b.y) + std::abs(a.z - b.z) < 1e-7; };  // float coordinates
  for (const Vec3d& p : expected) {
    CAPTURE(p.x);
    CAPTURE(p.y);
    CAPTURE(p.z);
    CHECK(std::count_if(read.begin(), read.end(), [&](const Vec3d& q) { return same_point(p, q); }) == 1);
  }
  // Through a URDF, with its scale: each hull vertex is one of the corners, scaled.
  ScratchFolder folder("collada");
  folder.write("boxes.dae", collada_document(1e-3, "Z_UP", {10, 20, 30}, nodes));
  const Model model = load_urdf_file(folder.write("robot.urdf", one_link_urdf("<mesh filename=\"boxes.dae\" scale=\"1 1 2\"/>")).string(),
                                     RootJoint::FreeFlyer);
  const CollisionGeometry& hull = only_geometry(model);
  CHECK(hull.shape == CollisionShape::ConvexHull);
  CHECK(hull.vertices.size() >= 8);
  for (const Vec3d& v : hull.vertices)
    CHECK(std::any_of(expected.begin(), expected.end(), [&](const Vec3d& p) { return same_point(Vec3d{p.x, p.y, 2 * p.z}, v); }));
  // The highest corner, (0, 0, 80) mm, is the hull's support along +z.
  CHECK(support(hull.vertices, Vec3d{0, 0, 1}) == doctest::Approx(0.160).epsilon(1e-6));
}

TEST_CASE("a package:// mesh is found in the URDF's parent folders and in ROS_PACKAGE_PATH") {
  ScratchFolder folder("package");
  folder.write("my_robot/meshes/cube.obj", cube_obj(0.2));
  const fs::path urdf = folder.write("my_robot/urdf/robot.urdf", one_link_urdf("<mesh filename=\"package://my_robot/meshes/cube.obj\"/>"));
  CHECK(only_geometry(load_urdf_file(urdf.string(), RootJoint::FreeFlyer)).vertices.size() == 8);  // <ancestor>/my_robot/meshes
  // Elsewhere, the package is found through ROS_PACKAGE_PATH.
  folder.write("ros/other_robot/meshes/box.obj", cube_obj(0.4));
  const fs::path alone = folder.write("alone/robot.urdf", one_link_urdf("<mesh filename=\"package://other_robot/meshes/box.obj\"/>"));
  const Model unfound = load_urdf_file(alone.string(), RootJoint::FreeFlyer);
  CHECK(unfound.contacts.geometries.empty());
  REQUIRE(unfound.contacts.skipped.size() == 1);
  CHECK(unfound.contacts.skipped[0].find("package://other_robot/meshes/box.obj skipped: not found") != std::string::npos);
  CHECK(unfound.contacts.skipped[0].find("ROS_PACKAGE_PATH") != std::string::npos);
  const char* before = std::getenv("ROS_PACKAGE_PATH");
  const std::string saved = before ? before : "";
  ::setenv("ROS_PACKAGE_PATH", ("/nonexistent:" + (folder.path / "ros").string()).c_str(), 1);
  const Model found = load_urdf_file(alone.string(), RootJoint::FreeFlyer);
  if (before) ::setenv("ROS_PACKAGE_PATH", saved.c_str(), 1);
  else ::unsetenv("ROS_PACKAGE_PATH");
  CHECK(only_geometry(found).vertices[0].x == doctest::Approx(-0.2));
}

TEST_CASE("a mesh file that is missing or of another format is skipped and listed, a malformed one is refused naming the file and line") {
  ScratchFolder folder("bad");
  const auto load = [&](const std::string& mesh) {
    return load_urdf_file(folder.write("robot.urdf", one_link_urdf(mesh)).string(), RootJoint::FreeFlyer);
  };
  const Model missing = load("<mesh filename=\"meshes/gone.stl\"/>");
  REQUIRE(missing.contacts.skipped.size() == 1);
  CHECK(missing.contacts.skipped[0].find("body/collision0: mesh meshes/gone.stl skipped: not found (no file " +
                                         (folder.path / "meshes/gone.stl").string() + ")") != std::string::npos);
  CHECK(contact_warning(missing).find("no collision candidate") != std::string::npos);  // it would fall through the ground
  folder.write("shell.ply", "ply\nformat ascii 1.0\nend_header\n");
  const Model ply = load("<mesh filename=\"shell.ply\"/>");
  REQUIRE(ply.contacts.skipped.size() == 1);
  CHECK(ply.contacts.skipped[0].find("shell.ply: a mesh file must be STL, OBJ or COLLADA") != std::string::npos);
  folder.write("shell.dae", "<COLLADA/>");
  CHECK_ERROR_MENTIONS(load("<mesh filename=\"shell.dae\"/>"), "robot.urdf: collision geometry 'body/collision0'",
                       "shell.dae: not a COLLADA file that assimp reads");
  folder.write("nothing.dae", collada_document(1.0, "Z_UP", {1, 1, 1}, ""));  // a box no node instances
  CHECK_ERROR_MENTIONS(load("<mesh filename=\"nothing.dae\"/>"), "nothing.dae: the mesh has no vertex");
  folder.write("bad.obj", "# two good vertices, then a bad one\nv 0 0 0\nv 1 0 0\nv 0 x 1\n");
  CHECK_ERROR_MENTIONS(load("<mesh filename=\"bad.obj\"/>"), "robot.urdf: collision geometry 'body/collision0'", "bad.obj:4: 'x' is not a number");
  folder.write("infinite.obj", "v 0 0 1e999\n");
  CHECK_ERROR_MENTIONS(load("<mesh filename=\"infinite.obj\"/>"), "infinite.obj:1", "out of the range of a double");
  folder.write("empty.obj", "# nothing\n");
  CHECK_ERROR_MENTIONS(load("<mesh filename=\"empty.obj\"/>"), "empty.obj: the mesh has no vertex");
  std::string truncated(84 + 50 * 3 - 7, '\0');  // says 3 triangles, holds less: neither binary nor ASCII
  truncated[80] = 3;
  folder.write("short.stl", truncated);
  CHECK_ERROR_MENTIONS(load("<mesh filename=\"short.stl\"/>"), "short.stl:1", "neither a binary STL");
}

TEST_CASE("a mesh cube dropped on the ground comes to rest on a face, its centre half a side up") {
  ScratchFolder folder("drop");
  folder.write("cube.obj", cube_obj(0.2));
  const Model model = load_urdf_file(folder.write("robot.urdf", one_link_urdf("<mesh filename=\"cube.obj\"/>")).string(), RootJoint::FreeFlyer);
  Batch<double> batch(model, 1, 1);
  batch.q()[2] = 0.3;  // 0.2 m above the ground, level
  for (int k = 0; k < 1000; ++k) batch.step(2e-3);  // 2 s
  REQUIRE(batch.status()[0] == EnvStatus::Ok);
  CHECK(std::abs(batch.q()[2] - 0.1) < 1e-3);  // resting within a millimetre of the face
  for (int k = 0; k < 6; ++k) CHECK(std::abs(batch.v()[k]) < 1e-3);
}
