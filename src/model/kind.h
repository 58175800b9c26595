// The kind tables. Each tc kind (htb, tbf, u32, mirred, ...) is described
// once, in its own file (kinds/qdisc/, filter/, action/): its YAML keys, value types, units, defaults and
// which changes the kernel can make in place. The loader, the differ, the
// plan printer, dump and the JSON Schema generator all walk the same table;
// the kind's encode/decode hooks map the same fields to and from netlink,
// by the table itself for fields declared as one attribute each (Field::wire,
// model/field_wire.h).
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/diag.h"
#include "base/words.h"
#include "netlink/wire.h"

namespace tcsync {

struct Node;
struct Filter;
struct FilterKey;
struct Class;
struct ClassXstats;  // class_xstats.h

enum class ObjType : uint8_t { Qdisc, Class, Filter, Action };
const char* obj_type_name(ObjType t);

// A field's value. Numbers are in kernel units (bytes/s, bytes, us, handle
// bits); Words (words.h) hold small structured values such as u32 selector keys.
using Value = std::variant<uint64_t, std::string, Words>;

enum class FieldType : uint8_t {
  Uint,    // integer, decimal or 0x-hex, bounded by Field::max
  Rate,    // "100mbit" -> bytes/s
  Size,    // "15kb" -> bytes
  Time,    // "10ms" -> us
  Handle,  // "1:10" -> 32-bit tc handle
  Bool,    // true/false
  Enum,    // one word of Field::names -> its number
  Device,  // an interface name (string); resolved to an ifindex when encoded
  Custom,  // parsed and printed by Field::custom
};

struct EnumName {
  std::string_view name;
  uint64_t value;
};

class YamlOut;
struct KindCtx;

// Hooks for structured values (u32 selectors, hash keys...).
struct CustomType {
  std::string_view schema_name;  // names the shape in docs and schema
  bool (*parse)(const Node& node, Value& out, Diagnostics& diags);
  void (*emit)(const Value& v, YamlOut& out);  // YAML form, as the loader reads it
  std::string (*describe)(const Value& v);     // short form for plan explanations
  // Fingerprints (fingerprint.h) hash a value's Words as the format's
  // version had them; a type whose Words changed since writes the old ones
  // here, so rules stamped before still read as unchanged. Null: as held.
  void (*fingerprint_words)(const Value& v, Words& out) = nullptr;
  std::string_view json_schema;  // a JSON Schema fragment
  // Compares a desired value with a live one when they are not equal as
  // Words: a value with parts the kernel never reports (gred's virtual
  // queues keep tc's avpkt and bandwidth, which make the table sent). Null: ==.
  bool (*same)(const Value& want, const Value& have) = nullptr;
  // A value with a wire form of its own (a nest, a struct of its parts:
  // ematch's tree, gact's tc_gact_p), so that a field of the type binds to
  // its attribute as a scalar does (Field::wire = Wire::Custom) and the
  // kinds that carry it write no code for it. `put` writes the value as
  // attribute `attr` (errors through ctx.diags); `get` reads it back, nullopt
  // for what reads as absent (an empty tree). Both set for a type a
  // Wire::Custom field names (field_wire_test checks every kind's); a
  // Wire::Custom field of a type without them is neither sent nor read.
  void (*put)(const Value& v, uint16_t attr, const KindCtx& ctx, MsgWriter& w) = nullptr;
  std::optional<Value> (*get)(const Attr& a) = nullptr;
};

enum FieldFlags : uint32_t {
  kRequired = 1u << 0,
  // The kernel computes the value when none is given (htb quantum): it is
  // compared only when the file declares it, so kernel defaults are not drift.
  kAuto = 1u << 1,
  // The kernel cannot change this in place: a change means delete + add.
  kRecreate = 1u << 2,
  // Read from the kernel and shown by dump, never written (counters, levels).
  kReadOnly = 1u << 3,
  // The other way round: read from the file and used to encode, but the
  // kernel never reports it (red's avpkt, burst and bandwidth, folded into
  // Wlog and a table the kernel keeps but does not dump). Never compared
  // with live state and never printed by dump; the values the kernel does
  // report that derive from it are fields of their own and compared.
  kInputOnly = 1u << 4,
  // Says where something comes from, which the kernel does not report back
  // (bpf's object file or pinned path: the kernel holds a program, not its
  // origin). Read from files and printed by dump, never compared: the kind
  // compares what it names instead (bpf: the program's tag).
  kNoCompare = 1u << 5,
};

// How a field travels when it is one attribute of its own (Field::attr)
// inside TCA_OPTIONS, or a member of a struct (Field::in): a number of the
// attribute's (member's) width, in host or network byte order, or Str: a
// NUL-terminated string (a Device field's name: fw's and u32's indev). The
// generic encoder and decoder (model/field_wire.h) carry such fields, so
// the kind writes no code for them. Mac: the 6 bytes of an Ethernet
// address, held as its 48-bit number (kinds/net_types.h kMacAddrType); one
// shorter is not read. Ifindex: a Device field the kernel holds as its
// u32 ifindex (route's fromif, mirred's dev): sent as the index
// KindCtx::links gives the name (an unknown name is an error at the
// field), read as the name links gives the index ("ifindexN" for one it
// does not know, or without links). Custom: the field's CustomType writes
// and reads its attribute (CustomType::put, ::get). Words: a Words value
// whose words are members of its struct (Field::in, Field::parts: nat's
// address and mask). None: the kind's own encode/decode carries the field.
enum class Wire : uint8_t { None, U8, U16, U32, U64, Be16, Be32, Str, Mac, Ifindex, Custom, Words };

// A field whose attribute holds another form than the model (CoDel's
// 1.024 us units reported as us, fq's bucket count sent as its log, a
// kernel's "none" value). Shared tables: field_wire.h, codel_time.h...
struct WireMap {
  uint64_t (*to_wire)(uint64_t value) = nullptr;  // null: sent as held
  // The model's value for what the kernel reports; nullopt: the field reads
  // as absent (fq's ~0 maxrate: no limit). Null: read as reported.
  std::optional<uint64_t> (*from_wire)(uint64_t wire) = nullptr;
  // A value on the wire that is never sent: the kernel's own when the
  // attribute is absent, which tc leaves out (flow's divisor 0, fw's mask ~0).
  std::optional<uint64_t> unsent = std::nullopt;
  // The field's def, when the kernel reports it, reads as absent, as
  // normalize drops a declared one (vlan's 802.1Q, gate's TAI clock).
  bool def_is_absent = false;
};

// A struct that one attribute carries whole (an action's TCA_X_PARMS,
// cbs's TCA_CBS_PARMS), whose members are fields (Field::in): the generic
// encoder (model/field_wire.h) sends it zeroed but for what its fields
// say, before the kind's attributes (or after them: sent_last); the decoder
// reads the members from it, a short struct's missing tail as zeros (an
// older kernel's).
struct WireStruct {
  // The attribute carrying the struct; 0 (no attribute is) when TCA_OPTIONS
  // itself is the struct, with no attribute header: bare().
  uint16_t attr;
  uint16_t size;
  // An action's parameters, which start with struct tc_gen: its index is
  // KindCtx::action_index, the kernel's choice when 0.
  bool action_parms = false;
  // Sent only when some member has a value to send (declared, or a change's
  // def: field_sent_value), as tc sends the fifos' limit only when given;
  // else always, zeros where no member says more (multiq's, which its
  // kernel needs).
  bool only_with_value = false;
  // Sent after the kind's attributes, where tc sends it (ct's tc_ct and
  // tunnel_key's tc_tunnel_key: their parameters last); the kernel reads
  // either order, but kind-golden holds tc's bytes.
  bool sent_last = false;
  // TCA_OPTIONS is the struct (the fifos, skbprio, multiq:
  // KindOps::options_raw). It is read only when the payload holds it
  // whole: the kernel always dumps the whole struct.
  constexpr bool bare() const { return attr == 0; }
};

// A bit of a struct's member that says an attribute is there (skbmod's
// flags: SKBMOD_F_DMAC for TCA_SKBMOD_DMAC), for Field::present: set when
// the field has a value to send, and the attribute is read only when it is
// set (what it holds then is unread: kept raw, never dropped).
struct PresenceBit {
  const WireStruct* in;
  uint16_t offset;
  Wire wire;  // the member's width
  uint64_t bit;
};

// One word of a Wire::Words field: the member at `offset` of the width and
// byte order `wire` says, or, with no wire (None), a word that is not on the
// wire and reads as `fixed` (an IPv4 address's family, 4).
struct WordPart {
  uint16_t offset = 0;
  Wire wire = Wire::None;
  uint64_t fixed = 0;
};

struct Field {
  std::string_view key;
  FieldType type;
  uint32_t flags = 0;
  std::string_view doc;
  std::optional<uint64_t> def = std::nullopt;  // value used when absent (compared as declared)
  uint64_t max = UINT64_MAX;                   // for Uint; for Enum: also a number up to it
  std::span<const EnumName> names = {};        // for Enum
  const CustomType* custom = nullptr;          // for Custom
  // The attribute inside TCA_OPTIONS (an action's TCA_ACT_OPTIONS) that
  // carries this field alone (or its bit of it: `bit`), 0 when none does (a
  // field inside a struct, or spread over several): a kernel refusal naming
  // that attribute (NLMSGERR_ATTR_OFFS) is reported at this field's line and
  // column.
  uint16_t attr = 0;
  // The attribute's form (Wire above): with `attr`, the generic encoder
  // sends the field and the generic decoder reads it (model/field_wire.h);
  // with `in`, the form of its member.
  Wire wire = Wire::None;
  // The struct whose member the field is, at byte `offset` (offsetof), of
  // the width `wire` says (not Str). Such a field leaves `attr` 0: the
  // struct's attribute carries others too (every action's its verdict),
  // so a refusal naming it names no one field.
  const WireStruct* in = nullptr;
  uint16_t offset = 0;
  // A Bool that is one bit of its member (csum's update_flags) or of its
  // attribute (matchall's TCA_MATCHALL_FLAGS): the bit is set when the
  // field is true, and reads as true when set (absent when clear); fields
  // may share the member or attribute, one bit each (the attribute is sent
  // when some bit is set, and a refusal naming it points at the first of
  // them declared). A map, if any, only reads: its from_wire gets 1 or 0
  // for the bit (kClearBitIsFalse: etf's flags, a clear bit read as false).
  uint64_t bit = 0;
  const WireMap* map = nullptr;
  // What a change (KindCtx::change) sends for the field when absent and
  // without a def (the kernel keeps what a change leaves out): a kernel's
  // "off" (CoDel's ce_threshold, fq's ~0 maxrate) or the kernel's default
  // of a kAuto field (pie's tupdate, compared only when declared). A struct
  // member (`in`) is always sent: it goes on an add too (mpls's m_action:
  // tc's pop; 0 without it).
  std::optional<uint64_t> change_absent = std::nullopt;
  // An add sends the def for an absent field too, not only a change: tc
  // always sends the attribute (ctinfo's zone, flow's mode).
  bool def_always_sent = false;
  // An attribute field whose presence a bit of a struct member says
  // (PresenceBit: skbmod's dmac, smac and etype); a number's wire form
  // (field_wire_test checks), which field_sent_value says is sent.
  const PresenceBit* present = nullptr;
  // A Wire::Words field's words, in order, each a member of `in` or a fixed
  // word: sent when the value has them all, else zeros; read whole.
  std::span<const WordPart> parts = {};
};

// One declared or decoded field value, with the YAML place it came from.
struct Opt {
  uint16_t field;
  SourceLoc loc;
  Value value;
};

// A kind's options: present fields only, sorted by field index.
class Options {
 public:
  const Value* get(uint16_t f) const;
  const Opt* opt(uint16_t f) const;
  std::optional<uint64_t> num(uint16_t f) const;
  const std::string* str(uint16_t f) const;
  const Words* words(uint16_t f) const;
  void set(uint16_t f, Value v, SourceLoc loc = {});
  void erase(uint16_t f);
  void reserve(size_t n) { items_.reserve(n); }
  // Takes `from`'s fields into one allocation of their exact size (a
  // decoder's set() grows 1, 2, 4...: three allocations for four fields,
  // paid per rule and action in a dump); `from` is left empty with its
  // capacity, ready for the next object.
  void take_exact(Options& from);
  bool has(uint16_t f) const { return get(f) != nullptr; }
  const std::vector<Opt>& items() const { return items_; }
  bool empty() const { return items_.empty(); }
  bool operator==(const Options& o) const;

