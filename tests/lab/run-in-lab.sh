#!/bin/bash
# run-in-lab.sh -- runs one test script inside Debian's full kernel (every tc
# module) under QEMU's software emulation, and returns the script's exit code.
#
#   usage: run-in-lab.sh SCRIPT [ARG...]
#
# The guest mounts the host's / read-only over 9p and chroots into it, so it
# runs the host's bash, tc, ip, python3 and the tcsync binary just built; one
# fresh host directory is shared writable (the script's cwd and TMPDIR). The
# guest's module requests go to the host's modprobe and /lib/modules.
# SCRIPT's output is printed when the guest stops; the guest is killed after
# LAB_TIMEOUT seconds (default 900), and the directory is removed either way
# (LAB_KEEP=1 keeps it). The kernel and initramfs are prepared once per
# kernel version in TCSYNC_LAB_CACHE (default /var/cache/tcsync-lab).
# Settings: LAB_MEM (MiB, default 1024), LAB_SMP (default 1), LAB_TIMEOUT.
#
# A script with the line "# lab-init: systemd" runs under the host's systemd
# as PID 1 instead (docs/lab.md "systemd as PID 1"): the guest's root is the
# host's / read-only under a tmpfs overlay, without the host's enabled units,
# and the script runs twice: LAB_PHASE=boot in a chroot before systemd starts
# (to install what the boot should see), then LAB_PHASE=run as a service
# once multi-user.target is reached.
set -euo pipefail

