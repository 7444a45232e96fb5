#!/usr/bin/env bash
# Build (or reuse) the arm64 test host's disk from Debian's arm64 packages: Debian 12, systemd, openssh-server,
# python3, sudo and Debian's arm64 kernel; no Docker (docker_engine installs it, as on a bare host) and apt set to
# skip Recommends (a minimal host: the docker_engine role must install what the engine needs itself).
# Cached by content: the key hashes this script, lib.sh and the inputs below; a second run with the same key
# prints the paths and builds nothing. Output (AISBENCH_ARM64_DIR):
#   disk-<key>.qcow2, vmlinuz-<key>, initrd-<key>   the host (root on /dev/vda, direct kernel boot)
#   id_ed25519(.pub)                                  the key of user "ops" (sudo without a password)
# Needs root, mmdebstrap, qemu-user-static, e2fsprogs, qemu-utils. Registers an aarch64 binfmt handler (foreign to
# this x86_64 host) for the build only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/arm64/lib.sh
. "$here/lib.sh"

suite=bookworm
packages=systemd-sysv,udev,kmod,dbus,openssh-server,python3,python3-apt,sudo,iproute2,linux-image-arm64,e2fsprogs,ca-certificates
# The initramfs needs only what this VM boots from (Debian's MODULES=most costs minutes per mkinitramfs under
# qemu-user, and runs twice).
initramfs_modules="virtio_pci virtio_blk virtio_net ext4"

key=$(cat "$0" "$here/lib.sh" <(echo "$suite $packages $initramfs_modules $AISBENCH_ARM64_DISK_SIZE") | sha256sum | cut -c1-16)
disk=$AISBENCH_ARM64_DIR/disk-$key.qcow2
mkdir -p "$AISBENCH_ARM64_DIR"
if [ -s "$disk" ] && [ -s "$AISBENCH_ARM64_DIR/vmlinuz-$key" ] && [ -s "$AISBENCH_ARM64_DIR/initrd-$key" ]; then
  arm64_log "disk $disk is current (key $key)"
  echo "$key"
  exit 0
fi

[ -s "$AISBENCH_ARM64_DIR/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C aisbench-arm64 -f "$AISBENCH_ARM64_DIR/id_ed25519"
work=$AISBENCH_ARM64_DIR/build-$key
rm -rf "$work" && mkdir -p "$work"
start=$(date +%s)

exec 9>"$AISBENCH_BINFMT_LOCK"
flock 9
handler=$(arm64_binfmt_acquire)
trap 'arm64_binfmt_release "$handler"' EXIT

pubkey=$(cat "$AISBENCH_ARM64_DIR/id_ed25519.pub")
# The hooks are shell snippets mmdebstrap runs later with the root directory as $1: single quotes on purpose.
# shellcheck disable=SC2016
mmdebstrap --architectures=arm64 --variant=apt --mode=root --format=directory \
  --hook-dir=/usr/share/mmdebstrap/hooks/eatmydata \
  --include="$packages" \
  --essential-hook='mkdir -p "$1/etc/initramfs-tools/conf.d" "$1/usr/share/initramfs-tools/modules.d"; echo MODULES=list >"$1/etc/initramfs-tools/conf.d/aisbench-vm.conf"' \
  --essential-hook="printf '%s\n' $initramfs_modules >\"\$1/usr/share/initramfs-tools/modules.d/aisbench-vm\"" \
  --customize-hook='echo arm64-host >"$1/etc/hostname"; printf "127.0.0.1 localhost\n127.0.1.1 arm64-host\n" >"$1/etc/hosts"' \
  --customize-hook='printf "/dev/vda / ext4 rw,discard,errors=remount-ro 0 1\n" >"$1/etc/fstab"' \
  --customize-hook='printf "[Match]\nName=e*\n\n[Network]\nDHCP=ipv4\n" >"$1/etc/systemd/network/10-vm.network"; chroot "$1" systemctl enable systemd-networkd' \
  --customize-hook='rm -f "$1/etc/resolv.conf"; echo "nameserver 10.0.2.3" >"$1/etc/resolv.conf"' \
  --customize-hook='echo "APT::Install-Recommends \"false\";" >"$1/etc/apt/apt.conf.d/90aisbench-no-recommends"' \
  --customize-hook='printf "UseDNS no\nPasswordAuthentication no\n" >"$1/etc/ssh/sshd_config.d/aisbench.conf"' \
  --customize-hook="chroot \"\$1\" useradd -m -s /bin/bash ops; mkdir -p \"\$1/home/ops/.ssh\"; echo '$pubkey' >\"\$1/home/ops/.ssh/authorized_keys\"; chroot \"\$1\" chown -R ops:ops /home/ops/.ssh; chmod 0700 \"\$1/home/ops/.ssh\"" \
  --customize-hook='echo "ops ALL=(ALL) NOPASSWD:ALL" >"$1/etc/sudoers.d/ops"; chmod 0440 "$1/etc/sudoers.d/ops"' \
  --customize-hook='truncate -s 0 "$1/etc/machine-id"' \
  "$suite" "$work/root" "$DEBIAN_MIRROR" >"$work/mmdebstrap.log" 2>&1 \
  || { tail -30 "$work/mmdebstrap.log" >&2; exit 1; }
arm64_log "root filesystem built in $(( $(date +%s) - start )) s"

# One kernel is installed (linux-image-arm64's); its image and initrd are booted directly.
kernels=("$work"/root/boot/vmlinuz-*)
initrds=("$work"/root/boot/initrd.img-*)
[ ${#kernels[@]} -eq 1 ] && [ ${#initrds[@]} -eq 1 ] || { arm64_log "expected one kernel: ${kernels[*]} ${initrds[*]}"; exit 1; }
cp "${kernels[0]}" "$work/vmlinuz"
cp "${initrds[0]}" "$work/initrd"
truncate -s "$AISBENCH_ARM64_DISK_SIZE" "$work/disk.raw"
mkfs.ext4 -q -L aisbench-root -d "$work/root" "$work/disk.raw"
qemu-img convert -O qcow2 "$work/disk.raw" "$work/disk.qcow2"
rm -f "$AISBENCH_ARM64_DIR"/disk-*.qcow2 "$AISBENCH_ARM64_DIR"/vmlinuz-* "$AISBENCH_ARM64_DIR"/initrd-*
mv "$work/vmlinuz" "$AISBENCH_ARM64_DIR/vmlinuz-$key"
mv "$work/initrd" "$AISBENCH_ARM64_DIR/initrd-$key"
mv "$work/disk.qcow2" "$disk"
rm -rf "$work"
arm64_log "disk $disk ($(du -h "$disk" | cut -f1)) built in $(( $(date +%s) - start )) s"
echo "$key"
