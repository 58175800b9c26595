#include "file/schema.h"

#include "base/json_text.h"
#include "kinds/registry.h"
#include "model/kind.h"

namespace tcsync {
namespace {

std::string fields(const KindOps& k) {
  std::string out;
  for (auto& f : k.fields) {
    if (f.flags & kReadOnly) continue;
    out += ",\n        \"" + std::string(f.key) + "\": " + field_schema(f);
  }
  return out;
}

std::string props(const KindOps& k) {
  return fields(k) + ",\n        \"raw_options\": {\"$ref\": \"#/$defs/raw\"}";
}

std::string required(const KindOps& k, std::string first) {
  std::string out = first;
  for (auto& f : k.fields)
    if (f.flags & kRequired) out += (out.empty() ? "\"" : ", \"") + std::string(f.key) + "\"";
  return "[" + out + "]";
}

const char* kRawAttrs = ",\n        \"raw_attrs\": {\"$ref\": \"#/$defs/raw\"}";

const char* kHandle = R"({"type": "string", "pattern": "^(root|none|[0-9a-fA-F]{0,4}:[0-9a-fA-F]{0,4})$"})";

// A qdisc's size table (model/size_table.h), in tc-stab(8)'s words.
const char* kStab = R"(,
        "stab": {"description": "Size table (tc-stab(8)): how the qdisc counts packet sizes. cell_log, size_log and cell_align only for a spec tc would not make from the other words.", "type": "object", "additionalProperties": false, "properties": {"linklayer": {"enum": ["ethernet", "atm", "adsl", "unaware"]}, "overhead": {"type": ["integer", "string"]}, "mpu": {"type": ["integer", "string"]}, "mtu": {"type": ["integer", "string"]}, "tsize": {"type": ["integer", "string"]}, "cell_log": {"type": "integer"}, "size_log": {"type": "integer"}, "cell_align": {"type": ["integer", "string"]}}})";

}  // namespace

