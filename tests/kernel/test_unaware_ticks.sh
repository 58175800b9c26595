#!/bin/bash
# Never silent: two values tc never makes but the kernel holds as another
# netlink tool sends them.
# - A rate spec's link layer 0 ("unaware"): the kernel keeps it where no
#   rate table comes with it, charges it as ethernet and reports 0. tcsync
#   reads it as `linklayer: unaware` (and a second spec's own as
#   `ceil_linklayer`/`peak_linklayer`), sends it back as 0; another of the
#   4 bits no word names (5) as its number.
# - Buckets held as ticks no byte count gives at their spec (a tool that
#   sends ticks: tbf's without TCA_TBF_BURST, htb's not as tc computes
#   them): tbf's `burst_ticks`/`mtu_ticks`, htb's `burst_ticks`/
#   `cburst_ticks`, sent back as ticks, so the kernel holds the same value.
# The state is made with tc, then changed over raw netlink (tc_struct.py).
# police's link layer 0 needs the lab (tests/lab/test_lab_unread.sh).
source "$(dirname "$0")/lib.sh"
make_ns
STRUCT="$(dirname "$0")/tc_struct.py"
st() { ip netns exec "$NS" python3 "$STRUCT" "$@"; }

t qdisc add dev v0 root handle 1: htb default 10
t class add dev v0 parent 1: classid 1:10 htb rate 10mbit ceil 20mbit
t qdisc add dev v1 root handle 2: tbf rate 1mbit burst 10k latency 50ms peakrate 2mbit mtu 1540
cat >"$TMP/plain.yaml" <<'YAML'
version: 1
devices:
  v1:
    qdiscs: [{kind: tbf, handle: "2:", rate: 1mbit, burst: 10kb, latency: 50ms, peakrate: 2mbit, mtu: 1540}]
  v0:
    qdiscs: [{kind: htb, handle: "1:", default: "1:10"}]
    classes: [{classid: "1:10", rate: 10mbit, ceil: 20mbit}]
YAML
expect_rc 0 ts diff "$TMP/plain.yaml"

# tc_htb_opt: the rate spec's link layer at 1 (the ceil's, at 13, stays
# ethernet); buffer and cbuffer at 24 and 28. tc_tbf_qopt: link layers at
# 1 and 13; the buffer at 28 and the mtu at 32. The ticks: one more than
# the kernel holds, which no byte count gives (a byte is 12.5 ticks at
# 10mbit, 6.25 at 20mbit, 128 at 1mbit, 64 at 2mbit). The changes carry no
# rate table nor TCA_TBF_BURST, as a tool sending ticks would.
two_u32() { python3 -c 'import struct,sys; b=bytes.fromhex(sys.stdin.read()); print(*struct.unpack_from("<II", b, int(sys.argv[1])))' "$1"; }
read -r buffer mtu <<<"$(st show qdisc v1 2: 1 | two_u32 28)"
read -r hbuffer hcbuffer <<<"$(st show class v0 1:10 1 | two_u32 24)"
st patch class v0 1:10 1 1:B:0 24:'<I':$((hbuffer + 1)) 28:'<I':$((hcbuffer + 1)) -- \
   patch qdisc v1 2: 1 1:B:0 13:B:0 28:'<I':$((buffer + 1)) 32:'<I':$((mtu + 1))

expect_rc 2 ts diff "$TMP/plain.yaml"
expect_contains "linklayer unaware -> ethernet"
expect_contains "ceil_linklayer ethernet -> (none)"
expect_contains "burst_ticks $((buffer + 1)) -> (none)"
expect_contains "mtu_ticks $((mtu + 1)) -> (none)"
expect_contains "burst_ticks $((hbuffer + 1)) -> (none)"
expect_contains "cburst_ticks $((hcbuffer + 1)) -> (none)"

raw() { st show class v0 1:10 1 -- show qdisc v1 2: 1; }
details() { TC_SNAPSHOT_DETAILS=1 snapshot; }
raw >"$TMP/raw.before"
details >"$TMP/tc.before"
echo "--- held structs (htb class, tbf):"; sed 's/^/    /' "$TMP/raw.before"

expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump.yaml"
echo "--- dump:"; sed 's/^/    /' "$TMP/dump.yaml"
n=$(grep -oF -e "linklayer: unaware" -e "ceil_linklayer: ethernet" -e "burst_ticks: $((buffer + 1))" -e "mtu_ticks: $((mtu + 1))" \
     -e "burst_ticks: $((hbuffer + 1))" -e "cburst_ticks: $((hcbuffer + 1))" "$TMP/dump.yaml" | wc -l || true)
[ "$n" = 7 ] && pass "dump has linklayer unaware (htb, tbf), ceil_linklayer, burst_ticks (htb, tbf), cburst_ticks, mtu_ticks" || fail "dump has $n of the 7 held fields"
expect_rc 0 ts diff "$TMP/dump.yaml"

# Flush, apply the dump: the kernel holds the same structs, tc shows the same.
expect_held_round_trip "$TMP/dump.yaml" t qdisc del dev v0 root -- t qdisc del dev v1 root

# Applying tc's file over it makes tc's state again (ethernet, bytes).
expect_rc 0 ts apply "$TMP/plain.yaml"
expect_rc 0 ts dump
if grep -q 'unaware\|_ticks' <<<"$OUT"; then fail "tc's file left a held value: $OUT"; else pass "tc's file applied: no unaware, no ticks"; fi
t qdisc del dev v0 root
t qdisc del dev v1 root
t qdisc add dev v0 root handle 1: htb default 10
t class add dev v0 parent 1: classid 1:10 htb rate 10mbit ceil 20mbit
t qdisc add dev v1 root handle 2: tbf rate 1mbit burst 10k latency 50ms peakrate 2mbit mtu 1540
raw >"$TMP/raw.tc"
expect_rc 0 ts apply "$TMP/dump.yaml"
expect_rc 0 ts apply "$TMP/plain.yaml"
raw >"$TMP/raw.back"
expect_same_file "$TMP/raw.tc" "$TMP/raw.back" "held -> tc's file: the structs tc makes"

# A link layer no word names: the kernel keeps the 4 bits as sent (charges
# all but atm as ethernet) and reports them; read as the number, not as a
# silent ethernet. The htb class's rate spec at 5, the tbf's peak at 9.
t qdisc del dev v0 root
t qdisc del dev v1 root
t qdisc add dev v0 root handle 1: htb default 10
t class add dev v0 parent 1: classid 1:10 htb rate 10mbit ceil 20mbit
t qdisc add dev v1 root handle 2: tbf rate 1mbit burst 10k latency 50ms peakrate 2mbit mtu 1540
expect_rc 0 ts diff "$TMP/plain.yaml"
st patch class v0 1:10 1 1:B:5 -- patch qdisc v1 2: 1 13:B:9
expect_rc 2 ts diff "$TMP/plain.yaml"
expect_contains "linklayer 5 -> ethernet"
expect_contains "peak_linklayer 9 -> (none)"
raw >"$TMP/raw.before"
details >"$TMP/tc.before"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump5.yaml"
n=$(grep -cE "(^|[ {])linklayer: \"?5\"?[,}]|peak_linklayer: \"?9\"?[,}]" "$TMP/dump5.yaml" || true)
[ "$n" = 2 ] && pass "dump has linklayer: 5 (htb class) and peak_linklayer: 9 (tbf)" || { fail "dump has $n of the 2 link layers"; cat "$TMP/dump5.yaml"; }
expect_held_round_trip "$TMP/dump5.yaml" t qdisc del dev v0 root -- t qdisc del dev v1 root
printf 'version: 1\ndevices:\n  v1:\n    qdiscs: [{kind: tbf, handle: "2:", rate: 1mbit, burst: 10kb, limit: 20kb, linklayer: 16}]\n' >"$TMP/ll16.yaml"
expect_rc 1 ts validate "$TMP/ll16.yaml"
expect_contains "'linklayer' cannot be '16'"

# burst_ticks with a burst it does not read as is refused at its line.
printf 'version: 1\ndevices:\n  v1:\n    qdiscs:\n      - {kind: tbf, handle: "2:", rate: 1mbit, burst: 10kb, limit: 20kb,\n         burst_ticks: 7}\n' >"$TMP/bad.yaml"
expect_rc 1 ts apply "$TMP/bad.yaml"
expect_contains "bad.yaml:6:23: error: burst_ticks 7 reads back as burst"

finish