die() { echo "lab: $*" >&2; exit 1; }
[ $# -ge 1 ] || die "usage: $0 SCRIPT [ARG...]"
SCRIPT=$(realpath "$1"); shift
[ -f "$SCRIPT" ] || die "no such script: $SCRIPT"

# ---- what the host must have (scripts/install-deps.sh --tests installs it) ---------
missing=()
command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
command -v cpio >/dev/null || missing+=(cpio)
file_is_static() { [ -x "$1" ] && ! ldd "$1" >/dev/null 2>&1; }
file_is_static /bin/busybox || missing+=(busybox-static)
command -v python3 >/dev/null || missing+=(python3)
command -v modprobe >/dev/null || missing+=(kmod)
KVER=""
for d in $(ls -d /lib/modules/*-amd64 2>/dev/null | sort -V); do
  v=$(basename "$d")
  [ -f "$d/modules.dep" ] && [ -f "/boot/vmlinuz-$v" ] && KVER=$v
done
[ -n "$KVER" ] || missing+=(linux-image-amd64)
if grep -q '^# lab-init: systemd$' "$SCRIPT"; then
  [ -x /lib/systemd/systemd ] || missing+=(systemd)
fi
if [ ${#missing[@]} -gt 0 ]; then
  die "missing ${missing[*]}: run scripts/install-deps.sh as root (the kernel lab needs them)"
fi

# ---- kernel and initramfs, built once per kernel version and harness -------
CACHE=${TCSYNC_LAB_CACHE:-/var/cache/tcsync-lab}
mkdir -p "$CACHE" 2>/dev/null && [ -w "$CACHE" ] || CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/tcsync-lab
mkdir -p "$CACHE"
STAMP=$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)
VMLINUX=$CACHE/vmlinux-$KVER
INITRD=$CACHE/initrd-$KVER-$STAMP.cpio.gz

build_cache() {
  # The uncompressed ELF kernel boots directly (PVH entry point): under TCG
  # that halves the boot, which otherwise spends its time decompressing.
  if [ ! -s "$VMLINUX" ]; then
    python3 - "/boot/vmlinuz-$KVER" "$VMLINUX.tmp" <<'PY'
import lzma, struct, sys, zlib
img = open(sys.argv[1], "rb").read()
setup_sects = img[0x1F1] or 4                      # bzImage setup header
payload_off, payload_len = struct.unpack_from("<II", img, 0x248)
start = (setup_sects + 1) * 512 + payload_off
payload = img[start:start + payload_len]
if payload.startswith(b"\xfd7zXZ\x00"):
    elf = lzma.LZMADecompressor().decompress(payload)
elif payload.startswith(b"\x1f\x8b"):
    elf = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(payload)
else:
    sys.exit("unknown kernel compression: %r" % payload[:6])
if not elf.startswith(b"\x7fELF"):
    sys.exit("decompressed kernel is not an ELF image")
open(sys.argv[2], "wb").write(elf)
PY
    mv "$VMLINUX.tmp" "$VMLINUX"
  fi
  if [ ! -s "$INITRD" ]; then
    local root
    root=$(mktemp -d)
    mkdir -p "$root"/{bin,sbin,proc,sys,dev,host,lib/modules}
    cp /bin/busybox "$root/bin/busybox"
    for applet in sh mount insmod chroot poweroff cat mkdir ln sync echo rm tr switch_root; do ln -s busybox "$root/bin/$applet"; done
    # virtio-pci and 9p with their dependencies, in load order (modprobe
    # prints built-in ones as "builtin": nothing to load).
    modprobe -a --show-depends -S "$KVER" virtio_pci 9pnet_virtio 9p | awk '$1 == "insmod" && !seen[$2]++ { print $2 }' |
      while read -r ko; do
        cp "$ko" "$root/lib/modules/"
        basename "$ko" >>"$root/lib/modules/order"
      done
    # overlayfs, for systemd as PID 1 only (loaded there).
    modprobe --show-depends -S "$KVER" overlay | awk '$1 == "insmod" { print $2 }' |
      while read -r ko; do
        cp "$ko" "$root/lib/modules/"
        basename "$ko" >>"$root/lib/modules/order.systemd"
      done
    cat >"$root/init" <<'INIT'
#!/bin/sh
# PID 1 of the lab guest: mount the host, run the job, power off.
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
INIT=
for arg in $(cat /proc/cmdline); do
  case "$arg" in lab.dir=*) DIR=${arg#lab.dir=} ;; lab.init=*) INIT=${arg#lab.init=} ;; esac
done
for m in $(cat /lib/modules/order 2>/dev/null); do insmod /lib/modules/$m; done
P9="trans=virtio,version=9p2000.L,msize=262144"
H=/host
mount -t 9p -o "$P9,ro,cache=loose" hostroot $H || { echo "lab: cannot mount the host root"; poweroff -f; }
ENV="HOME=/root TMPDIR=$DIR/tmp LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
if [ "$INIT" = systemd ]; then
  # systemd writes /etc, /var and /run, and the test installs units and a
  # binary: the host's root read-only under a tmpfs overlay (lost at power
  # off, the host untouched).
  R=/newroot
  for m in $(cat /lib/modules/order.systemd 2>/dev/null); do insmod /lib/modules/$m; done
  mkdir -p /rw $R
  mount -t tmpfs -o mode=755 tmpfs /rw
  mkdir -p /rw/upper /rw/work
  mount -t overlay -o lowerdir=$H,upperdir=/rw/upper,workdir=/rw/work overlay $R || { echo "lab: cannot mount the overlay root"; poweroff -f; }
  mount -t proc proc $R/proc
  mount -t sysfs sysfs $R/sys
  mount -t devtmpfs devtmpfs $R/dev
  mount -t 9p -o "$P9" labdir "$R$DIR" || { echo "lab: cannot mount the lab directory"; poweroff -f; }
  # Until switch_root, module requests go to the new root's modprobe; after
  # it, /sbin/modprobe is that one itself.
  printf '#!/bin/sh\nexec /bin/chroot /newroot /sbin/modprobe "$@"\n' >/sbin/modprobe
  /bin/busybox chmod 755 /sbin/modprobe
  echo /sbin/modprobe >/proc/sys/kernel/modprobe
  # The host's enabled units are the host's (its disks in fstab, its
  # network, timers, services): none of them. Of what the vendor units pull
  # in at boot only journald runs (the tests read the journal); the rest is
  # masked (udev, mounts, tmpfiles, which would also empty /tmp, logins,
  # gettys, dbus...): under TCG a unit's process costs 0.5-1.5 s, and a boot
  # with them took 53 s of userspace, 8.5 s without them and the generators.
  U=$R/etc/systemd/system
  rm -rf $U $R/etc/fstab $R/etc/crypttab $R/.dockerenv $R/run/.containerenv
  mkdir -p $U/multi-user.target.wants
  echo "# lab: no file systems but the root" >$R/etc/fstab
  for w in sysinit sockets local-fs multi-user timers basic; do
    for f in $H/lib/systemd/system/$w.target.wants/*; do
      u=${f##*/}
      case "$u" in systemd-journald.service|systemd-journald.socket|systemd-journald-dev-log.socket|\*) ;; *) ln -sf /dev/null $U/$u ;; esac
    done
  done
  for u in getty.target systemd-remount-fs.service systemd-tmpfiles-setup.service systemd-tmpfiles-setup-dev.service \
      modprobe@.service systemd-journal-flush.service systemd-journald-audit.socket tmp.mount \
      systemd-networkd-wait-online.service NetworkManager-wait-online.service ifupdown-wait-online.service; do
    ln -sf /dev/null $U/$u
  done
  # Generators (fstab, gpt-auto, sysv, getty, the host's own...) are one
  # process each and make units of host things: none either.
  for d in system-generators system-environment-generators; do
    mkdir -p $R/etc/systemd/$d
    for f in $H/lib/systemd/$d/* $H/usr/lib/systemd/$d/*; do
      [ -e "$f" ] && ln -sf /dev/null $R/etc/systemd/$d/${f##*/}
    done
  done
  ln -s /lib/systemd/system/multi-user.target $U/default.target
  [ -s $R/etc/machine-id ] || tr -d - </proc/sys/kernel/random/uuid >$R/etc/machine-id
  # The job: after multi-user.target (boot done), then power off.
  printf '#!/bin/sh\n/bin/bash "$1/job.sh"\necho $? >"$1/rc"\nsync\nexec systemctl poweroff --force --force\n' >$R/sbin/lab-job
  /bin/busybox chmod 755 $R/sbin/lab-job
  cat >$U/lab-job.service <<UNIT
