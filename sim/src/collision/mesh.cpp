// Triangle meshes and heightfields: validation, building (normals, active edges, BVH),
// triangle lookup and ray tests. See mesh.h for the conventions.
#include "collision/mesh.h"

#include "collision/geometry.h"
#include "state/state_io.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace keel::sim {

namespace {

Vec3 raw_normal(const Vec3& a, const Vec3& b, const Vec3& c) { return glm::cross(b - a, c - a); }

Vec3 unit_normal(const Vec3& a, const Vec3& b, const Vec3& c) {
  return np::normalize_or(raw_normal(a, b, c), Vec3(0.0f, 1.0f, 0.0f));
}

bool bounded(float v) { return std::isfinite(v) && std::fabs(v) <= kMaxGeometryCoordinate; }

std::string fail_at(const char* field, size_t index, const std::string& what) {
  std::ostringstream os;
  os << field << "[" << index << "]" << what;
  return os.str();
}

AABB triangle_box(const Vec3& a, const Vec3& b, const Vec3& c) {
  return AABB{glm::min(a, glm::min(b, c)), glm::max(a, glm::max(b, c))};
}

}  // namespace

bool edge_is_active(const Vec3& normal, const Vec3& a, const Vec3& /*b*/, bool has_neighbour, const Vec3& far_corner,
                    const Vec3& neighbour_normal) {
  if (!has_neighbour) return true;
  if (glm::dot(normal, neighbour_normal) > kActiveEdgeCos) return false;  // flat seam
  // Convex crease: the neighbour's far corner lies behind this triangle's plane.
  return glm::dot(far_corner - a, normal) < 0.0f;
}

// ---------------------------------------------------------------------------------------
// Validation

Status check_mesh_data(const std::vector<Vec3>& points, const std::vector<uint32_t>& indices) {
  if (points.size() > kMaxMeshVertices) {
    return Error{"points has " + std::to_string(points.size()) + " vertices (at most " +
                 std::to_string(kMaxMeshVertices) + ")"};
  }
  if (indices.empty() || indices.size() % 3 != 0) {
    return Error{"indices must hold three vertex indices per triangle (got " + std::to_string(indices.size()) + ")"};
  }
  if (indices.size() / 3 > kMaxMeshTriangles) {
    return Error{"indices has " + std::to_string(indices.size() / 3) + " triangles (at most " +
                 std::to_string(kMaxMeshTriangles) + ")"};
  }
  for (size_t i = 0; i < points.size(); ++i) {
    const char* axis[3] = {"].x", "].y", "].z"};
    for (int k = 0; k < 3; ++k) {
      if (!bounded(points[i][k])) {
        std::ostringstream os;
        os << "points[" << i << axis[k] << " must be finite and within +-" << kMaxGeometryCoordinate << " (got "
           << points[i][k] << ")";
        return Error{os.str()};
      }
    }
  }
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] >= points.size()) {
      return Error{fail_at("indices", i, " = " + std::to_string(indices[i]) + " is out of range (" +
                                             std::to_string(points.size()) + " points)")};
    }
  }
  for (size_t t = 0; t < indices.size() / 3; ++t) {
    const Vec3 n = raw_normal(points[indices[3 * t]], points[indices[3 * t + 1]], points[indices[3 * t + 2]]);
    if (!(glm::dot(n, n) > kMinTriangleArea2 * kMinTriangleArea2)) {
      return Error{"triangle " + std::to_string(t) + " (indices[" + std::to_string(3 * t) + ".." +
                   std::to_string(3 * t + 2) + "]) is degenerate (zero area)"};
    }
  }
  return Status::ok();
}

