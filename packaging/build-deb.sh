#!/bin/bash
# Builds the Debian package (Debian 12) from this source tree.
#
#   packaging/build-deb.sh [OUTDIR]        (default OUTDIR: ./deb-out)
#
# dpkg-buildpackage needs ./debian at the source root; the packaging lives in
# packaging/debian so the tree stays a plain CMake project. This script copies
# the tree (without .git and build directories) to a temporary directory,
# puts packaging/debian there as debian/, builds binary packages only, and
# moves tcsync_VERSION_ARCH.deb (with .buildinfo and .changes) to OUTDIR. The
# working tree is never written to.
#
# Build dependencies: see packaging/debian/control (scripts/install-deps.sh
# installs them). Environment: DEB_BUILD_OPTIONS=nocheck skips the unit tests
# (with DEB_BUILD_PROFILES=nocheck their build dependencies too).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
OUT=$(realpath -m "${1:-$SRC/deb-out}")
WORK=$(mktemp -d /tmp/tcsync-deb.XXXXXX)
trap 'rm -rf "$WORK"' EXIT INT TERM

# The changelog's version is the CMake project's.
cmake_version=$(sed -n 's/^project(tcsync VERSION \([0-9.]*\).*/\1/p' "$SRC/CMakeLists.txt")
deb_version=$(dpkg-parsechangelog -l "$SRC/packaging/debian/changelog" -S Version)
if [ "${deb_version%%-*}" != "$cmake_version" ]; then
  echo "packaging/debian/changelog says $deb_version, CMakeLists.txt says $cmake_version: add a changelog entry (dch -v $cmake_version)" >&2
  exit 1
fi

mkdir -p "$WORK/tcsync" "$OUT"
tar -C "$SRC" --exclude=./.git --exclude='./build*' --exclude=./deb-out --exclude=./debian -cf - . | tar -C "$WORK/tcsync" -xf -
cp -r "$SRC/packaging/debian" "$WORK/tcsync/debian"
(cd "$WORK/tcsync" && dpkg-buildpackage -b -us -uc -j"$(nproc)")
mv "$WORK"/tcsync_*.deb "$WORK"/tcsync_*.buildinfo "$WORK"/tcsync_*.changes "$OUT"/
ls "$OUT"/tcsync_*.deb