[Unit]
Description=Lab job (run-in-lab.sh)
After=multi-user.target
[Service]
Type=simple
Environment=$ENV LAB_PHASE=run
ExecStart=/sbin/lab-job $DIR
UNIT
  ln -s ../lab-job.service $U/multi-user.target.wants/lab-job.service
  ln -s /proc/self/fd $R/dev/fd
  chroot $R /usr/bin/env -i $ENV LAB_PHASE=boot /bin/bash "$DIR/job.sh"
  rc=$?
  if [ $rc != 0 ]; then echo $rc >"$R$DIR/rc"; sync; poweroff -f; fi
  exec switch_root $R /lib/systemd/systemd
fi
mount -t proc proc $H/proc
mount -t sysfs sysfs $H/sys
mount -t devtmpfs devtmpfs $H/dev
mkdir -p $H/dev/pts $H/dev/shm
ln -s /proc/self/fd $H/dev/fd   # process substitution <(...) needs /dev/fd
ln -s /proc/self/fd/0 $H/dev/stdin
ln -s /proc/self/fd/1 $H/dev/stdout
ln -s /proc/self/fd/2 $H/dev/stderr
mount -t devpts devpts $H/dev/pts
mount -t tmpfs tmpfs $H/dev/shm
mount -t tmpfs tmpfs $H/run
mount -t 9p -o "$P9" labdir "$H$DIR" || { echo "lab: cannot mount the lab directory"; poweroff -f; }
# Module autoloading (tc kinds, veth...): the host's kmod and /lib/modules.
printf '#!/bin/sh\nexec /bin/chroot /host /sbin/modprobe "$@"\n' >/sbin/modprobe
/bin/busybox chmod 755 /sbin/modprobe
echo /sbin/modprobe >/proc/sys/kernel/modprobe
chroot $H /sbin/ip link set lo up
chroot $H /usr/bin/env -i $ENV /bin/bash "$DIR/job.sh"
echo $? >"$H$DIR/rc"
sync
poweroff -f
INIT
    chmod 755 "$root/init"
    (cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$INITRD.tmp"
    mv "$INITRD.tmp" "$INITRD"
    rm -rf "$root"
    find "$CACHE" -maxdepth 1 -name "initrd-$KVER-*.cpio.gz" ! -name "$(basename "$INITRD")" -delete  # older harness revisions
  fi
}
# Parallel test runs share the cache: one builds, the others wait.
exec 9>"$CACHE/.lock"
flock 9
build_cache
flock -u 9
exec 9>&-