Status check_heightfield_data(uint32_t rows, uint32_t columns, float cell_size, const std::vector<float>& heights) {
  if (rows < 2 || columns < 2) {
    return Error{"rows and columns must both be >= 2 (got " + std::to_string(rows) + " x " +
                 std::to_string(columns) + ")"};
  }
  if (uint64_t(rows) * columns > kMaxHeightfieldSamples) {
    return Error{"rows x columns = " + std::to_string(uint64_t(rows) * columns) + " samples (at most " +
                 std::to_string(kMaxHeightfieldSamples) + ")"};
  }
  if (!(cell_size > 0.0f) || !bounded(cell_size) || !bounded(cell_size * float(std::max(rows, columns)))) {
    std::ostringstream os;
    os << "cell_size must be > 0 and keep the grid within +-" << kMaxGeometryCoordinate << " (got " << cell_size
       << ")";
    return Error{os.str()};
  }
  if (heights.size() != size_t(rows) * columns) {
    return Error{"heights has " + std::to_string(heights.size()) + " values, rows x columns needs " +
                 std::to_string(size_t(rows) * columns)};
  }
  for (size_t i = 0; i < heights.size(); ++i) {
    if (!bounded(heights[i])) {
      std::ostringstream os;
      os << "heights[" << i << "] must be finite and within +-" << kMaxGeometryCoordinate << " (got " << heights[i]
         << ")";
      return Error{os.str()};
    }
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------------------
// Triangle meshes

namespace {

// Vertices at bit-identical positions are welded for adjacency, so a mesh exported with
// split vertices (per-face normals or UVs) still knows its internal edges.
std::vector<uint32_t> weld_ids(const std::vector<Vec3>& v) {
  std::vector<uint32_t> order(v.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  auto less = [&](uint32_t a, uint32_t b) {
    for (int k = 0; k < 3; ++k) {
      if (v[a][k] != v[b][k]) return v[a][k] < v[b][k];
    }
    return a < b;  // total order: ties by index
  };
  std::sort(order.begin(), order.end(), less);
  std::vector<uint32_t> id(v.size());
  for (size_t i = 0; i < order.size(); ++i) {
    id[order[i]] = (i > 0 && v[order[i]] == v[order[i - 1]]) ? id[order[i - 1]] : order[i];
  }
  return id;
}

struct EdgeRef {
  uint64_t key;  // welded (low, high) vertex ids
  uint32_t tri;
  uint32_t edge;
  bool operator<(const EdgeRef& o) const {
    if (key != o.key) return key < o.key;
    if (tri != o.tri) return tri < o.tri;
    return edge < o.edge;
  }
};

// Active-edge bits: an edge shared by exactly two triangles is tested against its
// neighbour; any other edge (boundary, or non-manifold) stays active.
void compute_active_edges(TriangleMesh& m) {
  const std::vector<uint32_t> weld = weld_ids(m.vertices);
  const uint32_t nt = m.triangle_count();
  std::vector<EdgeRef> edges;
  edges.reserve(size_t(nt) * 3);
  for (uint32_t t = 0; t < nt; ++t) {
    for (uint32_t k = 0; k < 3; ++k) {
      uint32_t a = weld[m.indices[3 * t + k]], b = weld[m.indices[3 * t + (k + 1) % 3]];
      if (a > b) std::swap(a, b);
      edges.push_back(EdgeRef{(uint64_t(a) << 32) | b, t, k});
    }
  }
  std::sort(edges.begin(), edges.end());
  m.active.assign(nt, 7);
  m.flat.assign(nt, 0);
  for (size_t i = 0; i < edges.size();) {
    size_t j = i;
    while (j < edges.size() && edges[j].key == edges[i].key) ++j;
    if (j - i == 2) {
      for (int s = 0; s < 2; ++s) {
        const EdgeRef& me = edges[i + s];
        const EdgeRef& other = edges[i + 1 - s];
        const Vec3& a = m.vertices[m.indices[3 * me.tri + me.edge]];
        const Vec3& b = m.vertices[m.indices[3 * me.tri + (me.edge + 1) % 3]];
        const Vec3& far = m.vertices[m.indices[3 * other.tri + (other.edge + 2) % 3]];
        if (!edge_is_active(m.normals[me.tri], a, b, true, far, m.normals[other.tri])) {
          m.active[me.tri] &= uint8_t(~(1u << me.edge));
        }
        if (glm::dot(m.normals[me.tri], m.normals[other.tri]) > kActiveEdgeCos) {
          m.flat[me.tri] |= uint8_t(1u << me.edge);
        }
      }
    }
    i = j;
  }
}

constexpr uint32_t kLeafSize = 4;

struct BuildItem {
  Vec3 centroid;
  AABB box;
};

uint32_t build_node(TriangleMesh& m, const std::vector<BuildItem>& items, uint32_t node, uint32_t first,
                    uint32_t count) {
  AABB box = items[m.order[first]].box;
  AABB cbox{items[m.order[first]].centroid, items[m.order[first]].centroid};
  for (uint32_t i = first + 1; i < first + count; ++i) {
    box = merge(box, items[m.order[i]].box);
    cbox = merge(cbox, AABB{items[m.order[i]].centroid, items[m.order[i]].centroid});
  }
  m.nodes[node].box = box;
  if (count <= kLeafSize) {
    m.nodes[node].first = first;
    m.nodes[node].count = count;
    return node;
  }
  const Vec3 ext = cbox.upper - cbox.lower;
  const int axis = ext.x >= ext.y && ext.x >= ext.z ? 0 : (ext.y >= ext.z ? 1 : 2);
  // Total order (centroid, index): the tree is the same on every machine.
  std::sort(m.order.begin() + first, m.order.begin() + first + count, [&](uint32_t a, uint32_t b) {
    const float ca = items[a].centroid[axis], cb = items[b].centroid[axis];
    return ca != cb ? ca < cb : a < b;
  });
  const uint32_t left = uint32_t(m.nodes.size());
  m.nodes.emplace_back();
  m.nodes.emplace_back();
  m.nodes[node].first = left;
  m.nodes[node].count = 0;
  const uint32_t half = count / 2;
  build_node(m, items, left, first, half);
  build_node(m, items, left + 1, first + half, count - half);
  return node;
}

template <class T>
uint64_t digest_of(const std::vector<T>& a, const std::vector<uint32_t>& b) {
  std::vector<uint8_t> bytes;
  StateWriter w(bytes);
  for (const T& v : a) {
    if constexpr (std::is_same_v<T, Vec3>) {
      w.vec3(v);
    } else {
      w.f32(v);
    }
  }
  for (uint32_t v : b) w.u32(v);
  w.finish();
  return XXH3_64bits(bytes.data(), bytes.size());
}

}  // namespace

std::shared_ptr<const TriangleMesh> build_mesh(const std::vector<Vec3>& points, const std::vector<uint32_t>& indices) {
  auto m = std::make_shared<TriangleMesh>();
  m->vertices = points;
  m->indices = indices;
  const uint32_t nt = m->triangle_count();
  m->normals.resize(nt);
  std::vector<BuildItem> items(nt);
  for (uint32_t t = 0; t < nt; ++t) {
    const Vec3& a = points[indices[3 * t]];
    const Vec3& b = points[indices[3 * t + 1]];
    const Vec3& c = points[indices[3 * t + 2]];
    m->normals[t] = unit_normal(a, b, c);
    items[t].box = triangle_box(a, b, c);
    items[t].centroid = (a + b + c) * (1.0f / 3.0f);
  }
  compute_active_edges(*m);
  m->order.resize(nt);
  for (uint32_t t = 0; t < nt; ++t) m->order[t] = t;
  m->nodes.reserve(size_t(nt) * 2);
  m->nodes.emplace_back();
  if (nt > 0) build_node(*m, items, 0, 0, nt);
  m->bounds = m->nodes[0].box;
  m->digest = digest_of(m->vertices, m->indices);
  return m;
}

Triangle TriangleMesh::triangle(uint32_t t) const {
  Triangle tri;
  for (int k = 0; k < 3; ++k) tri.v[k] = vertices[indices[3 * t + k]];
  tri.normal = normals[t];
  tri.active_edges = active[t];
  tri.flat_edges = flat[t];
  tri.index = t;
  return tri;
}

void TriangleMesh::query(const AABB& box, std::vector<uint32_t>& out) const {
  out.clear();
  if (nodes.empty() || indices.empty()) return;
  uint32_t stack[64];
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const Node& n = nodes[stack[--top]];
    if (!overlaps(n.box, box)) continue;
    if (n.count > 0) {
      for (uint32_t i = n.first; i < n.first + n.count; ++i) {
        const uint32_t t = order[i];
        const AABB tb = triangle_box(vertices[indices[3 * t]], vertices[indices[3 * t + 1]], vertices[indices[3 * t + 2]]);
        if (overlaps(tb, box)) out.push_back(t);
      }
    } else if (top + 2 <= 64) {  // depth is ~log2(n / 4) < 20: never full
      stack[top++] = n.first;
      stack[top++] = n.first + 1;
    }
  }
  std::sort(out.begin(), out.end());  // the contact order is keyed on triangle index
}

// ---------------------------------------------------------------------------------------
// Heightfields

std::shared_ptr<const HeightField> build_heightfield(uint32_t rows, uint32_t columns, float cell_size,
                                                     const std::vector<float>& heights) {
  auto h = std::make_shared<HeightField>();
  h->rows = rows;
  h->columns = columns;
  h->cell_size = cell_size;
  h->heights = heights;
  h->min_height = *std::min_element(heights.begin(), heights.end());
  h->max_height = *std::max_element(heights.begin(), heights.end());
  h->digest = digest_of(h->heights, std::vector<uint32_t>{rows, columns});
  return h;
}

AABB HeightField::bounds() const {
  return AABB{Vec3(0.0f, min_height, 0.0f),
              Vec3(float(columns - 1) * cell_size, max_height, float(rows - 1) * cell_size)};
}

namespace {

// Corner (row, column) offsets of the two triangles of a cell, counter-clockwise seen
// from above: k = 0 is (r,c) (r+1,c+1) (r,c+1); k = 1 is (r,c) (r+1,c) (r+1,c+1).
constexpr int kCorner[2][3][2] = {{{0, 0}, {1, 1}, {0, 1}}, {{0, 0}, {1, 0}, {1, 1}}};
// Per triangle edge: the neighbouring cell offset and its far corner, or none (dr = 9).
struct NeighbourRef {
  int dr, dc;       // neighbour cell offset
  int fr, fc;       // far corner, relative to this cell's (r, c)
};
constexpr NeighbourRef kNeighbour[2][3] = {
    {{0, 0, 1, 0}, {0, 1, 1, 2}, {-1, 0, -1, 0}},
    {{0, -1, 0, -1}, {1, 0, 2, 1}, {0, 0, 0, 1}},
};

}  // namespace

Triangle HeightField::triangle(uint32_t t) const {
  const uint32_t cell = t / 2, k = t % 2;
  const int r = int(cell / (columns - 1)), c = int(cell % (columns - 1));
  Triangle tri;
  tri.index = t;
  for (int i = 0; i < 3; ++i) tri.v[i] = vertex(uint32_t(r + kCorner[k][i][0]), uint32_t(c + kCorner[k][i][1]));
  tri.normal = unit_normal(tri.v[0], tri.v[1], tri.v[2]);
  tri.active_edges = 0;
  for (int e = 0; e < 3; ++e) {
    const NeighbourRef& nb = kNeighbour[k][e];
    const int nr = r + nb.dr, nc = c + nb.dc;
    const bool inside = nr >= 0 && nc >= 0 && nr < int(rows) - 1 && nc < int(columns) - 1;
    Vec3 far(0.0f), nn(0.0f, 1.0f, 0.0f);
    if (inside) {
      far = vertex(uint32_t(r + nb.fr), uint32_t(c + nb.fc));
      nn = unit_normal(tri.v[e], far, tri.v[(e + 1) % 3]);  // the neighbour, wound the same way
    }
    if (edge_is_active(tri.normal, tri.v[e], tri.v[(e + 1) % 3], inside, far, nn)) {
      tri.active_edges |= uint8_t(1u << e);
    }
    if (inside && glm::dot(tri.normal, nn) > kActiveEdgeCos) tri.flat_edges |= uint8_t(1u << e);
  }
  return tri;
}

void HeightField::query(const AABB& box, std::vector<uint32_t>& out) const {
  out.clear();
  const float inv = 1.0f / cell_size;
  const float x0 = box.lower.x * inv, x1 = box.upper.x * inv;
  const float z0 = box.lower.z * inv, z1 = box.upper.z * inv;
  const float last_c = float(columns - 1), last_r = float(rows - 1);
  if (x1 < 0.0f || z1 < 0.0f || x0 > last_c || z0 > last_r) return;
  if (box.upper.y < min_height || box.lower.y > max_height) return;
  const uint32_t c0 = uint32_t(std::max(0.0f, std::floor(x0)));
  const uint32_t r0 = uint32_t(std::max(0.0f, std::floor(z0)));
  const uint32_t c1 = std::min(columns - 2, uint32_t(std::min(last_c, std::floor(x1))));
  const uint32_t r1 = std::min(rows - 2, uint32_t(std::min(last_r, std::floor(z1))));
  for (uint32_t r = r0; r <= r1; ++r) {
    for (uint32_t c = c0; c <= c1; ++c) {
      const float a = height(r, c), b = height(r, c + 1), d = height(r + 1, c), e = height(r + 1, c + 1);
      const float lo = std::min(std::min(a, b), std::min(d, e)), hi = std::max(std::max(a, b), std::max(d, e));
      if (box.upper.y < lo || box.lower.y > hi) continue;
      const uint32_t cell = r * (columns - 1) + c;
      out.push_back(2 * cell);
      out.push_back(2 * cell + 1);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Rays

float ray_triangle(const Triangle& tri, const Vec3& origin, const Vec3& delta, float max_t) {
  const float denom = glm::dot(delta, tri.normal);
  if (!(denom < 0.0f)) return -1.0f;  // parallel, or meets the back face
  const float t = glm::dot(tri.v[0] - origin, tri.normal) / denom;
  if (!(t >= 0.0f) || t > max_t) return -1.0f;
  const Vec3 p = origin + delta * t;
  for (int k = 0; k < 3; ++k) {
    const Vec3 e = tri.v[(k + 1) % 3] - tri.v[k];
    if (glm::dot(glm::cross(e, p - tri.v[k]), tri.normal) < 0.0f) return -1.0f;
  }
  return t;
}

}  // namespace keel::sim
