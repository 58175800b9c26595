#include "plan/plan_print.h"

#include <cstdio>
#include <ostream>

namespace tcsync {

std::string json_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          out += b;
        } else {
          out += c;
        }
    }
  }
  return out;
}

static const char* sign(Op op) {
  switch (op) {
    case Op::Add: return "+";
    case Op::Delete: return "-";
    case Op::Replace: return "~";
    case Op::Change: return "~";
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
    case AckResult::Status::NotSent: return "not_sent";
    case AckResult::Status::Ok: return "ok";
    case AckResult::Status::Failed: return "failed";
    case AckResult::Status::Unacked: return "unacked";
  }
  return "?";
}

std::string plan_json(const Plan& plan, const std::vector<AckResult>& results, const std::string& command) {
  std::string out = "{\"format\": \"tcsync-plan\", \"version\": 1, \"command\": \"" + json_escape(command) +
                    "\", \"changes\": " + std::to_string(plan.steps.size()) + ", \"steps\": [";
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    auto& s = plan.steps[i];
    out += i ? ", " : "";
    out += "{\"op\": \"" + std::string(op_name(s.op)) + "\", \"object\": \"" + (s.chain ? "chain" : obj_type_name(s.type)) +
           "\", \"device\": \"" + json_escape(s.device) + "\", \"what\": \"" + json_escape(s.what()) +
           "\", \"reason\": \"" + json_escape(s.reason) + "\"";
    if (s.loc.known()) out += ", \"location\": \"" + json_escape(format_location(s.loc)) + "\"";
    if (i < results.size()) {
      auto& r = results[i];
      out += ", \"status\": \"" + std::string(status_name(r.status)) + "\"";
      if (r.status == AckResult::Status::Failed)
        out += ", \"errno\": " + std::to_string(r.error) + ", \"kernel_message\": \"" + json_escape(r.ext_msg) + "\"";
    }
    out += "}";
  }
  out += "]}\n";
  return out;
}

}  // namespace tcsync
