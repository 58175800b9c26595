#include "plan/plan_print.h"

#include <cstdio>
#include <ostream>

#include "file/report_json.h"
#include "yaml/yaml_out.h"

namespace tcsync {

static const char* sign(Op op) {
  switch (op) {
    case Op::Add:
      return "+";
    case Op::Delete:
      return "-";
    case Op::Replace:
      return "~";
    case Op::Change:
      return "~";
  }
  return "?";
}

static void append_step(std::string& out, const Step& s, const PrintOptions& o) {
  const char* col = s.op == Op::Add ? "\033[32m" : s.op == Op::Delete ? "\033[31m" : "\033[33m";
  if (o.color) out += col;
  out += sign(s.op);
  out += ' ';
  if (!s.device.empty()) {  // (the action table belongs to no device)
    out += s.device;
    out += ": ";
  }
  s.append_what(out);
  if (o.color) out += "\033[0m";
  if (!s.reason.empty() && s.reason != "new") {
    out += "  (";
    out += s.reason;
    out += ')';
  }
  if (s.loc.known()) {
    out += "  [";
    append_location(out, s.loc);
    out += ']';
  }
  out += '\n';
}

std::string plan_text(const Plan& plan, const PrintOptions& o) {
  std::string out;
  for (auto& s : plan.steps) append_step(out, s, o);
  return out;
}

void write_plan_text(const Plan& plan, const PrintOptions& o, std::ostream& os) {
  // In pieces of about 64 KiB: a million-line plan never exists as one string.
  std::string buf;
  buf.reserve(72 * 1024);
  for (auto& s : plan.steps) {
    append_step(buf, s, o);
    if (buf.size() >= 64 * 1024) {
      os.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  }
  os.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

static const char* status_name(AckResult::Status s) {
  switch (s) {
    case AckResult::Status::NotSent:
      return "not_sent";
    case AckResult::Status::Ok:
      return "ok";
    case AckResult::Status::Failed:
      return "failed";
    case AckResult::Status::Unacked:
      return "unacked";
  }
  return "?";
}

// Laid out as it always was (", " and ": ", one line): consumers pin it.
std::string plan_json(const Plan& plan, const std::vector<AckResult>& results, const std::string& command,
                      const RunResult* run) {
  std::string out;
  YamlOut y(out, YamlOut::Style::json);
  y.map_begin();
  y.key("format");
  y.str("tcsync-plan");
  y.key("version");
  y.num(1);
  y.key("command");
  y.str(command);
  y.key("changes");
  y.num(plan.steps.size());
  y.key("steps");
  y.seq_begin();
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    auto& s = plan.steps[i];
    y.map_begin();
    y.key("op");
    y.str(op_name(s.op));
    y.key("object");
    y.str(s.chain ? "chain" : obj_type_name(s.type));
    y.key("device");
    y.str(s.device);
    y.key("what");
    y.str(s.what());
    y.key("reason");
    y.str(s.reason);
    if (s.loc.known()) {
      y.key("location");
      y.str(format_location(s.loc));
    }
    if (i < results.size()) {
      auto& r = results[i];
      y.key("status");
      y.str(status_name(r.status));
      if (r.status == AckResult::Status::Failed) {
        y.key("errno");
        y.number(std::to_string(r.error));
        y.key("kernel_message");
        y.str(r.ext_msg);
      }
    }
    y.map_end();
  }
  y.seq_end();
  // Scoped devices' foreign objects (plan.h Plan::outside): not changes.
  if (!plan.outside.empty()) {
    y.key("outside_scope");
    y.seq_begin();
    for (auto& line : plan.outside) y.str(line);
    y.seq_end();
  }
  if (run) {
    y.key("result");
    y.str(run->result);
    if (run->rolled_back) {
      y.key("rolled_back");
      y.boolean(*run->rolled_back);
    }
    if (run->diags && !run->diags->all().empty()) {
      y.key("diagnostics");
      write_diagnostics_json(*run->diags, y);
    }
  }
  y.map_end();
  out += '\n';
  return out;
}

}  // namespace tcsync
