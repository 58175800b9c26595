#!/bin/bash
# Never silent: a second rate spec (htb's ceil, tbf's peak rate) holds its
# own overhead, mpu and link layer in the kernel. tc fills them from the
# rate's words; another netlink tool need not, and tcsync reads each as the
# kernel holds it (ceil_*, peak_*) instead of assuming the rate's. The state
# is made with tc, then the second spec changed over raw netlink
# (tc_struct.py), since tc has no words for it.
source "$(dirname "$0")/lib.sh"
make_ns
STRUCT="$(dirname "$0")/tc_struct.py"
st() { ip netns exec "$NS" python3 "$STRUCT" "$@"; }

t qdisc add dev v0 root handle 1: htb default 10
t class add dev v0 parent 1: classid 1:10 htb rate 10mbit ceil 20mbit overhead 10 mpu 64
t qdisc add dev v1 root handle 2: tbf rate 1mbit burst 10k latency 50ms peakrate 2mbit mtu 1540 overhead 10 mpu 64

# As tc made it: the second spec is the rate's, and dump says nothing of it.
expect_rc 0 ts dump
if grep -q 'ceil_\|peak_' <<<"$OUT"; then fail "a tc-made state dumps a second spec: $OUT"; else pass "tc's state dumps no ceil_/peak_ field"; fi

# tc_htb_opt: rate spec at 0, ceil spec at 12; tc_tbf_qopt: rate at 0, peak
# at 12. In a tc_ratespec: linklayer at 1, overhead at 2, mpu at 6.
st patch class v0 1:10 1 13:B:2 14:'<H':24 18:'<H':96
# tbf's link layer stays: the kernel holds mtu as ticks of tc's spec,
# which under ATM cells no byte count gives (README, Limits).
st patch qdisc v1 2: 1 14:'<H':30 18:'<H':80

# As tc made it: one set of words for both specs.
cat >"$TMP/plain.yaml" <<'YAML'
version: 1
devices:
  v1:
    qdiscs: [{kind: tbf, handle: "2:", rate: 1mbit, burst: 10kb, latency: 50ms, peakrate: 2mbit, mtu: 1540, overhead: 10, mpu: 64}]
  v0:
    qdiscs: [{kind: htb, handle: "1:", default: "1:10"}]
    classes: [{classid: "1:10", rate: 10mbit, ceil: 20mbit, overhead: 10, mpu: 64}]
YAML
expect_rc 2 ts diff "$TMP/plain.yaml"
expect_contains "ceil_overhead 24 -> (none)"
expect_contains "ceil_mpu 96 -> (none)"
expect_contains "ceil_linklayer atm -> (none)"
expect_contains "peak_overhead 30 -> (none)"
expect_contains "peak_mpu 80b -> (none)"

raw() { st show class v0 1:10 1; st show qdisc v1 2: 1; }
details() { TC_SNAPSHOT_DETAILS=1 snapshot; }
raw >"$TMP/raw.before"
details >"$TMP/tc.before"
# iproute2 6.1 prints htb classes as text even with -j.
grep -q 'cburst 1600b/1 mpu 96b' "$TMP/tc.before" && pass "tc -d shows the ceil's own mpu" || fail "tc -d lacks the ceil's mpu 96b"
# tc -j prints tbf's two mpu keys; JSON keeps the peak's, the last.
grep -q '"mpu": 80' "$TMP/tc.before" && pass "tc -d -j shows the peak's own mpu" || fail "tc -d -j lacks the peak's mpu 80"

expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump.yaml"
echo "--- dump:"; sed 's/^/    /' "$TMP/dump.yaml"
for f in "ceil_overhead: 24" "ceil_mpu: 96" "ceil_linklayer: atm" "peak_overhead: 30" 'peak_mpu: "80b"'; do
  grep -qF "$f" "$TMP/dump.yaml" && pass "dump has $f" || fail "dump lacks $f"
done
expect_rc 0 ts diff "$TMP/dump.yaml"

# Flush, apply the dump: the kernel holds the same structs, tc shows the same.
expect_held_round_trip "$TMP/dump.yaml" t qdisc del dev v0 root -- t qdisc del dev v1 root
expect_rc 0 ts diff "$TMP/dump.yaml"

# A file may spell the second spec out equal to the rate's: no difference.
sed 's/ceil: 20mbit, overhead: 10, mpu: 64}/ceil: 20mbit, overhead: 10, mpu: 64, ceil_mpu: 64, ceil_overhead: 10}/; s/mtu: 1540, overhead: 10, mpu: 64}/mtu: 1540, overhead: 10, mpu: 64, peak_overhead: 10}/' "$TMP/plain.yaml" >"$TMP/same.yaml"
expect_rc 0 ts apply "$TMP/same.yaml"
expect_rc 0 ts diff "$TMP/plain.yaml"
expect_rc 0 ts dump
if grep -q 'ceil_\|peak_' <<<"$OUT"; then fail "second specs like the rate's still dumped"; else pass "second specs like the rate's dump as nothing"; fi

# A peak spec without a peak rate is refused, at its line, and changes nothing.
printf 'version: 1\ndevices:\n  v1:\n    qdiscs:\n      - {kind: tbf, handle: "2:", rate: 1mbit, burst: 10kb, limit: 20kb,\n         peak_mpu: 80}\n' >"$TMP/bad.yaml"
expect_rc 1 ts apply "$TMP/bad.yaml"
expect_contains "bad.yaml:6:20: error: tbf's 'peak_mpu' needs 'peakrate'"

finish
