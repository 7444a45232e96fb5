#!/usr/bin/env bash
# What this x86_64 machine needs to build and run the arm64 test host, from Debian's packages. Idempotent; needs root.
# --no-install-recommends keeps binfmt-support out: nothing registers handlers at boot (build-disk.sh and images.sh
# register a foreign aarch64 handler for their builds only).
set -euo pipefail
need=()
for pkg in qemu-system-arm qemu-utils qemu-user-static mmdebstrap e2fsprogs openssh-client; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "arm64: installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
