// The kind tables' shape (model/kind.h): a kind sets only its own object
// type's part, and the parts the generic codec needs are there.
#include <catch2/catch.hpp>

#include <string_view>
#include <vector>

#include "model/kind.h"
#include "model/tc_words.h"

using namespace tcsync;

TEST_CASE("kind ops: a kind sets only its own object type's part", "[kind]") {
  for (const KindOps* k : all_kinds()) {
    INFO(obj_type_name(k->obj) << " " << k->name);
    CHECK((k->qdisc == nullptr || k->obj == ObjType::Qdisc));
    CHECK((k->cls == nullptr || k->obj == ObjType::Class));
    CHECK((k->filter == nullptr || k->obj == ObjType::Filter));
    CHECK((k->action == nullptr || k->obj == ObjType::Action));
  }
}

TEST_CASE("kind ops: every filter carries actions, every action its parameters struct", "[kind]") {
  // Without these the codec drops a filter's actions and reads no action's
  // index (tc_codec.cpp), silently.
  for (const KindOps* k : all_kinds()) {
    INFO(obj_type_name(k->obj) << " " << k->name);
    if (k->obj == ObjType::Filter) CHECK(filter_ops(k).actions_attr != 0);
    if (k->obj == ObjType::Action) CHECK(action_ops(k).parms_attr != 0);
  }
}

TEST_CASE("kind ops: a kind without its type's part, or no kind, reads the defaults", "[kind]") {
  const KindOps* pie = find_kind(ObjType::Qdisc, "pie");
  REQUIRE(pie);
  CHECK(pie->qdisc == nullptr);
  CHECK(qdisc_ops(pie).can_change);
  CHECK(qdisc_ops(pie).hooks == QdiscOps::Hooks::None);
  CHECK(qdisc_ops(nullptr).can_change);
  CHECK(filter_ops(nullptr).empty_list == FilterOps::EmptyList::Refused);
  CHECK(action_ops(nullptr).counts_at == 12);
  // A qdisc's kind read as a filter's has no filter part.
  CHECK(filter_ops(find_kind(ObjType::Qdisc, "clsact")).actions_attr == 0);
  CHECK(qdisc_ops(find_kind(ObjType::Qdisc, "clsact")).hooks == QdiscOps::Hooks::IngressEgress);
}

TEST_CASE("kind ops: one action kind is tc's verdict kind, and reads the verdict alone", "[kind]") {
  // tcsync import reads `action drop` as that kind (m_action.c: gact).
  std::vector<std::string_view> verdict_kinds;
  for (const KindOps* k : all_kinds())
    if (action_ops(k).tc_verdict_kind) {
      verdict_kinds.push_back(k->name);
      CHECK(k->obj == ObjType::Action);
      CHECK((k->tc_words && k->tc_words->bare));
    }
  CHECK(verdict_kinds == std::vector<std::string_view>{"gact"});
  CHECK_FALSE(action_ops(find_kind(ObjType::Action, "mirred")).tc_verdict_kind);
}
