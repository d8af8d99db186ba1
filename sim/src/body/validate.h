// Body validation that also hands back what it had to build (internal to sim/src).
#pragma once

#include <keel/sim/defs.h>

#include "body/mass.h"

namespace keel::sim {

/// validate_body (defs.h), keeping each hull collider's built hull in `built` (one entry
/// per collider, null for the others) so adding the body does not build it again.
Status validate_body(const BodyDef& def, BuiltHulls* built);

}  // namespace keel::sim
