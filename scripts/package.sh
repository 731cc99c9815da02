#!/usr/bin/env bash
# Builds the Debian package of SCIN Explorer: installs the dependencies, makes a
# Release build (tests and benchmarks off) with Debian's hardening flags
# (dpkg-buildflags, as dpkg-buildpackage would), then the package with CPack:
# ./scin-explorer_VERSION-REVISION_ARCH.deb, checked by tests/packaging/check_package.sh.
# Install it with
#     sudo apt install ./scin-explorer_*.deb
# Usage: scripts/package.sh [BUILD_DIR]      (default: build-release)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
build=${1:-build-release}
JOBS=$(nproc 2>/dev/null || echo 2)

export DEB_BUILD_MAINT_OPTIONS=hardening=+all
cxxflags="$(dpkg-buildflags --get CXXFLAGS) $(dpkg-buildflags --get CPPFLAGS)"
ldflags=$(dpkg-buildflags --get LDFLAGS)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSCIN_BUILD_TESTS=OFF -DSCIN_BUILD_BENCH=OFF \
  -DCMAKE_CXX_FLAGS="$cxxflags" -DCMAKE_EXE_LINKER_FLAGS="$ldflags"
cmake --build "$build" -j "$JOBS"
rm -f "$build"/packages/*.deb
cmake --build "$build" --target package-deb
deb=$(basename "$(ls "$build"/packages/*.deb)")
cp "$build/packages/$deb" .
echo
dpkg-deb --field "$deb"
echo
# The packaging test's checks (lintian, desktop-file-validate, appstreamcli, a
# scratch install that runs both programs), on this Release package.
bash tests/packaging/check_package.sh --deb "$deb"
echo
echo "built ./$deb; install it with: sudo apt install ./$deb"
