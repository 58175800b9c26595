// What `validate` and `import` print with --format json: one JSON object on
// one line (schemas/report.schema.json, versioned like the plan), with every
// diagnostic as {"file", "line", "column", "severity", "message"}.
#pragma once
#include <string>

#include "base/diag.h"
#include "yaml/yaml_out.h"

namespace tcsync {

// A JSON array of the diagnostics, in the order they were reported.
void write_diagnostics_json(const Diagnostics& d, YamlOut& y);
// {"format": "tcsync-validate", "version": 1, "valid": ..., "errors": N, "diagnostics": [...]}
std::string validate_report_json(bool valid, const Diagnostics& d);
// {"format": "tcsync-import", "version": 1, "ok": ..., "errors": N, "diagnostics": [...], "yaml": "..."}
// (yaml: the imported file, only when ok).
std::string import_report_json(bool ok, const std::string& yaml, const Diagnostics& d);

}  // namespace tcsync
