// The JSON Schema (draft-07) of gradiens-train's configs, generated from the
// same specs the validator uses, for editors to complete and check configs.
#pragma once

#include "train/config/spec.h"

namespace gradiens::train {

// The schema of a config whose top level is `root`; each registry category is
// a definition ("#/definitions/layer") holding a oneOf over its types.
json json_schema(const ObjectSpec& root, const SpecRegistry& registry);

}  // namespace gradiens::train
