#!/usr/bin/env bash
# The images the arm64 test host gets, as an air-gapped arm64 site would: built once on this x86_64 machine through
# an aarch64 binfmt handler (foreign here) and put on the share the host mounts read-only.
#   local/debian:13-minbase-arm64      mmdebstrap --variant=minbase of Debian 13 for arm64, imported for linux/arm64
#   aisbench/agent-runtime:TAG         the runtime_image role's build for arm64 (runtime_image_architecture=arm64)
#   $AISBENCH_ARM64_SHARE/agent-runtime-arm64.tar   its docker save (rewritten only when the image changed)
#   $AISBENCH_ARM64_SHARE/debian-12-minbase.tar     the sample tasks' x86_64 upstream image (make images), linked
# Usage: images.sh RUNTIME_IMAGE_TAG. Needs root, the virtualenv (make venv) and the x86_64 images (make images).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/arm64/lib.sh
. "$here/lib.sh"
tag=${1:?usage: images.sh RUNTIME_IMAGE_TAG}
images_dir=${AISBENCH_IMAGES_DIR:-/var/tmp/aisbench-images}
mkdir -p "$AISBENCH_ARM64_SHARE" "$AISBENCH_ARM64_DIR"

exec 9>"$AISBENCH_BINFMT_LOCK"
flock 9
handler=$(arm64_binfmt_acquire)
trap 'arm64_binfmt_release "$handler"' EXIT

base=local/debian:13-minbase-arm64
if ! docker image inspect "$base" >/dev/null 2>&1 || [ -n "${FORCE:-}" ]; then
  start=$(date +%s)
  work=$AISBENCH_ARM64_DIR/minbase
  rm -rf "$work" && mkdir -p "$work"
  mmdebstrap --architectures=arm64 --variant=minbase --mode=root --format=tar \
    --hook-dir=/usr/share/mmdebstrap/hooks/eatmydata trixie "$work/rootfs.tar" "$DEBIAN_MIRROR" >"$work/mmdebstrap.log" 2>&1 \
    || { tail -20 "$work/mmdebstrap.log" >&2; exit 1; }
  # docker import ignores --platform on an engine without experimental features; a build from scratch honours it.
  printf 'FROM scratch\nADD rootfs.tar /\nCMD ["/bin/bash"]\n' >"$work/Dockerfile"
  docker build -q --platform linux/arm64 -t "$base" "$work" >/dev/null
  rm -rf "$work"
  arm64_log "$base built in $(( $(date +%s) - start )) s"
fi
[ "$(docker image inspect -f '{{.Architecture}}' "$base")" = arm64 ] || { arm64_log "$base is not arm64"; exit 1; }

start=$(date +%s)
# Harbor's and the gateway's pip installs run under qemu-user here (about an hour each on 2 busy cores) and stay silent
# for longer than the default build timeout. The Harbor version is pinned for the same reason: a new one rebuilds
# both layers (docs/arm64.md).
"$repo/.venv/bin/ansible-playbook" "$repo/tests/images/runtime-image.yml" \
  -e runtime_image_architecture=arm64 -e runtime_image_base="$base" -e runtime_image_tag="$tag" \
  -e runtime_image_harbor_version="${AISBENCH_ARM64_HARBOR_VERSION:?set by make (ARM64_HARBOR_VERSION)}" \
  -e runtime_image_build_dir="$AISBENCH_ARM64_DIR/runtime-image" -e runtime_image_build_timeout=7200 \
  -e runtime_image_export_path="$AISBENCH_ARM64_SHARE/agent-runtime-arm64.tar"
arm64_log "runtime image $tag for arm64 current in $(( $(date +%s) - start )) s"

ln -f "$images_dir/debian-12-minbase.tar" "$AISBENCH_ARM64_SHARE/debian-12-minbase.tar"
