#include "model/kind.h"

#include <algorithm>
#include <iterator>

#include "base/handle.h"
#include "base/units.h"
#include "yaml/yaml_out.h"
#include "yaml/yaml_reader.h"

namespace tcsync {

const char* obj_type_name(ObjType t) {
  switch (t) {
    case ObjType::Qdisc:
      return "qdisc";
    case ObjType::Class:
      return "class";
    case ObjType::Filter:
      return "filter";
    case ObjType::Action:
      return "action";
  }
  return "?";
}

// ---- Options ---------------------------------------------------------------

const Opt* Options::opt(uint16_t f) const {
  auto it = std::lower_bound(items_.begin(), items_.end(), f, [](const Opt& o, uint16_t k) { return o.field < k; });
  return it != items_.end() && it->field == f ? &*it : nullptr;
}
const Value* Options::get(uint16_t f) const {
  auto* o = opt(f);
  return o ? &o->value : nullptr;
}
std::optional<uint64_t> Options::num(uint16_t f) const {
  auto* v = get(f);
  if (v && std::holds_alternative<uint64_t>(*v)) return std::get<uint64_t>(*v);
  return std::nullopt;
}
const std::string* Options::str(uint16_t f) const {
  auto* v = get(f);
  return v && std::holds_alternative<std::string>(*v) ? &std::get<std::string>(*v) : nullptr;
}
const Words* Options::words(uint16_t f) const {
  auto* v = get(f);
  return v && std::holds_alternative<Words>(*v) ? &std::get<Words>(*v) : nullptr;
}
void Options::set(uint16_t f, Value v, SourceLoc loc) {
  auto it = std::lower_bound(items_.begin(), items_.end(), f, [](const Opt& o, uint16_t k) { return o.field < k; });
  if (it != items_.end() && it->field == f) {
    it->value = std::move(v);
    it->loc = loc;
  } else {
    items_.insert(it, Opt{f, loc, std::move(v)});
  }
}
void Options::take_exact(Options& from) {
  items_.clear();
  items_.reserve(from.items_.size());
  std::move(from.items_.begin(), from.items_.end(), std::back_inserter(items_));
  from.items_.clear();
}
void Options::erase(uint16_t f) {
  std::erase_if(items_, [f](const Opt& o) { return o.field == f; });
}
bool Options::operator==(const Options& o) const {
  if (items_.size() != o.items_.size()) return false;
  for (size_t i = 0; i < items_.size(); ++i)
    if (items_[i].field != o.items_[i].field || items_[i].value != o.items_[i].value) return false;
  return true;
}

// ---- Registry ----------------------------------------------------------------

// Length and first letter first, inline: most names differ there, and
// these run for every key of every rule (a memcmp call each otherwise).
static bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && (a.empty() || (a[0] == b[0] && a == b));
}

int KindOps::field_index(std::string_view key) const {
  for (size_t i = 0; i < fields.size(); ++i)
    if (same_name(fields[i].key, key)) return static_cast<int>(i);
  return -1;
}

std::vector<std::string_view> KindOps::keys() const {
  std::vector<std::string_view> out;
  for (auto& f : fields) out.push_back(f.key);
  return out;
}

// ---- Field values --------------------------------------------------------------

static const char* type_word(FieldType t) {
  switch (t) {
    case FieldType::Uint:
      return "a number";
    case FieldType::Rate:
      return "a rate such as 100mbit";
    case FieldType::Size:
      return "a size such as 1500b or 15kb";
    case FieldType::Time:
      return "a time such as 10ms";
    case FieldType::Handle:
      return "a handle such as 1:10";
    case FieldType::Bool:
      return "true or false";
    case FieldType::Enum:
      return "one of the listed words";
    case FieldType::Device:
      return "an interface name";
    case FieldType::Custom:
      return "a structured value";
  }
  return "a value";
}

