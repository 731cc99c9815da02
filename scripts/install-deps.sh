#!/usr/bin/env bash
# Installs SCIN Explorer's build and test dependencies from Debian 12 packages.
# Idempotent: packages already present are skipped by apt-get. Nothing else is downloaded.
set -euo pipefail

PKGS=(
  build-essential cmake ninja-build ccache pkg-config git
  libtbb-dev libsqlite3-dev nlohmann-json3-dev libfmt-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin   # scin sweep across processes (mpirun / srun), docs/cluster.md
  qt6-base-dev qt6-base-dev-tools qt6-charts-dev qt6-svg-dev libqt6opengl6-dev
  libgl1-mesa-dev xvfb xauth fonts-dejavu-core
  # packaging (scripts/package.sh) and its test (tests/packaging): man pages,
  # icons, the .deb and the checks on it
  help2man librsvg2-bin dpkg-dev file lintian desktop-file-utils appstream
  shared-mime-info libglib2.0-bin man-db bash-completion
  clang libclang-rt-14-dev   # scripts/sanitize.sh and scripts/fuzz.sh: libFuzzer, ASan, UBSan
)

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