 private:
  std::vector<Opt> items_;
};

// Names <-> interface indexes, for mirred's `dev` and friends. The kernel
// side implements it from the link cache; tests and offline runs fake it.
class LinkNames {
 public:
  virtual ~LinkNames() = default;
  virtual std::optional<uint32_t> index_of(std::string_view name) const = 0;
  virtual std::string name_of(uint32_t ifindex) const = 0;
};

class BpfPrograms;  // bpf_program.h
struct TcWords;     // tc_words.h

// What a kind's hooks may need besides its own options.
struct KindCtx {
  uint32_t handle = 0;        // the object's own handle (htb's default is a minor of it)
  uint32_t action_index = 0;  // for actions: 0 = let the kernel pick
  const LinkNames* links = nullptr;
  Diagnostics* diags = nullptr;  // encode errors (an unknown device) go here
  SourceLoc loc;
  const Filter* filter = nullptr;  // filters: the whole filter (classid, actions, key)
  // Qdiscs: the message changes a live object (RTM_NEWQDISC without
  // NLM_F_CREATE). The kernel keeps what a change leaves out, so kinds send
  // the defaults of absent fields then, and leave out what only init takes.
  bool change = false;
  // Filters: the programs bpf filters name, opened by the kernel edge
  // (bpf_program.h); null offline, and encode reports an error then.
  const BpfPrograms* programs = nullptr;
  // Qdiscs: the follow-up message being written (QdiscOps::follow_ups), 1
  // and up; 0: the object's own message.
  uint16_t part = 0;
};

// A message that follows a qdisc's own (QdiscOps::follow_ups): its number
// (KindCtx::part) and what it changes, in the plan's words.
struct FollowUp {
  uint16_t part;
  std::string why;
};

// What only qdiscs have. A kind points to its own (`KindOps::qdisc`); one
// without any of these points to none and reads the defaults (qdisc_ops).
struct QdiscOps {
  // The kernel implements ->change (htb does not: "Change operation not
  // supported"), so option changes need no delete + add.
  bool can_change = true;
  // encode writes attributes of the message itself, beside TCA_KIND
  // (clsact's TCA_INGRESS_BLOCK), and decode reads the message's attributes;
  // TCA_OPTIONS is neither sent nor read.
  bool options_top_level = false;
  // Qdiscs that are hooks rather than queues (ingress, clsact): they sit at
  // parent ffff:fff1 with handle ffff:, and give filters the ingress block,
  // and clsact the egress block as well.
  enum class Hooks : uint8_t { None, Ingress, IngressEgress };
  Hooks hooks = Hooks::None;
  // The qdisc has a filter block (tcf_block in its class ops): filters sit
  // on it and its classes. Without, the kernel refuses them ("Qdisc not
  // classful", "Class doesn't support blocks").
  bool filters = false;
  // Qdiscs whose classes are the device's tx queues (mq, mqprio): a child
  // qdisc per queue, never a shared one (plan_warnings).
  bool multiqueue_root = false;
  // Classes the qdisc makes itself, never declared (prio's bands 1:1..1:N,
  // mq's and mqprio's queues): true when `minor` is one of them, so a child
  // qdisc may hang off it.
  bool (*implicit_class)(const Options& o, uint32_t minor) = nullptr;
  // Fields holding a shared block the qdisc binds besides a hook's sides
  // (red's qevent blocks, TCA_RED_EARLY_DROP_BLOCK/MARK_BLOCK): the kernel
  // reports only the index, so the dump reads that block's filters, the
  // loader counts it as bound and the plan knows it dies with the qdisc.
  std::span<const uint16_t> block_fields = {};
  // Whether changing `have` into `want` needs delete + add although each
  // changed field could change in place (gred: ClassOps has the same hook).
  bool (*options_need_recreate)(const Options& want, const Options& have) = nullptr;
  // What the kernel takes only as changes of a live qdisc, one a message
  // (gred's virtual queues: init refuses them, change takes one per
  // message). Lists the follow-up messages an add (`have` null) or a change
  // from `have` needs, in the order to send them (encode writes each with
  // ctx.change and ctx.part), and returns whether the change needs the
  // object's own message as well (an add always sends it).
  bool (*follow_ups)(const Options& want, const Options* have, std::vector<FollowUp>& out) = nullptr;
  // Fields the kernel itself retunes while the qdisc runs, given the
  // desired options (red with `adaptive` moves max_P every 500 ms): the
  // live value is the kernel's, not drift, so it is not compared.
  bool (*kernel_tunes)(const Options& want, uint16_t field) = nullptr;
  // A note printed under a kernel refusal whose own text says too little
  // (mqprio's bare EINVAL); empty: none.
  std::string (*reject_hint)(const Options& o, int error) = nullptr;
};

// What only classes have (KindOps::cls; class_ops).
struct ClassOps {
  // Checks across all of one device's classes of this kind (drr: classes
  // are flat; hfsc: a class with children needs a link-share curve).
  void (*check_classes)(const std::vector<const Class*>& classes, Diagnostics& d) = nullptr;
  // Whether changing `have` into `want` needs delete + add although each
  // changed field could change in place (hfsc: a change keeps any service
  // curve it does not name, so a curve cannot be removed).
  bool (*options_need_recreate)(const Options& want, const Options& have) = nullptr;
  // Reads the class's TCA_XSTATS, a struct of the kind's own (htb's
  // tc_htb_xstats: lends, borrows, giants), for `tcsync stats`; null: the
  // bytes are only kept (stats.h ObjStats::xstats).
  void (*read_xstats)(std::span<const uint8_t> data, ClassXstats& out) = nullptr;
};

// What only kinds whose rules live in kernel-side shared tables have
// (FilterOps::tables): hash tables that are filter entries of their own,
// rules that hang in a table and link to others, tables shared by every
// list at a pref under one qdisc (the kernel's tc_u_common: a clsact's
// ingress and egress, an htb qdisc and its classes), and root tables the
// kernel numbers per list (800:, 801:...; model/shared_tables.h). Stages
// ask whether a kind has them (`filter_ops(k).tables`), never its name; a
// kind that has them sets every member. Such lists cannot take part in an
// atomic switch: both slots would share their tables (plan/atomic.cpp).
struct SharedTableOps {
  // Maps a decoded key to the form the loader produces (the kernel-named
  // root table 800: becomes 0) and returns false for entries that are not
  // rules (the implicit root hash table).
  bool (*canonical_key)(FilterKey& k, const Options& o) = nullptr;
  // The order of adds within a device (lower first; deletes go the other
  // way): hash tables (0) come before the rules that fill or link to them
  // (1), and are deleted after them.
  int (*add_rank)(const Options& o) = nullptr;
  // Handles of filters (same device and parent) that must exist before this
  // one is added (the tables a rule hangs in and links to).
  std::vector<uint32_t> (*depends_on)(const Options& o) = nullptr;
  // The handle's notation, which names table, bucket and node ("800::1").
  std::optional<uint32_t> (*parse_handle)(std::string_view s) = nullptr;
  std::string (*format_handle)(uint32_t h) = nullptr;
  // `table_of(handle)`: the table an entry (as the kernel names it) hangs
  // in; `own_table_handle`: the handle a RTM_GETTFILTER of one list answers
  // with that list's own root table. The kernel's dump of one list shows
  // every list's entries at its pref: the dumper keeps each entry once, in
  // the list it belongs to.
  uint32_t (*table_of)(uint32_t handle) = nullptr;
  uint32_t own_table_handle = 0;
};

// What only filters have (KindOps::filter; filter_ops).
struct FilterOps {
  // The kernel adds to the head of a (pref, protocol) list and matches in
  // list order, newest first (cls_basic): the dump lists the newest first,
  // so the dumper reverses such lists, and applying a dump adds them in the
  // order they were made and the list comes back the same.
  bool newest_first = false;
  // The attributes that carry classid and the action list.
  uint16_t classid_attr = 0;
  uint16_t actions_attr = 0;
  // The attribute of the filter's own police (TCA_U32_POLICE...), policing's
  // form from before actions: tc's `police ...` among the filter's words. It
  // nests the police action's own attributes directly (no TCA_ACT_OPTIONS),
  // both ways (tcf_exts_dump, TCA_OLD_COMPAT); 0: the kind has none. The
  // codec, loader, differ, dump, schema and import all read this one member
  // (model.h Filter::police).
  uint16_t old_police_attr = 0;
  // Filters whose rules may carry tcsync's fingerprint cookie
  // (fingerprint.h) so that a no-op check can trust it; `terse_dump`: the
  // kernel's terse dump (TCA_DUMP_FLAGS_TERSE) answers for this kind with
  // handle, flags and the actions' cookies, which proves a block by the
  // cookies alone.
  bool fingerprinted = false;
  bool terse_dump = false;
  // The classifier's walk resumes a dump where the last skb stopped
  // (flower: its idr from the last handle; matchall and cgroup hold one
  // rule), so reading a list back costs what its rules cost. Others skip
  // from the first rule again for every skb of a dump (u32, basic, fw...):
  // reading back 100k of them is quadratic. The applier verifies a device
  // whose requests are most of it by one dump only when each of its kinds
  // resumes (apply/verify_by_dump.h).
  bool walk_resumes = false;
  // The option attribute that holds a chain template's protocol (flower's
  // eth_type key; tc leaves it out only for `protocol all`).
  uint16_t template_protocol_attr = 0;
  // The kind's own hit counters (TCA_U32_PCNT, TCA_MATCHALL_PCNT), read by
  // `tcsync stats` into lookups (when the kind counts them) and hits.
  uint16_t counters_attr = 0;
  // Each sets what its struct holds; a count it does not hold stays absent.
  void (*read_counters)(std::span<const uint8_t> data, std::optional<uint64_t>& lookups,
                        std::optional<uint64_t>& hits) = nullptr;
  // The handle the loader derives when the file gives none is `fixed | n`,
  // n counting 1, 2, 3... in file order within (device, parent, chain,
  // pref, protocol, fixed); n must fit `counter_mask`. u32 fixes the hash
  // table and bucket and numbers the 12-bit node id (the kernel matches
  // nodes of a bucket in node order, so file order is match order).
  // counter_mask 0: the handle is `fixed` (route derives it from its
  // realms, as the kernel does), or must be given when `fixed` is 0.
  void (*handle_space)(const Options& o, uint32_t& fixed, uint32_t& counter_mask) = nullptr;
  // Checks across all of one device's filters of this kind (u32: a rule's
  // table is declared, at the same parent, pref and protocol).
  void (*check_device)(const std::vector<const Filter*>& filters, Diagnostics& d) = nullptr;
  // Whether changing `have` into `want` needs delete + add although every
  // changed field could change in place on its own (flower: a replace must
  // keep the mask; matchall: the kernel refuses any replace).
  bool (*needs_recreate)(const Filter& want, const Filter& have) = nullptr;
  // Kinds whose rules live in kernel-side shared tables: their table
  // handling, in one place (SharedTableOps); null for every other kind.
  const SharedTableOps* tables = nullptr;
  // Whether the kernel makes a (pref, protocol) list of this kind with no
  // rule, from a request without TCA_OPTIONS (`empty: KIND`): u32 and fw
  // do; fw not on a shared block (fw_change needs a mark there); the others
  // answer EINVAL.
  enum class EmptyList : uint8_t { Refused, Allowed, NotOnBlock };
  EmptyList empty_list = EmptyList::Refused;
};

// What only actions have (KindOps::action; action_ops).
struct ActionOps {
  // The attribute whose payload starts with struct tc_gen (index, capab,
  // action, refcnt, bindcnt), read by the generic action decoder.
  uint16_t parms_attr = 0;
  // A second attribute that carries the same struct when the first is
  // absent (pedit's TCA_PEDIT_PARMS_EX, the form `pedit ex` sends).
  uint16_t parms_attr_ex = 0;
  // The size of that struct, sent zeroed but for the index when a rule
  // binds a shared action (`action mirred index 7`), since the kernel's
  // policies want the whole struct; and where refcnt and bindcnt sit in it
  // (tc_gen's place, 12, for all but struct tc_police).
  uint16_t parms_size = 0;
  uint8_t counts_at = 12;
  // tc reads a verdict word where an action kind goes (`action drop`) as
  // this kind (m_action.c names gact), for `tcsync import`: set by one kind.
  bool tc_verdict_kind = false;
};

// A kind: what every object type has, and a pointer to what only its own
// type has. Four pointers rather than one std::variant of them: a kind's
// initializer names what it sets (`.filter = &kFilterU32Ops`), a kind with
// nothing of its type's sets nothing, and readers ask for their type's by
// name (filter_ops(k)) without a visit. A kind sets at most its own type's
// pointer (tests/unit/kind_ops_test.cpp checks every kind).
struct KindOps {
  std::string_view name;
  ObjType obj;
  std::string_view doc;
  std::span<const Field> fields;
  // Writes the body of TCA_OPTIONS (nested attributes, or a raw struct for
  // the fifos). May report errors through ctx.diags.
  void (*encode)(const Options& o, const KindCtx& ctx, MsgWriter& w) = nullptr;
  // Reads the body of TCA_OPTIONS. Unknown attributes are skipped.
  void (*decode)(std::span<const uint8_t> payload, const KindCtx& ctx, Options& o) = nullptr;
  // Fills derived values and checks cross-field rules on a loaded object, so
  // the desired form compares equal to what the kernel will report.
  void (*normalize)(Options& o, const KindCtx& ctx, Diagnostics& diags, SourceLoc loc) = nullptr;
  // Drops values that are the kernel's default given another field, which
  // no WireMap can say (mpls's ttl 255 for a push but not for a modify;
  // vlan's priority 0 for a push): run on what decode reads (read_options)
  // and on what a file says (normalize_options), so both compare alike and
  // the kind's decode stays its table's.
  void (*drop_defaults)(Options& o) = nullptr;
  // TCA_OPTIONS carries a bare struct (the fifos), not nested attributes.
  bool options_raw = false;
  // What the kernel reports in TCA_OPTIONS is its own constant, not
  // configuration (pfifo_fast's bands and priority map): read as no
  // options and never kept, where a kind without decode keeps it raw.
  bool options_reported_only = false;
  // TCA_OPTIONS goes with NLA_F_NESTED, as tc sends it for the kinds whose
  // kernel parses the nest strictly (ets, fq_pie: nla_parse_nested refuses
  // it without, "NLA_F_NESTED is missing"); most parse leniently and tc
  // leaves it off.
  bool options_nested = false;
  // tc's spellings that are not the table's keys (aliases, multi-word forms
  // such as u32's selectors, bare values), for `tcsync import`: tc_words.h.
  const TcWords* tc_words = nullptr;
  // Attributes inside TCA_OPTIONS that the kernel reports and that are not
  // configuration (timestamps, counters, padding, hardware counts): never
  // kept as unread (model.h Raw), never sent back.
  std::span<const uint16_t> reported_only = {};
  // The object type's own part; null: all its defaults.
  const QdiscOps* qdisc = nullptr;
  const ClassOps* cls = nullptr;
  const FilterOps* filter = nullptr;
  const ActionOps* action = nullptr;

