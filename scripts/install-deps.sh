#!/bin/bash
# Installs what tcsync needs, from Debian 12's packages. Idempotent: skips
# apt when everything is already there.
#   scripts/install-deps.sh          what building and running need (the demo)
#   scripts/install-deps.sh --tests  that, and what the whole test suite needs
set -euo pipefail
PKGS=(build-essential cmake pkg-config libnl-3-dev libyaml-dev libbpf-dev
      libcli11-dev nlohmann-json3-dev libsystemd-dev iproute2)
if [ "${1:-}" = --tests ]; then
  PKGS+=(catch2 iputils-ping python3 python3-jsonschema python3-yaml
         python3-prometheus-client graphviz  # stats: a real exposition parser; dot -Tsvg of the tree
         strace  # test_echo_verify: the size of each sendmsg
         clang-14 libclang-rt-14-dev clang-format  # clang-format: tests/layers/check_format.sh; clang: the sanitizer and libFuzzer build, and BPF test programs (-target bpf)
         ansible-core debhelper dpkg-dev go-md2man systemd  # packaging tests: playbook run, .deb, man pages, systemd-analyze
         qemu-system-x86 linux-image-amd64 busybox-static cpio kmod)  # the kernel lab: tests/lab, docs/lab.md
fi
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
