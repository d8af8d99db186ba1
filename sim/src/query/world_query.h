// Queries against a WorldImpl: the public functions in keel/sim/query.h and the character
// controller both call these (internal to sim/src).
#pragma once

#include <keel/sim/query.h>

#include "collision/narrowphase.h"
#include "query/convex.h"

#include <optional>
#include <vector>

namespace keel::sim {

struct WorldImpl;
struct Shape;
struct Body;

/// What a scene query walks and gathers with, kept by its world between queries (queries
/// on one world never run at the same time, nor beside its step), so a query allocates
/// only its results. A ray or cast walk and the box walk a visitor may run inside it
/// each have their stack.
struct QueryScratch {
  std::vector<int32_t> box_stack;
  std::vector<int32_t> ray_stack;
  std::vector<uint32_t> tris;  // a concave collider's triangles under the query
};

/// The convex core of a query shape at a pose.
query::Core query_core(const QueryShape& shape, const Transform& pose);

/// Half size of the core's bounding box (radius included).
Vec3 core_half_size(const query::Core& c);

/// Whether a collider passes a filter.
bool passes(const WorldImpl& w, uint32_t shape_slot, const QueryFilter& filter);

/// Closest hit of `core` moved from where it is along unit `dir` for `max_distance`.
/// With `all`, every hit goes to `all_hits` (unsorted) as well.
std::optional<QueryHit> cast_core(const WorldImpl& w, const query::Core& core, const Vec3& dir,
                                  float max_distance, const QueryFilter& filter,
                                  std::vector<QueryHit>* all_hits = nullptr);

/// Bodies one of whose colliders overlaps `core`, sorted by user id, each once.
std::vector<OverlapHit> overlap_core(const WorldImpl& w, const query::Core& core, const QueryFilter& filter);

/// The total order of hits: distance, then body user id, then collider index.
bool hit_before(const QueryHit& a, const QueryHit& b);

}  // namespace keel::sim
