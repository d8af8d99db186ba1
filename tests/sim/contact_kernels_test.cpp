// The contact kernels' backends must compute the same bits: the AVX kernels against the
// four-lane-pair kernels (SSE2 here), on batches filled with varied values, so every
// branch is taken by some lanes and not by others (speculative and penetrating points,
// friction inside and outside the cone, bouncing and resting points, empty lanes and
// empty point slots, static and kinematic sides).
#include "solver/contact_kernels.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace keel::sim {
namespace {

struct Scene {
  std::vector<SolverBody> bodies;
  std::vector<WideConstraint> batches;
};

float uniform(std::mt19937& rng, float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng); }

void fill(Lanes& l, std::mt19937& rng, float lo, float hi) {
  for (float& f : l.v) f = uniform(rng, lo, hi);
}

void fill(Lanes3& l, std::mt19937& rng, float lo, float hi) {
  fill(l.x, rng, lo, hi);
  fill(l.y, rng, lo, hi);
  fill(l.z, rng, lo, hi);
}

void fill(WideRow& r, std::mt19937& rng, float impulse_lo, float impulse_hi) {
  fill(r.ang_a, rng, -0.6f, 0.6f);
  fill(r.ang_b, rng, -0.6f, 0.6f);
  fill(r.iang_a, rng, -0.3f, 0.3f);
  fill(r.iang_b, rng, -0.3f, 0.3f);
  fill(r.mass, rng, 0.1f, 2.0f);
  fill(r.impulse, rng, impulse_lo, impulse_hi);
}

/// Zeroes lane i of every per-point value from slot j on (a lane with fewer points).
void clear_slots(WideConstraint& c, int lane, int from) {
  for (int j = from; j < c.point_count; ++j) {
    WidePoint& p = c.p[j];
    for (Lanes3* l : {&p.r_a, &p.r_b, &p.normal.ang_a, &p.normal.ang_b, &p.normal.iang_a, &p.normal.iang_b,
                      &p.tangent1.ang_a, &p.tangent1.ang_b, &p.tangent1.iang_a, &p.tangent1.iang_b,
                      &p.tangent2.ang_a, &p.tangent2.ang_b, &p.tangent2.iang_a, &p.tangent2.iang_b}) {
      l->x.v[lane] = l->y.v[lane] = l->z.v[lane] = 0.0f;
    }
    for (Lanes* l : {&p.adjusted_separation, &p.relative_velocity, &p.max_normal_impulse, &p.normal.mass,
                     &p.normal.impulse, &p.tangent1.mass, &p.tangent1.impulse, &p.tangent2.mass,
                     &p.tangent2.impulse}) {
      l->v[lane] = 0.0f;
    }
  }
}

