#include "file/schema.h"

#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "kinds/registry.h"
#include "model/kind.h"

// The schema is one nlohmann::ordered_json value (keys keep the order they
// are written in, so the printed file reads top-down like the format) and is
// printed by its dump(2). The fragments the kind tables give as JSON text
// (field_schema, CustomType::json_schema) are parsed into it: a fragment
// that is not JSON stops `tcsync schema` instead of printing a broken file.
namespace tcsync {
namespace {

using Json = nlohmann::ordered_json;

// A JSON array. Braces alone would not do: nlohmann reads {"a", "b"} (two
// strings) as the object {"a": "b"}.
Json array(Json::initializer_list_t items) {
  return Json::array(items);
}

Json def_ref(std::string_view def) {
  return {{"$ref", "#/$defs/" + std::string(def)}};
}

// `"type": [...]` of a value that may be either.
Json types(std::string_view a, std::string_view b) {
  return {{"type", array({a, b})}};
}

Json required_key(std::string_view key) {
  return {{"required", array({key})}};
}

const Json kRaw = def_ref("raw");
const Json kHandle = {{"type", "string"}, {"pattern", "^(root|none|[0-9a-fA-F]{0,4}:[0-9a-fA-F]{0,4})$"}};
const Json kChainIndex = {{"type", "integer"}, {"minimum", 0}, {"maximum", 268435455}};
const Json kPrefs = {{"type", array({"string", "integer"})}, {"pattern", "^[0-9]+(-[0-9]+)?$"}};

// A qdisc's size table (model/size_table.h), in tc-stab(8)'s words.
Json stab() {
  Json number = types("integer", "string");
  return {{"description",
           "Size table (tc-stab(8)): how the qdisc counts packet sizes. cell_log, size_log and cell_align only for a "
           "spec tc would not make from the other words."},
          {"type", "object"},
          {"additionalProperties", false},
          {"properties",
           {{"linklayer", {{"enum", array({"ethernet", "atm", "adsl", "unaware"})}}},
            {"overhead", number},
            {"mpu", number},
            {"mtu", number},
            {"tsize", number},
            {"cell_log", {{"type", "integer"}}},
            {"size_log", {{"type", "integer"}}},
            {"cell_align", number}}}};
}

// Whether two docs begin with the same two words (the type's doc then says
// what the field's would, at more length).
bool same_start(std::string_view a, std::string_view b) {
  auto two_words = [](std::string_view s) {
    size_t sp = s.find(' ');
    sp = sp == std::string_view::npos ? sp : s.find(' ', sp + 1);
    std::string out(s.substr(0, sp));
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  return two_words(a) == two_words(b);
}

// How many fields of all kinds share `t`.
int custom_type_uses(const CustomType* t) {
  static const std::map<const CustomType*, int> uses = [] {
    std::map<const CustomType*, int> m;
    auto count = [&m](const KindOps& k) {
      for (auto& f : k.fields)
        if (f.type == FieldType::Custom) ++m[f.custom];
    };
    for (auto* k : all_kinds()) count(*k);
    return m;
  }();
  auto it = uses.find(t);
  return it == uses.end() ? 0 : it->second;
}

// Adds the fields a file may set (not the read-only ones) to properties. A
// fragment that is not JSON is a bug in a kind table: named, not printed.
void add_fields(Json& properties, const KindOps& k) {
  for (auto& f : k.fields) {
    if (f.flags & kReadOnly) continue;
    try {
      Json field = Json::parse(field_schema(f));
      // A custom type used by one field only (red's probability) says all
      // in its own doc; one shared by many (a verdict, a percent) says the
      // type, and the field's doc first says what it is in this kind.
      if (f.type == FieldType::Custom && !f.doc.empty() && custom_type_uses(f.custom) > 1) {
        std::string type_doc = field.value("description", std::string());
        if (!same_start(f.doc, type_doc)) field["description"] = std::string(f.doc) + " " + type_doc;
      }
      properties[std::string(f.key)] = std::move(field);
    } catch (const Json::parse_error& e) {
      throw std::logic_error("schema of " + std::string(k.name) + "'s field " + std::string(f.key) +
                             " is not JSON: " + e.what());
    }
  }
}

// The fields, then raw_options: the bytes of TCA_OPTIONS no table reads.
void add_options(Json& properties, const KindOps& k) {
  add_fields(properties, k);
  properties["raw_options"] = kRaw;
}

// `first` (if any), then the kind's required fields.
Json required(const KindOps& k, std::string_view first) {
  Json out = Json::array();
  if (!first.empty()) out.push_back(first);
  for (auto& f : k.fields)
    if (f.flags & kRequired) out.push_back(f.key);
  return out;
}

Json qdisc_kind(const KindOps& k) {
  Json properties = {
      {"kind", {{"const", k.name}}}, {"parent", kHandle}, {"handle", kHandle}, {"stab", stab()}, {"raw_attrs", kRaw}};
  add_options(properties, k);
  return {{"description", k.doc},
          {"type", "object"},
          {"additionalProperties", false},
          {"required", required(k, "kind")},
          {"properties", properties}};
}

Json class_kind(const KindOps& k) {
  Json properties = {{"kind", {{"const", k.name}}}, {"classid", kHandle}, {"parent", kHandle}, {"raw_attrs", kRaw}};
  add_options(properties, k);
  return {{"description", k.doc},
          {"type", "object"},
          {"additionalProperties", false},
          {"required", required(k, "classid")},
          {"properties", properties}};
}

// A filter's or an action's options, under the kind's name (`u32: {...}`).
Json options_object(const KindOps& k, Json type) {
  Json properties = Json::object();
  add_options(properties, k);
  return {{"description", k.doc},
          {"type", std::move(type)},
          {"additionalProperties", false},
          {"required", required(k, "")},
          {"properties", properties}};
}

Json device() {
  return {{"type", "object"},
          {"additionalProperties", false},
          {"properties",
           {{"qdiscs", {{"type", array({"array", "null"})}, {"items", def_ref("qdisc")}}},
            {"classes", {{"type", array({"array", "null"})}, {"items", def_ref("class")}}},
            {"filters",
             {{"type", array({"array", "null"})},
              {"items", {{"allOf", array({def_ref("filter"), required_key("parent")})}}}}},
            {"chains",
             {{"type", array({"array", "null"})},
              {"items", {{"allOf", array({def_ref("chain"), required_key("parent")})}}}}},
            {"atomic",
             {{"type", "boolean"},
              {"description", "Change the filter lists at ingress/egress by one atomic switch (apply --atomic)."}}},
            {"own",
             {{"type", array({"array", "null"})},
              {"items", def_ref("own")},
              {"description",
               "The regions of the device this file owns; objects outside them belong to others and are never "
               "changed. Absent: the whole device."}}}}}};
}

Json own() {
  return {{"description",
           "A region a file owns: a qdisc and everything below it, or the filters at a parent (in a chain, at a "
           "range of prefs)."},
          {"oneOf",
           array({{{"type", "object"},
                   {"additionalProperties", false},
                   {"required", array({"qdisc"})},
                   {"properties", {{"qdisc", {{"type", "string"}, {"pattern", "^[0-9a-fA-F]{1,4}:$"}}}}}},
                  {{"type", "object"},
                   {"additionalProperties", false},
                   {"required", array({"parent"})},
                   {"properties", {{"parent", {{"type", "string"}}}, {"chain", kChainIndex}, {"prefs", kPrefs}}}}})}};
}

Json block_own() {
  return {{"description", "A region of a shared block a file owns: its filters in a chain, at a range of prefs."},
          {"type", "object"},
          {"additionalProperties", false},
          {"properties", {{"chain", kChainIndex}, {"prefs", kPrefs}}}};
}

Json block() {
  Json not_parent = {{"not", required_key("parent")}};
  return {
      {"type", "object"},
      {"additionalProperties", false},
      {"properties",
       {{"filters",
         {{"type", array({"array", "null"})}, {"items", {{"allOf", array({def_ref("filter"), not_parent})}}}}},
        {"chains", {{"type", array({"array", "null"})}, {"items", {{"allOf", array({def_ref("chain"), not_parent})}}}}},
        {"own",
         {{"type", array({"array", "null"})},
          {"items", def_ref("block_own")},
          {"description", "The regions of the block this file owns. Absent: the whole block."}}}}}};
}

// template_kinds: the filter kinds a chain's template may be of.
Json chain(Json template_kinds) {
  return {{"description",
           "A filter chain created explicitly (tc chain add), with an optional template that every filter in it "
           "must fit."},
          {"type", "object"},
          {"additionalProperties", false},
          {"required", array({"chain"})},
          {"properties",
           {{"parent", {{"type", "string"}}},
            {"chain", kChainIndex},
            {"protocol", {{"type", "string"}}},
            {"raw_attrs", kRaw},
            {"template",
             {{"type", "object"},
              {"additionalProperties", false},
              {"minProperties", 1},
              {"maxProperties", 1},
              {"properties", std::move(template_kinds)}}}}}};
}

// The keys every filter has; each kind's options follow under its name.
Json filter_common() {
  const std::string tables = kind_names_where(has_shared_tables, " or ");
  Json pref = {{"type", "integer"}, {"minimum", 1}, {"maximum", 65535}};
  return {{"empty",
           {{"type", "string"},
            {"pattern", "^[a-z0-9_]+$"},
            {"description",
             "An empty list of this classifier kind at the pref (no rule: what the kernel keeps after tc filter add "
             "... " +
                 tables + " with no options). A " + tables + " one may give its root table as its handle (801:)."}}},
          {"root_table",
           {{"type", "string"},
            {"pattern", "^[89a-fA-F][0-9a-fA-F]{2}:$"},
            {"description",
             "On a " + tables +
                 " hash table entry (handle 2: with divisor): the kernel's root table of the list it is in "
                 "(801:), for a list that holds only hash tables and their rules (any other list shows its root in a "
                 "rule's handle, 801::5, or as an empty list's handle)."}}},
          {"name", {{"type", "string"}}},
          {"parent", {{"type", "string"}}},
          {"chain", {{"type", "integer"}, {"minimum", 0}}},
          {"pref", pref},
          {"prio", pref},
          {"protocol", {{"type", "string"}}},
          {"handle", types("string", "integer")},
          {"classid", def_ref("handle")},
          {"flowid", def_ref("handle")},
          {"police", def_ref("filter_police")},
          {"actions", {{"type", "array"}, {"maxItems", 32}, {"items", def_ref("action")}}},
          {"raw_attrs", kRaw}};
}

Json filter_police() {
  Json properties = Json::object();
  add_fields(properties, kActionPolice);
  return {{"description",
           "The filter's own police (tc's 'police' among a filter's words, before actions existed): the police "
           "action's fields. Not with actions: the kernel keeps the police and drops them."},
          {"type", "object"},
          {"additionalProperties", false},
          {"properties", properties}};
}

// The keys every action has; each kind's options follow under its name.
Json action_common() {
  return {{"index", {{"type", "integer"}, {"minimum", 1}}},
          {"cookie", {{"type", "string"}, {"pattern", "^([0-9a-fA-F]{2}){1,16}$"}}},
          {"percpu_stats", {{"type", "boolean"}}},
          {"raw_attrs", kRaw},
          {"ref",
           {{"type", "string"},
            {"pattern", "^[a-z_]+/[1-9][0-9]*$"},
            {"description", "An action of the table (top-level actions), as KIND/INDEX."}}}};
}

}  // namespace

std::string yaml_json_schema() {
  Json qdiscs = Json::array(), classes = Json::array();
  Json filter_kinds = Json::array(), police_kinds = Json::array(), template_kinds = Json::object();
  Json action_kinds = Json::array();
  Json filter_props = filter_common(), action_props = action_common();
  for (auto* k : all_kinds()) {
    std::string name(k->name);
    switch (k->obj) {
      case ObjType::Qdisc:
        qdiscs.push_back(qdisc_kind(*k));
        break;
      case ObjType::Class:
        classes.push_back(class_kind(*k));
        break;
      case ObjType::Filter:
        filter_kinds.push_back(required_key(name));
        // The kinds with a police of their own (FilterOps::old_police_attr).
        if (filter_ops(k).old_police_attr) police_kinds.push_back(required_key(name));
        // The kinds a chain template may be of (FilterOps::template_protocol_attr).
        if (filter_ops(k).template_protocol_attr) template_kinds[name] = def_ref("filter/properties/" + name);
        filter_props[name] = options_object(*k, array({"object", "null"}));
        break;
      case ObjType::Action:
        action_kinds.push_back(required_key(name));
        action_props[name] = options_object(*k, "object");
        break;
    }
  }
  filter_kinds.push_back(required_key("empty"));
  action_kinds.push_back(required_key("ref"));

  Json schema = {
      {"$schema", "https://json-schema.org/draft/2020-12/schema"},
      {"$id", "https://tcsync.invalid/schemas/tcsync.schema.json"},
      {"title", "tcsync file, version 1"},
      {"description", "Generated by `tcsync schema` from tcsync's kind tables. Do not edit."},
      {"type", "object"},
      {"additionalProperties", false},
      {"required", array({"version", "devices"})},
      {"properties",
       {{"version", {{"enum", array({1, "1"})}}},
        {"actions",
         {{"description",
           "The action table (tc actions): actions filters share by `ref: KIND/INDEX`. With this section the files "
           "own the table: a table action they do not declare is deleted once no filter binds it."},
          {"type", array({"array", "null"})},
          {"items",
           {{"allOf", array({def_ref("action"), {{"required", array({"index"})}, {"not", required_key("ref")}}})}}}}},
        {"devices",
         {{"type", "object"},
          {"propertyNames", {{"pattern", "^[^/ \t:]{1,15}$"}}},
          {"additionalProperties", {{"anyOf", array({{{"type", "null"}}, def_ref("device")})}}}}},
        {"blocks",
         {{"description",
           "Shared filter blocks by index: the filters of every clsact/ingress side bound to the block "
           "(ingress_block, egress_block)."},
          {"type", array({"object", "null"})},
          {"propertyNames", {{"pattern", "^[1-9][0-9]{0,9}$"}}},
          {"additionalProperties", {{"anyOf", array({{{"type", "null"}}, def_ref("block")})}}}}}}},
      {"$defs",
       {{"handle", kHandle},
        {"raw",
         {{"type", "string"},
          {"pattern", "^([0-9a-fA-F]{2})*$"},
          {"description",
           "Kernel attribute bytes no kind table reads, in hex, as dump writes them: sent back as they are."}}},
        {"device", device()},
        {"own", own()},
        {"block_own", block_own()},
        {"block", block()},
        {"chain", chain(std::move(template_kinds))},
        {"qdisc", {{"oneOf", std::move(qdiscs)}}},
        {"class", {{"anyOf", std::move(classes)}}},
        {"filter",
         {{"type", "object"},
          {"additionalProperties", false},
          {"oneOf", std::move(filter_kinds)},
          {"if", required_key("police")},
          {"then", {{"anyOf", std::move(police_kinds)}, {"not", required_key("actions")}}},
          {"properties", std::move(filter_props)}}},
        {"filter_police", filter_police()},
        {"action",
         {{"type", "object"},
          {"additionalProperties", false},
          {"oneOf", std::move(action_kinds)},
          {"properties", std::move(action_props)}}}}}};
  // Bytes that are not UTF-8 in a kind's doc become U+FFFD: the output is
  // always JSON.
  return schema.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace tcsync