bool parse_field(const Field& f, const Node& n, Value& out, Diagnostics& diags) {
  if (f.type == FieldType::Custom) return f.custom->parse(n, out, diags);
  if (!n.is_scalar()) {
    diags.error(n.loc, "'" + std::string(f.key) + "' must be " + type_word(f.type) + ", not " + n.type_name());
    return false;
  }
  const std::string& s = n.scalar;
  std::optional<uint64_t> v;
  // Set by a parser for a well-formed number past 64 bits: refused as past
  // the field's maximum (below), not as "must be a number".
  bool too_large = false;
  switch (f.type) {
    case FieldType::Uint:
      v = parse_uint(s, &too_large);
      if ((v && *v > field_max(f)) || too_large) {
        diags.error(n.loc,
                    "'" + std::string(f.key) + "' is " + s + ", more than its maximum " + std::to_string(field_max(f)));
        return false;
      }
      break;
    case FieldType::Rate:
      v = parse_rate(s, &too_large);
      break;
    case FieldType::Size:
      v = parse_size(s, &too_large);
      break;
    case FieldType::Time:
      v = parse_time_us(s, &too_large);
      break;
    case FieldType::Handle:
      v = parse_handle(s);
      break;
    case FieldType::Bool:
      if (s == "true")
        v = 1;
      else if (s == "false")
        v = 0;
      break;
    case FieldType::Enum:
      for (auto& e : f.names)
        if (e.name == s) v = e.value;
      // An enum with a max takes a number too: a value the kernel keeps
      // that no word names (a link layer of 5) is dumped as its number.
      if (!v && f.max != UINT64_MAX && !s.empty() && s.find_first_not_of("0123456789") == std::string::npos &&
          s.size() < 20 && std::stoull(s) <= f.max)
        v = std::stoull(s);
      if (!v) {
        std::vector<std::string_view> cands;
        std::string list;
        for (auto& e : f.names) cands.push_back(e.name), list += (list.empty() ? "" : ", ") + std::string(e.name);
        std::string msg = "'" + std::string(f.key) + "' cannot be '" + s + "': expected one of " + list;
        if (auto dym = did_you_mean(s, cands); !dym.empty()) msg += " (did you mean '" + std::string(dym) + "'?)";
        diags.error(n.loc, msg);
        return false;
      }
      break;
    case FieldType::Device:
      if (s.empty() || s.size() >= 16 || s.find_first_of("/ \t:") != std::string::npos) {
        diags.error(n.loc, "'" + s + "' is not a valid interface name");
        return false;
      }
      out = s;
      return true;
    case FieldType::Custom:
      break;
  }
  // A size, time or rate the kernel cannot hold is never sent cut to its
  // wire (a bfifo limit of 4294967296 bytes held as 0).
  bool number = f.type == FieldType::Rate || f.type == FieldType::Size || f.type == FieldType::Time;
  if (number && (too_large || (v && *v > field_max(f)))) {
    diags.error(n.loc, past_max_message(f, s));
    return false;
  }
  if (!v) {
    diags.error(n.loc, "'" + std::string(f.key) + "' must be " + type_word(f.type) + ", not '" + s + "'");
    return false;
  }
  out = *v;
  return true;
}

std::string past_max_message(const Field& f, std::string_view written) {
  uint64_t max = field_max(f);
  std::string most;
  switch (f.type) {
    case FieldType::Size:
      most = std::to_string(max) + "b";
      break;
    case FieldType::Time:
      most = std::to_string(max) + "us";
      break;
    case FieldType::Rate:
      most = std::to_string(max) + "bps";
      break;
    default:
      most = std::to_string(max);
      break;
  }
  // The width that bounds it, where the maximum is a whole width's.
  const char* width = max == 0xFF         ? " (u8)"
                      : max == 0xFFFF     ? " (u16)"
                      : max == 0xFFFFFFFF ? " (u32)"
                      : max == UINT64_MAX ? " (u64)"
                      : max == INT64_MAX  ? " (s64)"
                                          : "";
  return "'" + std::string(f.key) + "' is " + std::string(written) + ", past the most the kernel holds: " + most +
         width;
}

static std::string enum_name(const Field& f, uint64_t v) {
  for (auto& e : f.names)
    if (e.value == v) return std::string(e.name);
  return std::to_string(v);
}

std::string describe_field(const Field& f, const Value& v) {
  if (f.type == FieldType::Custom) return f.custom->describe(v);
  if (auto* s = std::get_if<std::string>(&v)) return *s;
  if (!std::holds_alternative<uint64_t>(v)) return "?";
  uint64_t n = std::get<uint64_t>(v);
  switch (f.type) {
    case FieldType::Rate:
      return format_rate(n);
    case FieldType::Size:
      return format_size(n);
    case FieldType::Time:
      return format_time_us(n);
    case FieldType::Handle:
      return format_handle(static_cast<uint32_t>(n));
    case FieldType::Bool:
      return n ? "true" : "false";
    case FieldType::Enum:
      return enum_name(f, n);
    default:
      return std::to_string(n);
  }
}

