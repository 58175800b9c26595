#include "file/row_table.h"

#include <charconv>
#include <optional>
#include <set>

namespace tcsync {

namespace {

std::vector<std::string_view> split_path(std::string_view p) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t dot = p.find('.', start);
    out.push_back(p.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return out;
    start = dot + 1;
  }
}

bool is_null(const Node& n) {
  return n.is_scalar() && n.plain && (n.scalar.empty() || n.scalar == "~" || n.scalar == "null");
}

std::optional<size_t> position(std::string_view s) {
  size_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// Walks `path` from `root`; with `make`, adds the missing map keys (inner
// ones as mappings, the last as the placeholder scalar). Null after
// reporting why the path does not fit the template.
Node* walk(Node& root, const std::string& path, SourceLoc at, bool make, Diagnostics& d) {
  Node* cur = &root;
  auto segs = split_path(path);
  for (size_t i = 0; i < segs.size(); ++i) {
    std::string_view seg = segs[i];
    bool last = i + 1 == segs.size();
    if (seg.empty()) {
      d.error(at, "column '" + path + "' has an empty part");
      return nullptr;
    }
    // `flower:` with nothing under it in the template: a mapping to fill.
    if (make && is_null(*cur) && cur != &root) {
      cur->type = Node::Type::Map;
      cur->scalar.clear();
    }
    if (cur->is_seq()) {
      auto pos = position(seg);
      if (!pos || *pos >= cur->seq.size()) {
        d.error(at, "column '" + path + "': '" + std::string(seg) + "' is not a position in the template's list of " +
                        std::to_string(cur->seq.size()));
        return nullptr;
      }
      cur = &cur->seq[*pos];
    } else if (cur->is_map()) {
      Node* next = nullptr;
      for (auto& e : cur->map)
        if (e.first.scalar == seg) next = &e.second;
      if (!next) {
        if (!make) return nullptr;
        NodeEntry e;
        e.first.scalar = std::string(seg);
        e.first.loc = at;
        e.second.type = last ? Node::Type::Scalar : Node::Type::Map;
        e.second.loc = at;
        cur->map.push_back(std::move(e));
        next = &cur->map.back().second;
      } else if (make && last) {
        d.error(next->loc, "column '" + path + "' is also given in the template (a column is set by each row)");
        return nullptr;
      }
      cur = next;
    } else {
      d.error(cur->loc, "column '" + path + "': the template has a single value at '" + std::string(seg) +
                            "', not a mapping or list");
      return nullptr;
    }
  }
  if (!cur->is_scalar()) {
    d.error(cur->loc, "column '" + path + "' names a mapping or list of the template; a column is one value");
    return nullptr;
  }
  return cur;
}

}  // namespace

bool RowTable::init(const Node& tmpl, const Node& columns, Diagnostics& d) {
  size_t errors = d.error_count();
  if (!tmpl.is_map()) {
    d.error(tmpl.loc, "'template' must be a mapping (one entry, without the fields the columns give)");
    return false;
  }
  if (!columns.is_seq() || columns.seq.empty()) {
    d.error(columns.loc, "'columns' must be a list of field paths such as [handle, flower.dst_ip]");
    return false;
  }
  proto_ = tmpl;
  std::set<std::string> seen;
  std::vector<std::pair<std::string, SourceLoc>> paths;
  for (auto& c : columns.seq) {
    if (!c.is_scalar() || c.scalar.empty()) {
      d.error(c.loc, "a column is a field path such as handle or flower.dst_ip");
      continue;
    }
    if (!seen.insert(c.scalar).second) {
      d.error(c.loc, "column '" + c.scalar + "' is listed twice");
      continue;
    }
    // One column inside another (`flower` and `flower.dst_ip`) cannot both be single values.
    for (auto& [p, _] : paths)
      if (c.scalar.rfind(p + ".", 0) == 0 || p.rfind(c.scalar + ".", 0) == 0)
        d.error(c.loc, "column '" + c.scalar + "' overlaps column '" + p + "'");
    paths.emplace_back(c.scalar, c.loc);
  }
  if (d.error_count() != errors) return false;
  // Placeholders first (adding keys may move the template's vectors), then
  // the places, which stay put: fill() only overwrites scalars.
  for (auto& [p, at] : paths)
    if (!walk(proto_, p, at, true, d)) return false;
  leaves_.clear();
  paths_.clear();
  rows_ = 0;
  for (auto& [p, at] : paths) {
    leaves_.push_back(walk(proto_, p, at, false, d));
    paths_.emplace_back();
    for (auto seg : split_path(p)) paths_.back().emplace_back(seg);
  }
  return true;
}

const Node* RowTable::fill(const Node& row, Diagnostics& d) {
  values_.clear();
  offsets_.clear();
  plain_.clear();
  if (row.is_scalar()) {
    std::string_view s = row.scalar;
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
      size_t start = i;
      while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
      if (i > start) {
        values_.push_back(s.substr(start, i - start));
        // A quoted row starts one column before its text.
        offsets_.push_back(static_cast<uint32_t>(start + (row.plain ? 0 : 1)));
        plain_.push_back(true);
      }
    }
  } else if (row.is_seq()) {
    for (auto& v : row.seq) {
      if (!v.is_scalar()) {
        d.error(v.loc, "a row's values are single values, not " + std::string(v.type_name()));
        return nullptr;
      }
      values_.push_back(v.scalar);
      offsets_.push_back(v.loc.line == row.loc.line && v.loc.col >= row.loc.col ? v.loc.col - row.loc.col : 0);
      plain_.push_back(v.plain);
    }
  } else {
    // `- 2:a: 10.0.0.1` is a mapping to YAML (": " makes a key).
    d.error(row.loc,
            "a row is one line of values (or a list of them), not a mapping; quote a row whose value ends in ':'");
    return nullptr;
  }
  if (values_.size() != leaves_.size()) {
    d.error(row.loc, "the row has " + std::to_string(values_.size()) + " value" + (values_.size() == 1 ? "" : "s") +
                         ", the columns name " + std::to_string(leaves_.size()));
    return nullptr;
  }
  proto_.loc = row.loc;
  for (size_t i = 0; i < leaves_.size(); ++i) {
    Node& leaf = *leaves_[i];
    leaf.scalar.assign(values_[i]);
    leaf.plain = plain_[i];
    leaf.loc = row.loc;
    leaf.loc.col += offsets_[i];
  }
  ++rows_;
  return &proto_;
}

}  // namespace tcsync
