#include "topology/mesh_file.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>

#include <assimp/Importer.hpp>
#include <assimp/config.h>
#include <assimp/scene.h>

#include "topology/json_parse.hpp"

namespace batchdyn {

namespace {

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Reads text line by line, splitting each into whitespace-separated words.
class Lines {
 public:
  Lines(std::string_view text, const std::string& source) : text_(text), source_(source) {}
  // The next line's words, false at the end.
  bool next(std::vector<std::string_view>& words) {
    if (at_ >= text_.size()) return false;
    ++line_;
    size_t end = text_.find('\n', at_);
    if (end == std::string_view::npos) end = text_.size();
    const std::string_view line = text_.substr(at_, end - at_);
    at_ = end + 1;
    words.clear();
    size_t k = 0;
    while (k < line.size()) {
      while (k < line.size() && std::isspace(static_cast<unsigned char>(line[k]))) ++k;
      const size_t start = k;
      while (k < line.size() && !std::isspace(static_cast<unsigned char>(line[k]))) ++k;
      if (k > start) words.push_back(line.substr(start, k - start));
    }
    return true;
  }
  // Error "<source>:<line>: <what>".
  [[noreturn]] void fail(const std::string& what) const { throw Error(source_ + ":" + std::to_string(line_) + ": " + what); }
  // A finite number, or an error naming the word.
  double number(std::string_view word) const {
    double value = 0.0;
    const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
    if (error == std::errc::result_out_of_range) fail("'" + std::string(word) + "' is out of the range of a double");
    if (error != std::errc() || end != word.data() + word.size()) fail("'" + std::string(word) + "' is not a number");
    if (!std::isfinite(value)) fail("a vertex coordinate is not finite: " + std::string(word));
    return value;
  }

 private:
  std::string_view text_;
  const std::string& source_;
  size_t at_ = 0;
  int line_ = 0;
};

void add_vertex(std::vector<Vec3d>& vertices, const Vec3d& p, const std::string& source) {
  // Every corner of every triangle counts before duplicates are merged: bound the memory first.
  if (vertices.size() >= 3 * kMaxMeshVertices)
    throw Error(source + ": more than " + std::to_string(kMaxMeshVertices) + " vertices: simplify the mesh");
  vertices.push_back(p);
}

// Binary STL: an 80-byte header, the triangle count (uint32, little-endian), then per triangle
// 12 floats (normal, three corners) and a 2-byte attribute.
std::vector<Vec3d> binary_stl(const std::string& bytes, const std::string& source) {
  std::uint32_t triangles = 0;
  std::memcpy(&triangles, bytes.data() + 80, 4);
  std::vector<Vec3d> vertices;
  for (std::uint32_t t = 0; t < triangles; ++t) {
    const char* record = bytes.data() + 84 + 50 * static_cast<size_t>(t);
    for (int corner = 0; corner < 3; ++corner) {
      float xyz[3];
      std::memcpy(xyz, record + 12 + 12 * corner, 12);
      for (const float c : xyz)
        if (!std::isfinite(c)) throw Error(source + ": triangle " + std::to_string(t) + " has a vertex coordinate that is not finite");
      add_vertex(vertices, {xyz[0], xyz[1], xyz[2]}, source);
    }
  }
  return vertices;
}

// ASCII STL: "vertex x y z" lines (the facet / loop structure around them is not needed).
std::vector<Vec3d> ascii_stl(const std::string& bytes, const std::string& source) {
  Lines lines(bytes, source);
  std::vector<std::string_view> words;
  std::vector<Vec3d> vertices;
  bool first = true;
  while (lines.next(words)) {
    if (words.empty()) continue;
    if (first && words[0] != "solid") lines.fail("neither a binary STL (its size does not match its triangle count) nor an ASCII one (no 'solid')");
    first = false;
    if (words[0] != "vertex") continue;
    if (words.size() != 4) lines.fail("a vertex needs 3 coordinates");
    add_vertex(vertices, {lines.number(words[1]), lines.number(words[2]), lines.number(words[3])}, source);
  }
  return vertices;
}

// OBJ: "v x y z [w]" lines (a w other than 1 is a homogeneous coordinate: divided out).
std::vector<Vec3d> obj(const std::string& bytes, const std::string& source) {
  Lines lines(bytes, source);
  std::vector<std::string_view> words;
  std::vector<Vec3d> vertices;
  while (lines.next(words)) {
    if (words.empty() || words[0] != "v") continue;
    if (words.size() != 4 && words.size() != 5 && words.size() != 7) lines.fail("a vertex 'v' needs 3 coordinates (and optionally w, or r g b)");
    Vec3d p{lines.number(words[1]), lines.number(words[2]), lines.number(words[3])};
    if (words.size() == 5) {
      const double w = lines.number(words[4]);
      if (!(std::abs(w) > 0)) lines.fail("a vertex with w = 0 is at infinity");
      p = p * (1.0 / w);
      if (!(std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z))) lines.fail("a vertex coordinate is not finite");
    }
    add_vertex(vertices, p, source);
  }
  return vertices;
}

// COLLADA, through assimp: the vertices of every mesh that a node of the visual scene instances,
// by the product of the node transforms from the scene's root down (<matrix>, <translate>,
// <rotate>, <scale>; the root holds the <unit meter="..."> scale), in double. Assimp keeps
// coordinates in float, as a binary STL does. Its conversion of the <up_axis> to Y up is turned
// off (see mesh_file.hpp).
std::vector<Vec3d> collada(const std::string& bytes, const std::string& source) {
  Assimp::Importer importer;
  importer.SetPropertyBool(AI_CONFIG_IMPORT_COLLADA_IGNORE_UP_DIRECTION, true);
  importer.SetPropertyBool(AI_CONFIG_IMPORT_NO_SKELETON_MESHES, true);  // no stand-in mesh for a scene without one
  const aiScene* scene = importer.ReadFileFromMemory(bytes.data(), bytes.size(), 0, "dae");
  if (scene == nullptr || scene->mRootNode == nullptr)
    throw Error(source + ": not a COLLADA file that assimp reads: " + importer.GetErrorString());
  struct Visit {
    const aiNode* node;
    double parent[3][4];  // the parent's transform to the file's root, rows of a 3 x 4 affine map
  };
  std::vector<Visit> stack(1, Visit{scene->mRootNode, {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}}});
  std::vector<Vec3d> vertices;
  while (!stack.empty()) {
    const Visit visit = stack.back();
    stack.pop_back();
    const aiMatrix4x4& local = visit.node->mTransformation;
    const double L[3][4] = {{local.a1, local.a2, local.a3, local.a4}, {local.b1, local.b2, local.b3, local.b4}, {local.c1, local.c2, local.c3, local.c4}};
    Visit child{nullptr, {}};
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 4; ++c)
        child.parent[r][c] = visit.parent[r][0] * L[0][c] + visit.parent[r][1] * L[1][c] + visit.parent[r][2] * L[2][c] + (c == 3 ? visit.parent[r][3] : 0.0);
    for (unsigned k = 0; k < visit.node->mNumMeshes; ++k) {
      const unsigned index = visit.node->mMeshes[k];
      if (index >= scene->mNumMeshes) throw Error(source + ": a node instances mesh " + std::to_string(index) + " of " + std::to_string(scene->mNumMeshes));
      const aiMesh* mesh = scene->mMeshes[index];
      for (unsigned v = 0; v < mesh->mNumVertices; ++v) {
        const aiVector3D& p = mesh->mVertices[v];
        Vec3d q;
        for (int r = 0; r < 3; ++r) q[r] = child.parent[r][0] * p.x + child.parent[r][1] * p.y + child.parent[r][2] * p.z + child.parent[r][3];
        if (!(std::isfinite(q.x) && std::isfinite(q.y) && std::isfinite(q.z)))
          throw Error(source + ": mesh '" + std::string(mesh->mName.C_Str()) + "' has a vertex that is not finite where its nodes place it");
        add_vertex(vertices, q, source);
      }
    }
    for (unsigned k = 0; k < visit.node->mNumChildren; ++k) {
      child.node = visit.node->mChildren[k];
      stack.push_back(child);
    }
  }
  return vertices;
}

}  // namespace