void emit_field(const Field& f, const Value& v, YamlOut& out) {
  if (f.type == FieldType::Custom) return f.custom->emit(v, out);
  if (f.type == FieldType::Uint && std::holds_alternative<uint64_t>(v)) return out.num(std::get<uint64_t>(v));
  if (f.type == FieldType::Bool && std::holds_alternative<uint64_t>(v)) return out.boolean(std::get<uint64_t>(v));
  out.str(describe_field(f, v));
}

std::string field_schema(const Field& f) {
  std::string d = "\"description\": \"" + std::string(f.doc) + "\"";
  switch (f.type) {
    case FieldType::Uint:
      return "{" + d + ", \"anyOf\": [{\"type\": \"integer\", \"minimum\": 0" +
             (f.max != UINT64_MAX ? ", \"maximum\": " + std::to_string(f.max) : std::string()) +
             "}, {\"type\": \"string\", \"pattern\": \"^(0[xX][0-9a-fA-F]+|[0-9]+)$\"}]}";
    case FieldType::Rate:
      return "{" + d +
             ", \"anyOf\": [{\"type\": \"integer\", \"minimum\": 0}, {\"type\": \"string\", \"pattern\": "
             "\"^[0-9.]+([kmgt]i?(bit|bps)|bit|bps)?$\"}]}";
    case FieldType::Size:
      return "{" + d +
             ", \"anyOf\": [{\"type\": \"integer\", \"minimum\": 0}, {\"type\": \"string\", \"pattern\": "
             "\"^[0-9.]+([kmg]b?|b|[kmg]bit)?$\"}]}";
    case FieldType::Time:
      return "{" + d +
             ", \"anyOf\": [{\"type\": \"integer\", \"minimum\": 0}, {\"type\": \"string\", \"pattern\": "
             "\"^[0-9.]+(s|secs?|ms|msecs?|us|usecs?)?$\"}]}";
    case FieldType::Handle:
      return "{" + d + ", \"type\": \"string\", \"pattern\": \"^(root|none|[0-9a-fA-F]{0,4}:[0-9a-fA-F]{0,4})$\"}";
    case FieldType::Bool:
      return "{" + d + ", \"type\": \"boolean\"}";
    case FieldType::Enum: {
      std::string e;
      for (auto& n : f.names) e += (e.empty() ? "\"" : ", \"") + std::string(n.name) + "\"";
      if (f.max != UINT64_MAX)
        return "{" + d + ", \"anyOf\": [{\"enum\": [" + e +
               "]}, {\"type\": \"integer\", \"minimum\": 0, \"maximum\": " + std::to_string(f.max) + "}]}";
      return "{" + d + ", \"enum\": [" + e + "]}";
    }
    case FieldType::Device:
      return "{" + d + ", \"type\": \"string\", \"minLength\": 1, \"maxLength\": 15}";
    case FieldType::Custom:
      return std::string(f.custom->json_schema);
  }
  return "{}";
}

void read_options(const KindOps& k, std::span<const uint8_t> payload, const KindCtx& ctx, Options& o) {
  k.decode(payload, ctx, o);
  if (k.drop_defaults) k.drop_defaults(o);
}

void normalize_options(const KindOps& k, Options& o, const KindCtx& ctx, Diagnostics& diags, SourceLoc loc) {
  if (k.drop_defaults) k.drop_defaults(o);
  if (k.normalize) k.normalize(o, ctx, diags, loc);
  // What a kind computes from other fields (tbf's limit from latency) is
  // held to the same maximum as a declared value, at the place it came from.
  for (const Opt& opt : o.items()) {
    const Field& f = k.fields[opt.field];
    bool number = f.type == FieldType::Uint || f.type == FieldType::Size || f.type == FieldType::Time ||
                  f.type == FieldType::Rate;
    auto* v = std::get_if<uint64_t>(&opt.value);
    if (number && v && *v > field_max(f)) diags.error(opt.loc, past_max_message(f, describe_field(f, opt.value)));
  }
}

const Value* or_default(const Field& f, const Value* v, Value& scratch) {
  if (v) return v;
  if (f.def) {
    scratch = *f.def;
    return &scratch;
  }
  return nullptr;
}

const Value* effective_value(const Field& f, const Options& o, uint16_t idx, Value& scratch) {
  return or_default(f, o.get(idx), scratch);
}

}  // namespace tcsync
