#include "file/report_json.h"

namespace tcsync {

void write_diagnostics_json(const Diagnostics& d, YamlOut& y) {
  static const char* names[] = {"error", "warning", "note"};
  y.seq_begin();
  for (auto& x : d.all()) {
    y.map_begin();
    // Unknown parts are null, not "" or 0: a consumer tests one thing.
    y.key("file");
    if (x.loc.file)
      y.str(SourceFiles::instance().path(x.loc.file));
    else
      y.null();
    y.key("line");
    if (x.loc.line)
      y.num(x.loc.line);
    else
      y.null();
    y.key("column");
    if (x.loc.line)
      y.num(x.loc.col ? x.loc.col : 1);  // as the text form prints it
    else
      y.null();
    y.key("severity");
    y.str(names[static_cast<int>(x.severity)]);
    y.key("message");
    y.str(x.message);
    y.map_end();
  }
  y.seq_end();
}

static void head(YamlOut& y, const char* format, const char* ok_key, bool ok, const Diagnostics& d) {
  y.map_begin();
  y.key("format");
  y.str(format);
  y.key("version");
  y.num(1);
  y.key(ok_key);
  y.boolean(ok);
  y.key("errors");
  y.num(d.error_count());
  y.key("diagnostics");
  write_diagnostics_json(d, y);
}

std::string validate_report_json(bool valid, const Diagnostics& d) {
  std::string out;
  YamlOut y(out, YamlOut::Style::json);
  head(y, "tcsync-validate", "valid", valid, d);
  y.map_end();
  return out + "\n";
}

std::string import_report_json(bool ok, const std::string& yaml, const Diagnostics& d) {
  std::string out;
  YamlOut y(out, YamlOut::Style::json);
  head(y, "tcsync-import", "ok", ok, d);
  if (ok) {
    y.key("yaml");
    y.str(yaml);
  }
  y.map_end();
  return out + "\n";
}

}  // namespace tcsync
