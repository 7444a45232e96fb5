#!/usr/bin/env bash
# Build the local images the tests use; nothing can be pulled here.
#   local/debian:{12,13}-minbase       debootstrap --variant=minbase + docker import
#   aisbench-test/debian-systemd:{12,13}  + systemd as PID 1, python3: Molecule targets
#   local/busybox:latest               Debian's busybox-static alone (2 MB): a container to run in tests
#   $work/debian-12-minbase.tar         docker save of local/debian:12-minbase: the sample tasks' upstream image,
#                                       loaded by baked_images in the demo and e2e targets (air-gapped style)
#   $work/debian-13-minbase.tar         docker save of local/debian:13-minbase: the agent toolchains' builder base,
#                                       loaded by baked_images in the agents target
# Images that already exist are kept (FORCE=1 rebuilds).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
work=${IMAGES_WORKDIR:-/var/tmp/aisbench-images}
declare -A suites=([12]=bookworm [13]=trixie)

have() { [ -z "${FORCE:-}" ] && docker image inspect "$1" >/dev/null 2>&1; }

for version in 12 13; do
  suite=${suites[$version]}
  if ! have "local/debian:${version}-minbase"; then
    start=$(date +%s)
    rm -rf "${work:?}/$suite" && mkdir -p "$work"
    debootstrap --variant=minbase "$suite" "$work/$suite" "$mirror" >"$work/$suite.log" 2>&1 \
      || { tail -20 "$work/$suite.log" >&2; exit 1; }
    tar -C "$work/$suite" -c . | docker import -c 'CMD ["/bin/bash"]' - "local/debian:${version}-minbase" >/dev/null
    rm -rf "${work:?}/$suite"
    echo "images: local/debian:${version}-minbase built in $(( $(date +%s) - start )) s"
  fi
done

for version in 12 13; do
  if ! have "aisbench-test/debian-systemd:${version}"; then
    start=$(date +%s)
    docker build -q --build-arg "BASE=local/debian:${version}-minbase" \
      -t "aisbench-test/debian-systemd:${version}" -f "$here/systemd.Dockerfile" "$here" 2> >(grep -v -E "DEPRECATED|legacy builder|buildx|^ *$" >&2) >/dev/null
    echo "images: aisbench-test/debian-systemd:${version} built in $(( $(date +%s) - start )) s"
  fi
done
if ! have local/busybox:latest; then
  rm -rf "$work/busybox" && mkdir -p "$work/busybox/deb" "$work/busybox/root/bin"
  (cd "$work/busybox/deb" && apt-get download -q busybox-static >/dev/null 2>&1 && dpkg-deb -x ./*.deb .)
  cp "$work/busybox/deb/bin/busybox" "$work/busybox/root/bin/busybox"
  for applet in sh ls cat echo sleep true false uname id env wget; do ln -s busybox "$work/busybox/root/bin/$applet"; done
  tar -C "$work/busybox/root" -c . | docker import -c 'CMD ["/bin/sh"]' -c 'ENV PATH=/bin' - local/busybox:latest >/dev/null
  rm -rf "$work/busybox"
  echo "images: local/busybox:latest built"
fi

# The images may outlive the work directory (a kept Docker data root, a cleaned /var/tmp).
mkdir -p "$work"
for version in 12 13; do
  minbase_tar="$work/debian-$version-minbase.tar"
  minbase_id=$(docker image inspect -f '{{.Id}}' "local/debian:$version-minbase")
  if [ ! -s "$minbase_tar" ] || [ "$(cat "$minbase_tar.id" 2>/dev/null)" != "$minbase_id" ]; then
    docker save -o "$minbase_tar.tmp" "local/debian:$version-minbase" && chmod 0644 "$minbase_tar.tmp" && mv "$minbase_tar.tmp" "$minbase_tar"
    echo "$minbase_id" >"$minbase_tar.id"
    echo "images: $minbase_tar written"
  fi
done

docker images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E "^(local/|aisbench-test/)" | sort
