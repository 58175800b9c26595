#!/bin/bash
# Installs what tcsync needs to build and test, from Debian 12's packages.
# Idempotent: skips apt when everything is already there.
set -euo pipefail
PKGS=(build-essential cmake pkg-config libnl-3-dev libnl-route-3-dev libyaml-dev libbpf-dev
      libcli11-dev catch2 iproute2 iputils-ping python3 python3-jsonschema python3-yaml
      clang-14 libclang-rt-14-dev  # clang: the sanitizer and libFuzzer build, and BPF test programs (-target bpf)
      ansible-core debhelper dpkg-dev go-md2man systemd  # packaging tests: playbook run, .deb, man pages, systemd-analyze
      qemu-system-x86 linux-image-amd64 busybox-static cpio kmod)  # the kernel lab: tests/lab, docs/lab.md
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
