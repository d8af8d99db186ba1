// The interest grid (keel/protocol/interest.h): a snapshot's bodies bucketed by x, z once,
// so that each client's interest radius is a look-up of a few cells instead of a pass
// over every body of the world.
#include <keel/protocol/interest.h>

#include <algorithm>
#include <cmath>

namespace keel::protocol {

namespace {

// Cells beyond this many per body are not worth their memory: the cell grows instead.
constexpr int64_t kCellsPerBody = 4;
constexpr int64_t kMinCells = 64;
// Cell coordinates are clamped here, far beyond any world (positions are finite floats).
constexpr double kMaxCoordinate = 1e15;

int64_t cell_of(float v, float cell) {
  return static_cast<int64_t>(std::floor(std::clamp(static_cast<double>(v) / cell, -kMaxCoordinate, kMaxCoordinate)));
}

bool finite(const sim::Vec3& p) { return std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z); }

}  // namespace

void InterestGrid::build(std::span<const sim::Vec3> positions, float cell) {
  size_ = positions.size();
  cell_ = std::isfinite(cell) && cell > 0.01f ? cell : 0.01f;
  loose_.clear();
  items_.clear();
  // The extent of the finite positions, in cells; the cell doubles until the grid has at
  // most a few cells per body.
  int64_t lo_x = 0, hi_x = -1, lo_z = 0, hi_z = -1;
  for (;;) {
    bool any = false;
    for (const sim::Vec3& p : positions) {
      if (!finite(p)) continue;
      const int64_t x = cell_of(p.x, cell_), z = cell_of(p.z, cell_);
      if (!any) lo_x = hi_x = x, lo_z = hi_z = z;
      lo_x = std::min(lo_x, x), hi_x = std::max(hi_x, x);
      lo_z = std::min(lo_z, z), hi_z = std::max(hi_z, z);
      any = true;
    }
    const double cells = any ? double(hi_x - lo_x + 1) * double(hi_z - lo_z + 1) : 0.0;
    if (cells <= double(std::max<int64_t>(kMinCells, kCellsPerBody * int64_t(size_)))) break;
    cell_ *= 2.0f;
  }
  min_x_ = lo_x, min_z_ = lo_z;
  nx_ = hi_x - lo_x + 1, nz_ = hi_z - lo_z + 1;
  // Counting sort into cells: count, prefix sums, place.
  start_.assign(size_t(nx_ * nz_) + 1, 0);
  std::vector<uint32_t> slot(positions.size(), 0);
  for (size_t i = 0; i < positions.size(); ++i) {
    if (!finite(positions[i])) {
      loose_.push_back(uint32_t(i));
      continue;
    }
    const int64_t c = (cell_of(positions[i].x, cell_) - min_x_) * nz_ + (cell_of(positions[i].z, cell_) - min_z_);
    slot[i] = uint32_t(c);
    ++start_[size_t(c) + 1];
  }
  for (size_t c = 1; c < start_.size(); ++c) start_[c] += start_[c - 1];
  items_.resize(positions.size() - loose_.size());
  std::vector<uint32_t> fill(start_.begin(), start_.end() - 1);
  for (size_t i = 0; i < positions.size(); ++i) {
    if (finite(positions[i])) items_[fill[slot[i]]++] = uint32_t(i);
  }
}

void InterestGrid::mark_near(const sim::Vec3& centre, float radius, std::span<uint8_t> near) const {
  for (uint32_t i : loose_) {
    if (i < near.size()) near[i] = 1;
  }
  if (!std::isfinite(centre.x) || !std::isfinite(centre.z)) {
    std::fill(near.begin(), near.end(), uint8_t{1});  // no radius can be applied: everything
    return;
  }
  if (nx_ <= 0 || nz_ <= 0) return;
  // A little wider than the radius: the sender's own float distance test decides, and no
  // rounding here may leave out a body it would take.
  const float reach = std::isfinite(radius) ? radius * 1.001f + 0.01f : 1e30f;
  const int64_t x0 = std::max<int64_t>(0, cell_of(centre.x - reach, cell_) - min_x_);
  const int64_t x1 = std::min<int64_t>(nx_ - 1, cell_of(centre.x + reach, cell_) - min_x_);
  const int64_t z0 = std::max<int64_t>(0, cell_of(centre.z - reach, cell_) - min_z_);
  const int64_t z1 = std::min<int64_t>(nz_ - 1, cell_of(centre.z + reach, cell_) - min_z_);
  for (int64_t x = x0; x <= x1; ++x) {
    for (int64_t z = z0; z <= z1; ++z) {
      const size_t c = size_t(x * nz_ + z);
      for (uint32_t k = start_[c]; k < start_[c + 1]; ++k) {
        if (items_[k] < near.size()) near[items_[k]] = 1;
      }
    }
  }
}

}  // namespace keel::protocol
