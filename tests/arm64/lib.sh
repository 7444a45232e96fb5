# shellcheck shell=bash
# Shared settings of the arm64 test host (sourced by the scripts in tests/arm64/).
# Everything lives under AISBENCH_ARM64_DIR (default /var/tmp/aisbench-arm64): the cached disk, kernel and initrd
# (by content key), the SSH key, the run's overlay disk, the serial log and the QEMU pid file.
AISBENCH_ARM64_DIR=${AISBENCH_ARM64_DIR:-/var/tmp/aisbench-arm64}
AISBENCH_ARM64_SSH_PORT=${AISBENCH_ARM64_SSH_PORT:-2222}
AISBENCH_ARM64_MEMORY=${AISBENCH_ARM64_MEMORY:-6144}
AISBENCH_ARM64_CPUS=${AISBENCH_ARM64_CPUS:-2}
AISBENCH_ARM64_DISK_SIZE=${AISBENCH_ARM64_DISK_SIZE:-40G}
# The host directory the VM sees read-only at the same path (9p): image tars, as an NFS share would hold them.
AISBENCH_ARM64_SHARE=${AISBENCH_ARM64_SHARE:-$AISBENCH_ARM64_DIR/share}
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Serialises everything that touches this host's binfmt_misc (host-global; the qemu_binfmt scenario takes it too
# when it runs beside this).
AISBENCH_BINFMT_LOCK=${AISBENCH_BINFMT_LOCK:-/tmp/aisbench-host-binfmt.lock}

arm64_log() { echo "arm64: $*" >&2; }

# Register a foreign aarch64 handler on this x86_64 host for as long as a build needs it (mmdebstrap and docker
# build run arm64 programs through it). Never the host's own arch: this refuses on anything but x86_64. A handler
# that already runs aarch64 binaries is used as it is (and removed afterwards if it has our name: a killed build left it).
# Prints the name of the handler to release ("" if none).
AISBENCH_BUILD_HANDLER=aisbench-arm64-build
arm64_binfmt_acquire() {
  [ "$(uname -m)" = x86_64 ] || { arm64_log "refusing to register an aarch64 handler on a $(uname -m) host"; return 1; }
  [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
  local entry
  for entry in /proc/sys/fs/binfmt_misc/*; do
    case "$(basename "$entry")" in register | status) continue ;; esac
    if grep -q '^enabled' "$entry" && grep -q '^flags:.*F' "$entry" && grep -q "^magic 7f454c460201010000000000000000000200b700" "$entry"; then
      # Our own name: left by a build that was killed before its release; this build owns it now.
      [ "$(basename "$entry")" = "$AISBENCH_BUILD_HANDLER" ] && echo "$AISBENCH_BUILD_HANDLER" || echo ""
      return 0
    fi
  done
  # Debian's qemu-user-static rule for aarch64 (its magic and mask), under our own name, with F (fix binary): the
  # interpreter is opened now, so it also works inside containers and chroots that lack it.
  local rule
  rule=$(sed -e "s/^:qemu-aarch64:/:$AISBENCH_BUILD_HANDLER:/" -e 's/:[A-Z]*$/:OCF/' \
    -e 's#:/usr/libexec/qemu-binfmt/aarch64-binfmt-P:#:/usr/bin/qemu-aarch64-static:#' /usr/lib/binfmt.d/qemu-aarch64.conf)
  echo "$rule" >/proc/sys/fs/binfmt_misc/register
  echo "$AISBENCH_BUILD_HANDLER"
}

arm64_binfmt_release() {
  [ -n "${1:-}" ] && [ -e "/proc/sys/fs/binfmt_misc/$1" ] && echo -1 >"/proc/sys/fs/binfmt_misc/$1"
  return 0
}
