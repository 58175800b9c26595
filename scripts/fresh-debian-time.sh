#!/bin/bash
# Times ./run-demo.sh end to end as a fresh Debian 12 runs it: a debootstrap
# (minbase) root with nothing installed beyond it, no ccache, no build dir,
# and a clean checkout (git archive) of COMMIT. Each run starts from a copy
# of the same pristine root, so two commits are measured from equal ground.
#   scripts/fresh-debian-time.sh [COMMIT]     (default HEAD; needs root, debootstrap, ts)
# Env: FRESH_DIR  where the pristine root is kept between runs (/var/tmp/tcsync-fresh)
#      MIRROR     Debian mirror (http://deb.debian.org/debian)
#      KEEP=1     keep the run's root afterwards (it is kept anyway on failure)
# The run's output goes to FRESH_DIR/COMMIT.log with seconds since the start on
# each line (run-demo.sh is traced with bash -x, so its three steps show); the
# last line gives total, apt, build and demo seconds.
# The chroot runs in its own mount namespace: its /proc, /sys, /dev, /run and
# the demo's netns (bound under the chroot's /run/netns) vanish with it, also
# when the run fails or is killed.
set -euo pipefail

# Inside the private mount namespace: mount what the demo needs, run it.
if [ "${1:-}" = --inside ]; then
  root=$2
  mount --bind "$root" "$root"             # / a mount point: ip -n makes it rslave
  mount -t proc proc "$root/proc"
  mount -t sysfs sysfs "$root/sys"
  mount --rbind /dev "$root/dev"           # with /dev/pts
  mount -t tmpfs tmpfs "$root/run"         # ip netns add binds the netns under /run/netns
  exec chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c 'cd /root/tcsync && exec bash -x ./run-demo.sh'
fi

commit=${1:-HEAD}
repo=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
sha=$(git -C "$repo" rev-parse --short "$commit^{commit}")
dir=${FRESH_DIR:-/var/tmp/tcsync-fresh}
mirror=${MIRROR:-http://deb.debian.org/debian}
run=$dir/run-$sha
log=$dir/$sha.log

make_pristine() {
  [ -x "$dir/pristine/bin/bash" ] && return
  mkdir -p "$dir"
  debootstrap --variant=minbase bookworm "$dir/pristine" "$mirror"
}

# What a fresh install has that debootstrap does not write: the updates and
# security suites, a resolver. policy-rc.d keeps apt from starting daemons
# inside the chroot (they would outlive the run).
prepare_root() {
  cat >"$run/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb ${mirror%/debian}/debian-security bookworm-security main
EOF
  cp -L /etc/resolv.conf "$run/etc/resolv.conf"
  printf '#!/bin/sh\nexit 101\n' >"$run/usr/sbin/policy-rc.d"
  chmod +x "$run/usr/sbin/policy-rc.d"
  git -C "$repo" archive --prefix=tcsync/ "$sha" | tar -x -C "$run/root"
}

# Processes left inside the chroot would keep its mount namespace alive.
kill_leftovers() {
  local p
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/root" 2>/dev/null)" = "$run" ] && kill "${p#/proc/}" 2>/dev/null
  done
  return 0
}

# Seconds (since the start) of the first log line that starts with $1.
at() { awk -v m="$1" 'index(substr($0, index($0, " ") + 1), m) == 1 { print $1; exit }' "$log"; }

make_pristine
rm -rf "$run"
cp -a "$dir/pristine" "$run"
prepare_root
echo "# $sha on a fresh root; load before: $(uptime)" | tee "$log"
start=$(date +%s.%N)
rc=0
unshare --mount --propagation private -- "$(realpath "$0")" --inside "$run" 2>&1 | ts -s '%.s' >>"$log" || rc=$?
end=$(date +%s.%N)
kill_leftovers
build=$(at '+ scripts/build.sh')
demo=$(at '+ T=./build/tcsync')
summary=$(awk -v s="$sha" -v rc="$rc" -v t="$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" \
  -v b="${build:-0}" -v d="${demo:-0}" -v load="$(uptime | sed 's/.*average: //')" \
  'BEGIN { printf "%s exit %s: total %.0f s (apt %.0f s, build %.0f s, demo %.0f s); load after: %s\n",
           s, rc, t, b, d - b, t - d, load }')
echo "$summary" | tee -a "$log"
if [ "$rc" = 0 ] && [ "${KEEP:-0}" != 1 ]; then rm -rf "$run"; fi
exit "$rc"