Scene make_scene(uint32_t seed) {
  std::mt19937 rng(seed);
  Scene s;
  const int body_count = 64;
  s.bodies.resize(body_count);
  for (int i = 1; i < body_count; ++i) {
    SolverBody& b = s.bodies[i];
    b.v = Vec3(uniform(rng, -3, 3), uniform(rng, -3, 3), uniform(rng, -3, 3));
    b.w = Vec3(uniform(rng, -2, 2), uniform(rng, -2, 2), uniform(rng, -2, 2));
    b.dp = Vec3(uniform(rng, -0.05f, 0.05f), uniform(rng, -0.05f, 0.05f), uniform(rng, -0.05f, 0.05f));
    b.dq = glm::normalize(Quat(1.0f, uniform(rng, -0.05f, 0.05f), uniform(rng, -0.05f, 0.05f),
                               uniform(rng, -0.05f, 0.05f)));
    b.inv_mass = i % 9 == 0 ? 0.0f : uniform(rng, 0.2f, 2.0f);  // every ninth kinematic
  }
  // Each batch: eight manifolds over distinct dynamic bodies (a colour); some lanes empty
  // and some sides the static stand-in or a kinematic body.
  for (int batch = 0; batch < 24; ++batch) {
    WideConstraint c;
    std::memset(&c, 0, sizeof c);
    std::vector<uint32_t> free_bodies;
    for (uint32_t i = 1; i < uint32_t(body_count); ++i) free_bodies.push_back(i);
    std::shuffle(free_bodies.begin(), free_bodies.end(), rng);
    c.point_count = 1 + batch % 4;
    c.bounces = batch % 3 == 0;
    fill(c.normal, rng, -1, 1);
    fill(c.t1, rng, -1, 1);
    fill(c.t2, rng, -1, 1);
    fill(c.inv_mass_a, rng, 0.2f, 2.0f);
    fill(c.inv_mass_b, rng, 0.2f, 2.0f);
    fill(c.friction, rng, 0.1f, 0.9f);
    fill(c.restitution, rng, -0.2f, 0.8f);  // some lanes do not bounce
    fill(c.bias_rate, rng, 5.0f, 40.0f);
    fill(c.mass_scale, rng, 0.5f, 1.0f);
    fill(c.impulse_scale, rng, 0.0f, 0.5f);
    for (int j = 0; j < c.point_count; ++j) {
      WidePoint& p = c.p[j];
      fill(p.r_a, rng, -0.5f, 0.5f);
      fill(p.r_b, rng, -0.5f, 0.5f);
      fill(p.adjusted_separation, rng, -0.05f, 0.03f);  // penetrating and speculative
      fill(p.relative_velocity, rng, -4.0f, 1.0f);      // fast and slow approaches
      fill(p.max_normal_impulse, rng, 0.0f, 1.0f);
      fill(p.normal, rng, 0.0f, 2.0f);
      fill(p.tangent1, rng, -1.5f, 1.5f);  // some outside the friction cone
      fill(p.tangent2, rng, -1.5f, 1.5f);
    }
    for (int lane = 0; lane < kLanes; ++lane) {
      c.body_a[lane] = free_bodies[2 * lane];
      c.body_b[lane] = lane % 5 == 0 ? 0 : free_bodies[2 * lane + 1];
      c.contact[lane] = uint32_t(lane);
      if (lane % 5 == 0) c.inv_mass_b.v[lane] = 0.0f;
      if (batch % 4 == 3 && lane >= 6) {  // empty lanes: everything zero
        c.body_a[lane] = c.body_b[lane] = 0;
        c.contact[lane] = kNoContact;
        c.normal.x.v[lane] = c.normal.y.v[lane] = c.normal.z.v[lane] = 0.0f;
        c.inv_mass_a.v[lane] = c.inv_mass_b.v[lane] = 0.0f;
        clear_slots(c, lane, 0);
      } else {
        clear_slots(c, lane, 1 + (lane + batch) % c.point_count);  // fewer points than the batch
      }
    }
    s.batches.push_back(c);
  }
  return s;
}

/// A tick's passes over every batch, as the solver runs them.
void run(const ContactKernels& k, Scene& s) {
  const KernelConstants constants{240.0f, 3.0f, 1.0f};
  const uint32_t n = uint32_t(s.batches.size());
  for (int substep = 0; substep < 2; ++substep) {
    k.warm_start(s.bodies.data(), s.batches.data(), 0, n);
    k.solve(s.bodies.data(), s.batches.data(), 0, n, constants, true);
    k.solve(s.bodies.data(), s.batches.data(), 0, n, constants, false);
  }
  k.restitution(s.bodies.data(), s.batches.data(), 0, n, constants);
}

TEST(ContactKernels, AvxAndFourLanePairsComputeTheSameBits) {
  const ContactKernels* avx = avx_kernels();
  if (!avx) GTEST_SKIP() << "no AVX kernels on this build or CPU";
  for (uint32_t seed : {1u, 2u, 3u}) {
    Scene pair = make_scene(seed);
    Scene wide = make_scene(seed);
    const Scene before = make_scene(seed);
    run(pair_kernels(), pair);
    run(*avx, wide);
    ASSERT_NE(std::memcmp(pair.bodies.data(), before.bodies.data(), pair.bodies.size() * sizeof(SolverBody)), 0)
        << "the passes moved nothing";
    for (size_t i = 0; i < pair.bodies.size(); ++i) {
      EXPECT_EQ(std::memcmp(&pair.bodies[i], &wide.bodies[i], sizeof(SolverBody)), 0) << "seed " << seed << " body " << i;
    }
    for (size_t i = 0; i < pair.batches.size(); ++i) {
      EXPECT_EQ(std::memcmp(&pair.batches[i], &wide.batches[i], sizeof(WideConstraint)), 0)
          << "seed " << seed << " batch " << i;
    }
  }
}

TEST(ContactKernels, KinematicAndStaticSidesAreNeverWritten) {
  Scene s = make_scene(7);
  const Scene before = make_scene(7);
  run(contact_kernels(), s);
  for (size_t i = 0; i < s.bodies.size(); ++i) {
    if (s.bodies[i].inv_mass != 0.0f) continue;
    EXPECT_EQ(std::memcmp(&s.bodies[i], &before.bodies[i], sizeof(SolverBody)), 0) << "body " << i;
  }
}

}  // namespace
}  // namespace keel::sim
