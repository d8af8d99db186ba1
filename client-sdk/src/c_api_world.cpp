// The C API's world description section (keel_client.h, "World description"): the
// client's WorldDescription read through plain structs. Nothing here allocates or throws
// (lookups and copies of numbers only); the pointers handed out point into the
// description, which changes only inside the handle's non-const calls.
#include <keel/client/client.h>
#include <keel/client/keel_client.h>

#include <type_traits>

const keel::client::Client* keel_client_cpp(const keel_client* client);

namespace {

using keel::protocol::BodyDescription;

static_assert(sizeof(keel::sim::Vec3) == 3 * sizeof(float), "points are handed out as packed floats");

void fill_body(const BodyDescription& b, keel_body_desc* out) {
  out->id = b.id;
  out->motion = static_cast<uint32_t>(b.motion);
  out->kind = b.kind;
  out->collider_count = static_cast<uint32_t>(b.colliders.size());
  out->complete = b.complete ? 1 : 0;
  for (int i = 0; i < 3; ++i) out->position[i] = b.position[i];
  out->rotation[0] = b.rotation.x;
  out->rotation[1] = b.rotation.y;
  out->rotation[2] = b.rotation.z;
  out->rotation[3] = b.rotation.w;
}

void fill_collider(const keel::sim::ColliderDef& c, keel_collider_desc* out) {
  *out = keel_collider_desc{};
  out->shape = static_cast<uint32_t>(c.shape);
  for (int i = 0; i < 3; ++i) {
    out->position[i] = c.center[i];
    out->half_extents[i] = c.half_extents[i];
  }
  out->rotation[0] = c.rotation.x;
  out->rotation[1] = c.rotation.y;
  out->rotation[2] = c.rotation.z;
  out->rotation[3] = c.rotation.w;
  out->radius = c.radius;
  out->half_height = c.half_height;
  out->point_count = static_cast<uint32_t>(c.points.size());
  out->points = c.points.empty() ? nullptr : &c.points[0].x;
  out->index_count = static_cast<uint32_t>(c.indices.size());
  out->indices = c.indices.empty() ? nullptr : c.indices.data();
  out->rows = c.rows;
  out->columns = c.columns;
  out->cell_size = c.cell_size;
  out->heights = c.heights.empty() ? nullptr : c.heights.data();
  out->is_trigger = c.is_trigger ? 1 : 0;
}

}  // namespace

extern "C" {

uint64_t keel_client_world_version(const keel_client* client) {
  const keel::client::Client* c = keel_client_cpp(client);
  return c == nullptr ? 0 : c->world_version();
}

uint32_t keel_client_body_count(const keel_client* client) {
  const keel::client::Client* c = keel_client_cpp(client);
  return c == nullptr ? 0 : static_cast<uint32_t>(c->world().bodies().size());
}

keel_result keel_client_body_at(const keel_client* client, uint32_t index, keel_body_desc* out) {
  const keel::client::Client* c = keel_client_cpp(client);
  if (c == nullptr || out == nullptr) return KEEL_ERROR_ARGUMENT;
  const auto& bodies = c->world().bodies();
  if (index >= bodies.size()) return KEEL_ERROR_NOT_FOUND;
  fill_body(bodies[index], out);
  return KEEL_OK;
}

keel_result keel_client_find_body(const keel_client* client, uint32_t id, keel_body_desc* out) {
  const keel::client::Client* c = keel_client_cpp(client);
  if (c == nullptr || out == nullptr) return KEEL_ERROR_ARGUMENT;
  const BodyDescription* b = c->world().find(id);
  if (b == nullptr) return KEEL_ERROR_NOT_FOUND;
  fill_body(*b, out);
  return KEEL_OK;
}

keel_result keel_client_body_collider(const keel_client* client, uint32_t id, uint32_t index,
                                      keel_collider_desc* out) {
  const keel::client::Client* c = keel_client_cpp(client);
  if (c == nullptr || out == nullptr) return KEEL_ERROR_ARGUMENT;
  const BodyDescription* b = c->world().find(id);
  if (b == nullptr || index >= b->colliders.size()) return KEEL_ERROR_NOT_FOUND;
  fill_collider(b->colliders[index], out);
  return KEEL_OK;
}

}  // extern "C"