std::string yaml_json_schema() {
  std::string qdiscs, classes, filters, actions;
  for (auto* k : all_kinds()) {
    std::string doc = json_escape(k->doc);
    switch (k->obj) {
      case ObjType::Qdisc:
        qdiscs +=
            std::string(qdiscs.empty() ? "" : ",\n") + "    {\"description\": \"" + doc +
            "\", \"type\": \"object\", \"additionalProperties\": false, \"required\": " + required(*k, "\"kind\"") +
            ", \"properties\": {\n        \"kind\": {\"const\": \"" + std::string(k->name) +
            "\"},\n        \"parent\": " + kHandle + ",\n        \"handle\": " + kHandle + kStab + kRawAttrs +
            props(*k) + "}}";
        break;
      case ObjType::Class:
        classes +=
            std::string(classes.empty() ? "" : ",\n") + "    {\"description\": \"" + doc +
            "\", \"type\": \"object\", \"additionalProperties\": false, \"required\": " + required(*k, "\"classid\"") +
            ", \"properties\": {\n        \"kind\": {\"const\": \"" + std::string(k->name) +
            "\"},\n        \"classid\": " + kHandle + ",\n        \"parent\": " + kHandle + kRawAttrs + props(*k) +
            "}}";
        break;
      case ObjType::Filter:
        filters +=
            std::string(filters.empty() ? "" : ",\n") + "    \"" + std::string(k->name) + "\": {\"description\": \"" +
            doc +
            "\", \"type\": [\"object\", \"null\"], \"additionalProperties\": false, \"required\": " + required(*k, "") +
            ", \"properties\": {\"$comment\": {}" + props(*k) + "}}";
        break;
      case ObjType::Action:
        actions += std::string(actions.empty() ? "" : ",\n") + "    \"" + std::string(k->name) +
                   "\": {\"description\": \"" + doc +
                   "\", \"type\": \"object\", \"additionalProperties\": false, \"required\": " + required(*k, "") +
                   ", \"properties\": {\"$comment\": {}" + props(*k) + "}}";
        break;
    }
  }
  // The kinds with a police of their own (FilterOps::old_police_attr).
  std::string police_kinds;
  for (auto* k : all_kinds())
    if (k->obj == ObjType::Filter && filter_ops(k).old_police_attr)
      police_kinds +=
          std::string(police_kinds.empty() ? "" : ", ") + "{\"required\": [\"" + std::string(k->name) + "\"]}";
  // The kinds a chain template may be of (FilterOps::template_protocol_attr).
  std::string template_kinds;
  for (auto* k : all_kinds())
    if (k->obj == ObjType::Filter && filter_ops(k).template_protocol_attr)
      template_kinds += std::string(template_kinds.empty() ? "" : ", ") + "\"" + std::string(k->name) +
                        "\": {\"$ref\": \"#/$defs/filter/properties/" + std::string(k->name) + "\"}";
  std::string filter_kinds, action_kinds;
  for (auto* k : all_kinds()) {
    if (k->obj == ObjType::Filter)
      filter_kinds +=
          std::string(filter_kinds.empty() ? "" : ", ") + "{\"required\": [\"" + std::string(k->name) + "\"]}";
    if (k->obj == ObjType::Action)
      action_kinds +=
          std::string(action_kinds.empty() ? "" : ", ") + "{\"required\": [\"" + std::string(k->name) + "\"]}";
  }
  action_kinds += ", {\"required\": [\"ref\"]}";
  return R"({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://tcsync.invalid/schemas/tcsync.schema.json",
  "title": "tcsync file, version 1",
  "description": "Generated by `tcsync schema` from tcsync's kind tables. Do not edit.",
  "type": "object",
  "additionalProperties": false,
  "required": ["version", "devices"],
  "properties": {
    "version": {"enum": [1, "1"]},
    "actions": {
      "description": "The action table (tc actions): actions filters share by `ref: KIND/INDEX`. With this section the files own the table: a table action they do not declare is deleted once no filter binds it.",
      "type": ["array", "null"],
      "items": {"allOf": [{"$ref": "#/$defs/action"}, {"required": ["index"], "not": {"required": ["ref"]}}]}
    },
    "devices": {
      "type": "object",
      "propertyNames": {"pattern": "^[^/ \t:]{1,15}$"},
      "additionalProperties": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/device"}]}
    },
    "blocks": {
      "description": "Shared filter blocks by index: the filters of every clsact/ingress side bound to the block (ingress_block, egress_block).",
      "type": ["object", "null"],
      "propertyNames": {"pattern": "^[1-9][0-9]{0,9}$"},
      "additionalProperties": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/block"}]}
    }
  },
  "$defs": {
    "handle": )" +
         std::string(kHandle) + R"(,
    "raw": {"type": "string", "pattern": "^([0-9a-fA-F]{2})*$",
            "description": "Kernel attribute bytes no kind table reads, in hex, as dump writes them: sent back as they are."},
    "device": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "qdiscs": {"type": ["array", "null"], "items": {"$ref": "#/$defs/qdisc"}},
        "classes": {"type": ["array", "null"], "items": {"$ref": "#/$defs/class"}},
        "filters": {"type": ["array", "null"], "items": {"allOf": [{"$ref": "#/$defs/filter"}, {"required": ["parent"]}]}},
        "chains": {"type": ["array", "null"], "items": {"allOf": [{"$ref": "#/$defs/chain"}, {"required": ["parent"]}]}},
        "atomic": {"type": "boolean", "description": "Change the filter lists at ingress/egress by one atomic switch (apply --atomic)."},
        "own": {"type": ["array", "null"], "items": {"$ref": "#/$defs/own"},
                "description": "The regions of the device this file owns; objects outside them belong to others and are never changed. Absent: the whole device."}
      }
    },
    "own": {
      "description": "A region a file owns: a qdisc and everything below it, or the filters at a parent (in a chain, at a range of prefs).",
      "oneOf": [
        {"type": "object", "additionalProperties": false, "required": ["qdisc"],
         "properties": {"qdisc": {"type": "string", "pattern": "^[0-9a-fA-F]{1,4}:$"}}},
        {"type": "object", "additionalProperties": false, "required": ["parent"],
         "properties": {"parent": {"type": "string"}, "chain": {"type": "integer", "minimum": 0, "maximum": 268435455},
                        "prefs": {"type": ["string", "integer"], "pattern": "^[0-9]+(-[0-9]+)?$"}}}
      ]
    },
    "block_own": {
      "description": "A region of a shared block a file owns: its filters in a chain, at a range of prefs.",
      "type": "object", "additionalProperties": false,
      "properties": {"chain": {"type": "integer", "minimum": 0, "maximum": 268435455},
                     "prefs": {"type": ["string", "integer"], "pattern": "^[0-9]+(-[0-9]+)?$"}}
    },
    "block": {
      "type": "object",
      "additionalProperties": false,
      "properties": {
        "filters": {"type": ["array", "null"], "items": {"allOf": [{"$ref": "#/$defs/filter"}, {"not": {"required": ["parent"]}}]}},
        "chains": {"type": ["array", "null"], "items": {"allOf": [{"$ref": "#/$defs/chain"}, {"not": {"required": ["parent"]}}]}},
        "own": {"type": ["array", "null"], "items": {"$ref": "#/$defs/block_own"},
                "description": "The regions of the block this file owns. Absent: the whole block."}
      }
    },
    "chain": {
      "description": "A filter chain created explicitly (tc chain add), with an optional template that every filter in it must fit.",
      "type": "object",
      "additionalProperties": false,
      "required": ["chain"],
      "properties": {
        "parent": {"type": "string"},
        "chain": {"type": "integer", "minimum": 0, "maximum": 268435455},
        "protocol": {"type": "string"},
        "raw_attrs": {"$ref": "#/$defs/raw"},
        "template": {"type": "object", "additionalProperties": false, "minProperties": 1, "maxProperties": 1,
                     "properties": {)" +
         template_kinds + R"(}}
      }
    },
    "qdisc": {"oneOf": [
)" + qdiscs +
         R"(
    ]},
    "class": {"anyOf": [
)" + classes +
         R"(
    ]},
    "filter": {
      "type": "object",
      "additionalProperties": false,
      "oneOf": [)" +
         filter_kinds + R"(, {"required": ["empty"]}],
      "if": {"required": ["police"]},
      "then": {"anyOf": [)" +
         police_kinds + R"(], "not": {"required": ["actions"]}},
      "properties": {
        "empty": {"type": "string", "pattern": "^[a-z0-9_]+$", "description": "An empty list of this classifier kind at the pref (no rule: what the kernel keeps after tc filter add ... u32 with no options). A u32 one may give its root table as its handle (801:)."},
        "root_table": {"type": "string", "pattern": "^[89a-fA-F][0-9a-fA-F]{2}:$", "description": "On a u32 hash table entry (handle 2: with divisor): the kernel's root table of the list it is in (801:), for a list that holds only hash tables and their rules (any other list shows its root in a rule's handle, 801::5, or as an empty list's handle)."},
        "name": {"type": "string"},
        "parent": {"type": "string"},
        "chain": {"type": "integer", "minimum": 0},
        "pref": {"type": "integer", "minimum": 1, "maximum": 65535},
        "prio": {"type": "integer", "minimum": 1, "maximum": 65535},
        "protocol": {"type": "string"},
        "handle": {"type": ["string", "integer"]},
        "classid": {"$ref": "#/$defs/handle"},
        "flowid": {"$ref": "#/$defs/handle"},
        "police": {"$ref": "#/$defs/filter_police"},
        "actions": {"type": "array", "maxItems": 32, "items": {"$ref": "#/$defs/action"}},
        "raw_attrs": {"$ref": "#/$defs/raw"},
)" + filters +
         R"(
      }
    },
    "filter_police": {
      "description": "The filter's own police (tc's 'police' among a filter's words, before actions existed): the police action's fields. Not with actions: the kernel keeps the police and drops them.",
      "type": "object", "additionalProperties": false, "properties": {"$comment": {})" +
         fields(kActionPolice) + R"(}
    },
    "action": {
      "type": "object",
      "additionalProperties": false,
      "oneOf": [)" +
         action_kinds + R"(],
      "properties": {
        "index": {"type": "integer", "minimum": 1},
        "cookie": {"type": "string", "pattern": "^([0-9a-fA-F]{2}){1,16}$"},
        "percpu_stats": {"type": "boolean"},
        "raw_attrs": {"$ref": "#/$defs/raw"},
        "ref": {"type": "string", "pattern": "^[a-z_]+/[1-9][0-9]*$", "description": "An action of the table (top-level actions), as KIND/INDEX."},
)" + actions +
         R"(
      }
    }
  }
}
)";
}

}  // namespace tcsync
