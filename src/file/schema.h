// The JSON Schema of the YAML format, generated from the kind tables (never
// kept by hand): `tcsync schema` prints it; schemas/tcsync.schema.json is
// its committed copy, checked equal by a test.
#pragma once
#include <string>

namespace tcsync {
std::string yaml_json_schema();
}
