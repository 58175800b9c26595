#!/bin/bash
# The Debian package end to end on this machine (Debian 12, root):
# packaging/build-deb.sh builds it with dpkg-buildpackage; apt installs it;
# the installed tcsync runs (--version), its man pages, completion, schemas,
# Ansible collection and units are where the package says, `systemd-analyze
# verify` accepts the installed units, the service is enabled and the path
# unit is not; an apply from /etc/tcsync goes into a throwaway namespace
# (the unit applies in the host's namespace: here --netns), also with only
# the capability the unit keeps (CAP_NET_ADMIN); apt purges it all.
# usage: test_deb.sh SOURCE_DIR
set -euo pipefail
SRC=$(cd "${1:?usage: $0 SOURCE_DIR}" && pwd)
if [ "$(id -u)" != 0 ]; then echo "SKIP: installs a package (root needed)"; exit 77; fi
for tool in dpkg-buildpackage dh go-md2man systemd-analyze; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool missing: run scripts/install-deps.sh --tests"; exit 1; }
done
if dpkg-query -W -f='${Status}' tcsync 2>/dev/null | grep -q "install ok installed"; then
  echo "FAIL: a tcsync package is installed already; this test installs and purges its own"; exit 1
fi

TMP=$(mktemp -d)
NS="tcs-deb-$$"
CONF=/etc/tcsync/ctest-$$-a.yaml CONF2=/etc/tcsync/ctest-$$-b.yaml
FAILS=0
installed=no
cleanup() {
  rm -f "$CONF" "$CONF2"
  ip netns del "$NS" 2>/dev/null || true
  if [ "$installed" = yes ]; then DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq tcsync >/dev/null 2>&1 || true; fi
  rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
pass() { echo "ok - $*"; }
fail() { echo "not ok - $*"; FAILS=$((FAILS + 1)); }
# (Checks read a pipe to its end, `grep -c`, never `grep -q`: under pipefail
# a writer cut off by an early exit (SIGPIPE) fails the check at random.)
check() { if eval "$2"; then pass "$1"; else fail "$1"; fi; }

start=$(date +%s)
# noopt (-O0): what is tested is the package's build, install and run path,
# not the optimiser, and CI has compiled the same code twice before this.
if ! DEB_BUILD_OPTIONS="nocheck noopt" DEB_BUILD_PROFILES=nocheck "$SRC/packaging/build-deb.sh" "$TMP/out" >"$TMP/build.log" 2>&1; then
  tail -40 "$TMP/build.log"
  fail "dpkg-buildpackage builds the package"
  exit 1
fi
DEB=$(ls "$TMP"/out/tcsync_*.deb)
pass "dpkg-buildpackage builds $(basename "$DEB") in $(($(date +%s) - start)) s"

dpkg-deb -c "$DEB" | awk '{print $6}' | sed 's|^\./|/|' >"$TMP/contents"
for f in /usr/sbin/tcsync /usr/share/man/man8/tcsync.8.gz /usr/share/man/man5/tcsync.yaml.5.gz \
  /usr/share/bash-completion/completions/tcsync /lib/systemd/system/tcsync.service /lib/systemd/system/tcsync.path /lib/systemd/system/tcsync-watch.service \
  /lib/systemd/system/tcsync-stats.service /lib/systemd/system/tcsync-stats.timer \
  /etc/tcsync/ /usr/share/tcsync/schemas/tcsync.schema.json /usr/share/tcsync/schemas/plan.schema.json \
  /usr/share/tcsync/schemas/stats.schema.json \
  /usr/share/ansible/collections/ansible_collections/tcsync/tcsync/plugins/modules/tcsync.py \
  /usr/share/tcsync/salt/_states/tcsync.py /usr/share/tcsync/salt/tcsync-salt-stateful \
  /usr/share/doc/tcsync/examples/htb-shaping.yaml; do
  check "the package has $f" 'grep -qx "$f" "$TMP/contents"'
done

installed=yes
if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$DEB" >"$TMP/apt.log" 2>&1; then
  pass "apt-get install ./$(basename "$DEB")"
else
  sed 's/^/    /' "$TMP/apt.log"; fail "apt-get install"; exit 1
fi
version=$(sed -n 's/^project(tcsync VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
check "tcsync --version says $version" '[ "$(/usr/sbin/tcsync --version)" = "tcsync $version" ]'
check "tcsync(8) and tcsync.yaml(5) render" 'zcat /usr/share/man/man8/tcsync.8.gz | grep -c "^\.SH EXIT STATUS" >/dev/null && zcat /usr/share/man/man5/tcsync.yaml.5.gz | grep -c "^\.SS filter u32" >/dev/null'
check "the completion is valid bash" 'bash -n /usr/share/bash-completion/completions/tcsync'
man_opt=--man=no
command -v man >/dev/null && man_opt=--man=yes
out=$(systemd-analyze verify $man_opt /lib/systemd/system/tcsync.service /lib/systemd/system/tcsync.path /lib/systemd/system/tcsync-watch.service \
      /lib/systemd/system/tcsync-stats.service /lib/systemd/system/tcsync-stats.timer 2>&1) && rc=0 || rc=$?
check "systemd-analyze verify $man_opt accepts the installed units" '[ "$rc" = 0 ] && [ -z "$out" ]'
[ -n "$out" ] && echo "$out" | sed 's/^/    /'
check "tcsync.service is enabled (runs at boot)" '[ -L /etc/systemd/system/multi-user.target.wants/tcsync.service ]'
check "tcsync.path is not enabled" '[ ! -e /etc/systemd/system/paths.target.wants/tcsync.path ]'
check "tcsync-watch.service is not enabled (the admin picks it or tcsync.service)" '[ ! -e /etc/systemd/system/multi-user.target.wants/tcsync-watch.service ]'
check "tcsync-stats.timer is not enabled" '[ ! -e /etc/systemd/system/timers.target.wants/tcsync-stats.timer ]'
if command -v ansible-doc >/dev/null; then
  check "ansible finds tcsync.tcsync.tcsync where the package put it" \
    'ANSIBLE_HOME=$TMP/ansible ANSIBLE_LOCAL_TEMP=$TMP/ansible ansible-doc tcsync.tcsync.tcsync 2>&1 | grep -c "Check mode runs" >/dev/null'
fi

# An apply from /etc/tcsync, into a throwaway namespace.
ip netns add "$NS"
ip -n "$NS" link set lo up
ip -n "$NS" link add v0 type veth peer name v1
ip -n "$NS" link set v0 up
ip -n "$NS" link set v1 up
# Two files, as a site would split its devices.
cat >"$CONF" <<'EOF'
version: 1
devices:
  v0:
    qdiscs: [{kind: tbf, handle: "1:", rate: 10mbit, burst: 10kb, limit: 30000}]
EOF
cat >"$CONF2" <<'EOF'
version: 1
devices:
  v1:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 10, protocol: ip, u32: {match: [{ip: {src: 10.0.0.0/8}}]},
         actions: [{mirred: {direction: egress, action: redirect, dev: v0}}]}
EOF
others=$(ls /etc/tcsync/*.yaml | grep -vx -e "$CONF" -e "$CONF2" || true)
files=/etc/tcsync/*.yaml
[ -z "$others" ] || { echo "# /etc/tcsync has other files ($others): applying only the test's"; files="$CONF $CONF2"; }
# The unit's command line (the shell expands the glob), with --netns.
check "tcsync --netns apply /etc/tcsync/*.yaml" '/usr/sbin/tcsync --netns "$NS" apply --wait $files >"$TMP/apply.out" 2>&1'
check "tc shows the applied state" 'tc -n "$NS" qdisc show dev v0 | grep -c "qdisc tbf 1: root" >/dev/null && tc -n "$NS" filter show dev v1 ingress | grep -c "Egress Redirect to device v0" >/dev/null'
check "diff is empty after apply" '/usr/sbin/tcsync --netns "$NS" diff $files >/dev/null'
# With only the capability tcsync.service keeps (CAP_NET_ADMIN), in the
# namespace as the unit runs in its own: drift is repaired.
tc -n "$NS" qdisc del dev v0 root || fail "tc qdisc del (making drift)"
capped() { ip netns exec "$NS" setpriv --bounding-set=-all,+net_admin --inh-caps=-all --no-new-privs /usr/sbin/tcsync "$@"; }
check "apply with CAP_NET_ADMIN only" 'capped apply --wait $files >"$TMP/capped.out" 2>&1'
check "... repaired the drift" 'tc -n "$NS" qdisc show dev v0 | grep -c "qdisc tbf 1: root" >/dev/null && capped diff $files >/dev/null'
rm -f "$CONF" "$CONF2"

installed=no
check "apt-get purge tcsync" 'DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq tcsync >"$TMP/purge.log" 2>&1'
check "purge removed the binary, the units and the unit links" \
  '[ ! -e /usr/sbin/tcsync ] && [ ! -e /lib/systemd/system/tcsync.service ] && [ ! -e /etc/systemd/system/multi-user.target.wants/tcsync.service ]'
echo "# total $(($(date +%s) - start)) s"
[ "$FAILS" = 0 ] && echo "all checks passed" || { echo "$FAILS check(s) failed"; exit 1; }