  int field_index(std::string_view key) const;
  std::vector<std::string_view> keys() const;
};

// A kind's own type's part, or the defaults when it declares none (or `k`
// is null: a kind tcsync does not know), so readers need no null checks.
inline constexpr QdiscOps kNoQdiscOps{};
inline constexpr ClassOps kNoClassOps{};
inline constexpr FilterOps kNoFilterOps{};
inline constexpr ActionOps kNoActionOps{};
inline const QdiscOps& qdisc_ops(const KindOps* k) {
  return k && k->qdisc ? *k->qdisc : kNoQdiscOps;
}
inline const ClassOps& class_ops(const KindOps* k) {
  return k && k->cls ? *k->cls : kNoClassOps;
}
inline const FilterOps& filter_ops(const KindOps* k) {
  return k && k->filter ? *k->filter : kNoFilterOps;
}
inline const ActionOps& action_ops(const KindOps* k) {
  return k && k->action ? *k->action : kNoActionOps;
}
inline const QdiscOps& qdisc_ops(const KindOps& k) {
  return qdisc_ops(&k);
}
inline const ClassOps& class_ops(const KindOps& k) {
  return class_ops(&k);
}
inline const FilterOps& filter_ops(const KindOps& k) {
  return filter_ops(&k);
}
inline const ActionOps& action_ops(const KindOps& k) {
  return action_ops(&k);
}
// The shared-table part of a filter kind; null for any other kind (or null k).
inline const SharedTableOps* shared_tables(const KindOps* k) {
  return filter_ops(k).tables;
}
inline const SharedTableOps* shared_tables(const KindOps& k) {
  return filter_ops(k).tables;
}

// Registry: every kind compiled in, looked up by object type and name
// (defined in kinds/registry.cpp; kinds/kinds.def lists them).
const KindOps* find_kind(ObjType obj, std::string_view name);
const std::vector<const KindOps*>& all_kinds();  // a static table: no copy per lookup
std::vector<std::string_view> kind_names(ObjType obj);
// The names of the kinds `has` picks, in registry order, joined by `sep`:
// a message about the kinds with some capability takes their names from
// the table ("u32", "u32 and fw"), so no stage spells a kind's name.
std::string kind_names_where(bool (*has)(const KindOps& k), std::string_view sep);
inline bool has_shared_tables(const KindOps& k) {
  return shared_tables(k) != nullptr;
}
inline bool makes_empty_lists(const KindOps& k) {
  return k.obj == ObjType::Filter && filter_ops(k).empty_list != FilterOps::EmptyList::Refused;
}

// Field values: parse from YAML, print for YAML and for humans. Shared by
// the loader, dump, differ and schema so every field reads and prints alike.
bool parse_field(const Field& f, const Node& n, Value& out, Diagnostics& diags);
void emit_field(const Field& f, const Value& v, YamlOut& out);
std::string describe_field(const Field& f, const Value& v);
std::string field_schema(const Field& f);  // JSON Schema fragment

// What a kind reads from a TCA_OPTIONS body, as the codec reads it: its
// decode, then its drop_defaults.
void read_options(const KindOps& k, std::span<const uint8_t> payload, const KindCtx& ctx, Options& o);

// A loaded object's options made ready to compare with the kernel's: the
// kind's drop_defaults, then its normalize.
void normalize_options(const KindOps& k, Options& o, const KindCtx& ctx, Diagnostics& diags, SourceLoc loc);

// The largest value of a number field (Uint, Size, Time, Rate) that reaches
// the kernel as written: Field::max, and no more than its wire form holds
// (Field::wire, through its map's to_wire: a u32 of CoDel's us). A field
// the kind's own code sends says its max in the table. parse_field
// refuses more at the value's FILE:LINE:COL, and normalize_options what a
// kind computes past it; field_range_test holds every kind's fields to it.
uint64_t field_max(const Field& f);
// The refusal of a number field's value past field_max, in its unit
// ("'limit' is 4294967296, past the most the kernel holds: 4294967295b
// (u32)"); `written` is the value as the file writes it.
std::string past_max_message(const Field& f, std::string_view written);

// The value a field is compared by: declared, else its default, else none.
const Value* effective_value(const Field& f, const Options& o, uint16_t idx, Value& scratch);
// The same for a value already looked up (`v`, null when absent).
const Value* or_default(const Field& f, const Value* v, Value& scratch);

}  // namespace tcsync
