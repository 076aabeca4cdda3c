// MJCF touch sensors (kernels/contact/touch_sensors.hpp) against MuJoCo on the same file: the
// zone test against MuJoCo's own mju_rayGeom, and the readings of a resting tripod against
// MuJoCo's sensordata and the statics' closed form.
#include <random>

#include "batch/batch.hpp"
#include "helpers.hpp"
#include "mujoco_model.hpp"

namespace batchdyn::test {
namespace {

int mujoco_type(ZoneShape shape) {
  switch (shape) {
    case ZoneShape::Sphere: return mjGEOM_SPHERE;
    case ZoneShape::Capsule: return mjGEOM_CAPSULE;
    case ZoneShape::Ellipsoid: return mjGEOM_ELLIPSOID;
    case ZoneShape::Cylinder: return mjGEOM_CYLINDER;
    case ZoneShape::Box: return mjGEOM_BOX;
  }
  return mjGEOM_SPHERE;
}

// ray_meets_zone on W lanes, each lane its own ray, against one zone.
template <class L>
std::vector<bool> meets_on_lanes(const SensorZone& zone, const std::vector<Vec3d>& points, const std::vector<Vec3d>& rays) {
  using T = lane_scalar<L>;
  constexpr int W = lane_width<L>;
  std::vector<bool> out;
  for (size_t first = 0; first < points.size(); first += W) {
    alignas(64) T px[W], py[W], pz[W], dx[W], dy[W], dz[W], hit[W];
    for (int l = 0; l < W; ++l) {
      const size_t k = std::min(first + static_cast<size_t>(l), points.size() - 1);
      px[l] = points[k].x, py[l] = points[k].y, pz[l] = points[k].z, dx[l] = rays[k].x, dy[l] = rays[k].y, dz[l] = rays[k].z;
    }
    const Vec3<L> p{LaneTraits<L>::load(px), LaneTraits<L>::load(py), LaneTraits<L>::load(pz)};
    const Vec3<L> d{LaneTraits<L>::load(dx), LaneTraits<L>::load(dy), LaneTraits<L>::load(dz)};
    LaneTraits<L>::store(select(ray_meets_zone(zone, p, d), L(T(1)), L(T(0))), hit);
    for (int l = 0; l < W && first + static_cast<size_t>(l) < points.size(); ++l) out.push_back(hit[l] != T(0));
  }
  return out;
}

TEST_CASE("A touch zone meets a ray where MuJoCo's mju_rayGeom does: every site type, rays from inside and outside, on lanes and on one lane") {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), size(0.03, 0.2);
  for (ZoneShape shape : {ZoneShape::Sphere, ZoneShape::Capsule, ZoneShape::Ellipsoid, ZoneShape::Cylinder, ZoneShape::Box}) {
    CAPTURE(static_cast<int>(shape));
    int hits = 0, misses = 0, compared = 0;
    for (int z = 0; z < 20; ++z) {
      SensorZone zone{shape, {size(rng), size(rng), size(rng)}};
      std::vector<Vec3d> points, rays;
      for (int k = 0; k < 50; ++k) {
        points.push_back(Vec3d{unit(rng), unit(rng), unit(rng)} * 0.3);
        Vec3d d{unit(rng), unit(rng), unit(rng)};
        if (k % 2 == 0) d = Vec3d{unit(rng), unit(rng), unit(rng)} * 0.05 - points.back();  // towards the zone's middle
        if (k % 10 == 0) d = Vec3d{0.0, 0.0, k % 20 == 0 ? 1.0 : -1.0};  // along the axis: a = 0 for a cylinder's side
        rays.push_back(d * (1.0 / std::sqrt(dot(d, d))));
      }
      // A ray that grazes the zone may go either way by rounding: compared are the rays whose answer
      // holds with the zone 1e-6 larger and smaller.
      SensorZone larger = zone, smaller = zone;
      for (int j = 0; j < 3; ++j) larger.size[j] *= 1 + 1e-6, smaller.size[j] *= 1 - 1e-6;
      const std::vector<bool> one = meets_on_lanes<double>(zone, points, rays), lanes = meets_on_lanes<SimdLane<double>>(zone, points, rays);
      const std::vector<bool> floats = meets_on_lanes<SimdLane<float>>(zone, points, rays);
      const std::vector<bool> above = meets_on_lanes<double>(larger, points, rays), below = meets_on_lanes<double>(smaller, points, rays);
      for (size_t k = 0; k < points.size(); ++k) {
        CHECK(one[k] == lanes[k]);
        if (above[k] != below[k]) continue;
        const double origin[3] = {0, 0, 0}, frame[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        const double point[3] = {points[k].x, points[k].y, points[k].z}, ray[3] = {rays[k].x, rays[k].y, rays[k].z};
        const double distance = mju_rayGeom(origin, frame, zone.size, point, ray, mujoco_type(shape), nullptr);
        CHECK_MESSAGE(one[k] == (distance >= 0), "point ", points[k].x, " ", points[k].y, " ", points[k].z, " ray ", rays[k].x, " ", rays[k].y,
                      " ", rays[k].z);
        CHECK(floats[k] == one[k]);
        ++compared, one[k] ? ++hits : ++misses;
      }
    }
    CHECK(compared > 990);
    CHECK(hits > 250);
    CHECK(misses > 250);
  }
}

// A plate on three feet: two sphere feet on the plate, the third on a body welded to it, and a
// mass off centre. Sites: a sphere around each foot, one above foot 1 (a contact outside it, its
// ray pointing away), a box under foot 2 (its ray meets it), and one on the plate around foot 3
// (whose geom is on another body).
constexpr const char* kTripod = R"(
<mujoco>
  <compiler angle="radian"/>
  <option timestep="0.002"/>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="plate" pos="0 0 0.0701">
      <freejoint/>
      <geom type="box" size="0.2 0.2 0.01" mass="1" contype="0" conaffinity="0"/>
      <geom type="sphere" size="0.03" pos="0.06 0.04 0.02" mass="2" contype="0" conaffinity="0"/>
      <geom name="foot1" type="sphere" size="0.02" pos="0.15 0 -0.05" mass="0.05"/>
      <geom name="foot2" type="sphere" size="0.02" pos="-0.1 0.12 -0.05" mass="0.05"/>
      <site name="around1" pos="0.15 0 -0.05" size="0.03"/>
      <site name="around2" type="ellipsoid" pos="-0.1 0.12 -0.06" size="0.03 0.04 0.025"/>
      <site name="above1" pos="0.15 0 0.05" size="0.01"/>
      <site name="under2" type="box" pos="-0.1 0.12 -0.2" size="0.01 0.01 0.01"/>
      <site name="plate_around3" type="cylinder" pos="-0.1 -0.12 -0.05" size="0.03 0.03"/>
      <body name="leg3" pos="-0.1 -0.12 -0.05">
        <geom name="foot3" type="sphere" size="0.02" mass="0.05"/>
        <site name="around3" type="capsule" size="0.025 0.01"/>
      </body>
    </body>
  </worldbody>
  <sensor>
    <touch name="t1" site="around1"/> <touch name="t2" site="around2"/> <touch name="t3" site="around3"/>
    <touch name="above1" site="above1"/> <touch name="under2" site="under2"/> <touch name="plate3" site="plate_around3"/>
    <touch name="t1_cut" site="around1" cutoff="1"/>
  </sensor>
</mujoco>)";

// The feet's shares of the weight, from the moment balance about the COM (the feet are level).
std::vector<double> tripod_shares(const mjModel* m) {
  double mass = 0, com[2] = {0, 0};
  for (int b = 1; b < m->nbody; ++b) {
    mass += m->body_mass[b];
    double pos[3];  // body b's COM in the plate's frame (the bodies are welded at qpos0's pose)
    for (int k = 0; k < 2; ++k) pos[k] = m->body_ipos[3 * b + k] + (b > 1 ? m->body_pos[3 * b + k] : 0.0);
    for (int k = 0; k < 2; ++k) com[k] += m->body_mass[b] * pos[k];
  }
  for (double& c : com) c /= mass;
  const double x[3] = {0.15, -0.1, -0.1}, y[3] = {0.0, 0.12, -0.12};
  // Barycentric coordinates of the COM in the feet's triangle.
  const double det = (y[1] - y[2]) * (x[0] - x[2]) + (x[2] - x[1]) * (y[0] - y[2]);
  const double w0 = ((y[1] - y[2]) * (com[0] - x[2]) + (x[2] - x[1]) * (com[1] - y[2])) / det;
  const double w1 = ((y[2] - y[0]) * (com[0] - x[2]) + (x[0] - x[2]) * (com[1] - y[2])) / det;
  const double weight = mass * -m->opt.gravity[2];
  return {w0 * weight, w1 * weight, (1 - w0 - w1) * weight};
}

template <class T>
std::vector<double> tripod_readings(const Model& model, int envs, int env) {
  Batch<T> batch(model, envs);
  for (int e = 0; e < envs; ++e) std::copy(model.reference_configuration.begin(), model.reference_configuration.end(), batch.q() + e * model.nq);
  for (int k = 0; k < 1000; ++k) batch.step(static_cast<T>(model.timestep));
  REQUIRE(batch.failed_count() == 0);
  batch.sense();
  return std::vector<double>(batch.sensordata() + env * batch.sensordata_size(), batch.sensordata() + (env + 1) * batch.sensordata_size());
}

TEST_CASE("Touch sensors on a resting tripod read each foot's share of the weight, as MuJoCo's do and as the statics give") {
  const Model model = load_mjcf_string(kTripod);
  REQUIRE(model.sensors.size() == 7);
  CHECK(std::all_of(model.sensors.begin(), model.sensors.end(), [](const Sensor& s) { return s.kind == SensorKind::Touch; }));
  CHECK(std::none_of(model.load_notes.begin(), model.load_notes.end(), [](const std::string& note) { return note.find("sensor") != std::string::npos; }));
  MujocoModel mj(kTripod, /*is_xml=*/true);
  const std::vector<double> shares = tripod_shares(mj.model);
  mj_resetData(mj.model, mj.data);
  for (int k = 0; k < 1000; ++k) mj_step(mj.model, mj.data);
  const double* theirs = mj.data->sensordata;
  const std::vector<double> ours = tripod_readings<double>(model, 5, 3), floats = tripod_readings<float>(model, 9, 8);
  const double weight = shares[0] + shares[1] + shares[2];
  MESSAGE("shares ", shares[0], " ", shares[1], " ", shares[2], "; MuJoCo ", theirs[0], " ", theirs[1], " ", theirs[2], "; batchdyn ", ours[0],
          " ", ours[1], " ", ours[2]);
  for (int f = 0; f < 3; ++f) {
    CHECK(ours[static_cast<size_t>(f)] == doctest::Approx(shares[static_cast<size_t>(f)]).epsilon(1e-6));
    CHECK(floats[static_cast<size_t>(f)] == doctest::Approx(shares[static_cast<size_t>(f)]).epsilon(1e-4));
    CHECK(std::abs(theirs[f] - shares[static_cast<size_t>(f)]) < 0.01 * weight);  // MuJoCo's soft contacts at rest
  }
  // Outside the zone, the ray pointing away: nothing; the ray meeting the zone below: foot 2's.
  CHECK(ours[3] == 0.0);
  CHECK(theirs[3] == 0.0);
  CHECK(ours[4] == doctest::Approx(shares[1]).epsilon(1e-6));
  CHECK(theirs[4] == doctest::Approx(theirs[1]).epsilon(1e-12));
  // Foot 3's geom is on the welded body leg3: the plate's site around it feels nothing.
  CHECK(ours[5] == 0.0);
  CHECK(theirs[5] == 0.0);
  // The cutoff clamps: 1 N.
  CHECK(ours[6] == 1.0);
  CHECK(theirs[6] == 1.0);
}

TEST_CASE("A touch sensor reads zero before a step, after a reset and with contacts off, and the same in any block") {
  const Model model = load_mjcf_string(kTripod);
  Batch<double> batch(model, 6);
  for (int e = 0; e < 6; ++e) std::copy(model.reference_configuration.begin(), model.reference_configuration.end(), batch.q() + e * model.nq);
  batch.sense();
  CHECK(batch.sensordata()[0] == 0.0);
  for (int k = 0; k < 200; ++k) batch.step(0.002);
  batch.sense();
  const std::vector<double> resting(batch.sensordata(), batch.sensordata() + 6 * batch.sensordata_size());
  CHECK(resting[0] > 0.0);
  // Environment 4 alone in its block, its mates reset (in the air: no contact): the same bits.
  Batch<double> alone(model, 6);
  for (int e = 0; e < 6; ++e) std::copy(model.reference_configuration.begin(), model.reference_configuration.end(), alone.q() + e * model.nq);
  for (int e : {0, 1, 2, 3, 5}) alone.q()[e * model.nq + 2] = 1.0;
  for (int k = 0; k < 200; ++k) alone.step(0.002);
  alone.sense();
  for (int s = 0; s < batch.sensordata_size(); ++s) CHECK(alone.sensordata()[4 * batch.sensordata_size() + s] == resting[static_cast<size_t>(4 * batch.sensordata_size() + s)]);
  const std::vector<int> first = {0};
  batch.reset(first);
  batch.sense();
  for (int s = 0; s < batch.sensordata_size(); ++s) CHECK(batch.sensordata()[s] == 0.0);
  CHECK(batch.sensordata()[batch.sensordata_size()] == resting[static_cast<size_t>(batch.sensordata_size())]);
  batch.set_contacts(false);
  batch.sense();
  CHECK(batch.sensordata()[batch.sensordata_size()] == 0.0);
}

}  // namespace
}  // namespace batchdyn::test