# ---- one run: a fresh shared directory, the guest, the result --------------
DIR=$(mktemp -d /tmp/tcsync-lab.XXXXXX)
QPID=""
cleanup() {
  [ -n "$QPID" ] && kill "$QPID" 2>/dev/null && wait "$QPID" 2>/dev/null
  if [ "${LAB_KEEP:-0}" = 1 ]; then echo "lab: kept $DIR" >&2; else rm -rf "$DIR"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$DIR/tmp"
{
  echo "cd '$DIR'"
  # The guest starts from an empty environment: pass on what tests read.
  for v in TCSYNC_EXAMPLES ATOMIC_RULES FW_STRACE RUNS SCENARIOS TDC_TIMEOUT LAB_SCRIPTS; do
    [ -n "${!v:-}" ] && printf 'export %s=%q\n' "$v" "${!v}"
  done
  printf 'exec /bin/bash %q' "$SCRIPT"
  printf ' %q' "$@"
  echo ' >>log 2>&1'  # appends: a systemd job runs twice
} >"$DIR/job.sh"

INIT_ARGS=""
if grep -q '^# lab-init: systemd$' "$SCRIPT"; then
  # systemd's own switches on the kernel command line: no status lines, no
  # first-boot prompt, no gpt-auto, fstab or LUKS units (the init also
  # disables the generators that read them).
  INIT_ARGS=" lab.init=systemd systemd.show_status=0 systemd.firstboot=0 systemd.gpt_auto=0 fstab=0 luks=0"
fi
TIMEOUT=${LAB_TIMEOUT:-900}
start=$(date +%s%N)
timeout --kill-after=10 "$TIMEOUT" qemu-system-x86_64 \
  -accel tcg -cpu max -M q35 -m "${LAB_MEM:-1024}" -smp "${LAB_SMP:-1}" \
  -nographic -no-reboot -nodefaults -serial "file:$DIR/console" -monitor none \
  -kernel "$VMLINUX" -initrd "$INITRD" \
  -append "console=ttyS0 quiet loglevel=3 panic=-1 no_timer_check rdinit=/init lab.dir=$DIR$INIT_ARGS" \
  -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
  -virtfs "local,path=$DIR,mount_tag=labdir,security_model=none" </dev/null >"$DIR/qemu.out" 2>&1 &
QPID=$!
qrc=0
wait "$QPID" || qrc=$?
QPID=""
ms=$(( ($(date +%s%N) - start) / 1000000 ))

[ -f "$DIR/log" ] && cat "$DIR/log"
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
  echo "lab: the guest did not finish within ${TIMEOUT}s: killed" >&2
  tail -n 20 "$DIR/console" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' >&2 || true
  exit 124
fi
if [ ! -f "$DIR/rc" ]; then
  echo "lab: the guest stopped without a result (qemu exit $qrc); console and qemu output:" >&2
  tail -n 30 "$DIR/console" "$DIR/qemu.out" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' >&2 || true
  exit 125
fi
rc=$(cat "$DIR/rc")
printf 'lab: %s exited %s; VM wall time %d.%03d s (kernel %s)\n' "$(basename "$SCRIPT")" "$rc" $((ms / 1000)) $((ms % 1000)) "$KVER"
exit "$rc"
