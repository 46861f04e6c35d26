#!/usr/bin/env bash
# Installs every build and test dependency of tunefarm from Debian 12 packages.
# Safe to run again: apt-get skips what is already installed.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config python3
  libonnx-dev python3-onnx python3-numpy
  llvm-16-dev libllvm16 clang-14 libclang-rt-14-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libsqlite3-dev sqlite3 openssl
  libxgboost-dev libeigen3-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev libtomlplusplus-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  libdnnl-dev libopenblas-dev
  qemu-user g++-aarch64-linux-gnu file
  zlib1g-dev libzstd-dev libedit-dev libxml2-dev libffi-dev
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  echo "tunefarm setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "tunefarm setup: all Debian packages present"
fi

if [ -x /usr/local/cuda/bin/nvcc ]; then
  echo "tunefarm setup: CUDA toolkit found at /usr/local/cuda"
else
  echo "tunefarm setup: no CUDA toolkit at /usr/local/cuda (CUDA backend disabled)"
fi
