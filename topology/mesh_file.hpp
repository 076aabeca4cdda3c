// Mesh files for collision geometry: the vertices of an STL (binary or ASCII), Wavefront OBJ or
// COLLADA file, which a loader turns into a convex hull (CollisionShape::ConvexHull,
// topology/contacts.hpp: decimate_hull), as MuJoCo collides a mesh through its hull. Only the
// vertices matter for that: faces, normals, texture coordinates and materials are not read.
#pragma once

#include <string>
#include <vector>

#include "topology/model.hpp"

namespace batchdyn {

enum class MeshFormat { Stl, Obj, Collada };

// The most distinct vertices a mesh file may hold (a bound on what a loader reads into memory;
// an 80 MB binary STL has ~1.6 M triangles and far fewer distinct vertices).
inline constexpr size_t kMaxMeshVertices = 4'000'000;

// The format a mesh file name says (.stl, .obj or .dae, any case), or Error naming `path`.
MeshFormat mesh_format_of(const std::string& path);

// The distinct vertices of mesh file contents `bytes` in `format`, sorted.
//   STL: binary when its size is 84 + 50 x the triangle count it states, ASCII ("solid ...
//     vertex x y z ...") otherwise; in the file's units and frame.
//   OBJ: its "v x y z [w]" lines; in the file's units and frame.
//   COLLADA (read by assimp): every mesh its visual scene instances, placed by the scene's node
//     transforms and scaled to metres by its <unit meter="...">. Its <up_axis> is not applied:
//     a robot's mesh is drawn in its link's frame as its coordinates say, as rviz and DART read
//     it (assimp's default would turn a Z_UP file to Y up).
// Throws Error naming `source` (and the line, in a text file) for malformed or truncated
// contents, a value that is not finite, no vertex, or more than kMaxMeshVertices.
std::vector<Vec3d> parse_mesh_vertices(const std::string& bytes, MeshFormat format, const std::string& source);

}  // namespace batchdyn