MeshFormat mesh_format_of(const std::string& path) {
  const size_t dot = path.find_last_of('.');
  const std::string extension = dot == std::string::npos ? "" : lowercase(path.substr(dot));
  if (extension == ".stl") return MeshFormat::Stl;
  if (extension == ".obj") return MeshFormat::Obj;
  if (extension == ".dae") return MeshFormat::Collada;
  throw Error(path + ": a mesh file must be STL, OBJ or COLLADA (its name ends in .stl, .obj or .dae)");
}

std::vector<Vec3d> parse_mesh_vertices(const std::string& bytes, MeshFormat format, const std::string& source) {
  std::vector<Vec3d> vertices;
  if (format == MeshFormat::Obj) {
    vertices = obj(bytes, source);
  } else if (format == MeshFormat::Collada) {
    vertices = collada(bytes, source);
  } else {
    std::uint32_t triangles = 0;
    if (bytes.size() >= 84) std::memcpy(&triangles, bytes.data() + 80, 4);
    const bool binary = bytes.size() >= 84 && bytes.size() == 84 + 50 * static_cast<size_t>(triangles);
    vertices = binary ? binary_stl(bytes, source) : ascii_stl(bytes, source);
  }
  // Merge duplicates (an STL repeats each vertex in every triangle around it).
  const auto less = [](const Vec3d& a, const Vec3d& b) { return a.x != b.x ? a.x < b.x : a.y != b.y ? a.y < b.y : a.z < b.z; };
  const auto same = [](const Vec3d& a, const Vec3d& b) { return a.x == b.x && a.y == b.y && a.z == b.z; };
  std::sort(vertices.begin(), vertices.end(), less);
  vertices.erase(std::unique(vertices.begin(), vertices.end(), same), vertices.end());
  if (vertices.empty()) throw Error(source + ": the mesh has no vertex");
  if (vertices.size() > kMaxMeshVertices)
    throw Error(source + ": " + std::to_string(vertices.size()) + " distinct vertices, more than " + std::to_string(kMaxMeshVertices) + ": simplify the mesh");
  return vertices;
}

}  // namespace batchdyn
