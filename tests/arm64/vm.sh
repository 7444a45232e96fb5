#!/usr/bin/env bash
# The arm64 test host: an emulated aarch64 machine (qemu-system-aarch64, TCG) booted from the cached disk that
# build-disk.sh made, with a fresh copy-on-write overlay per start, so every run starts from the bare host.
#   vm.sh up       build or reuse the disk, boot, wait for SSH (127.0.0.1:$AISBENCH_ARM64_SSH_PORT only)
#   vm.sh down     power off (then kill) and remove the overlay
#   vm.sh ssh ...  run a command on the host as ops
#   vm.sh inventory PATH   write an Ansible inventory for the host (group arm64 of aisbench)
# The host sees AISBENCH_ARM64_SHARE read-only at the same path (9p, mounted by prepare.yml), as a site's NFS share
# of image tars.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tests/arm64/lib.sh
. "$here/lib.sh"

pidfile=$AISBENCH_ARM64_DIR/qemu.pid
overlay=$AISBENCH_ARM64_DIR/run.qcow2
serial=$AISBENCH_ARM64_DIR/serial.log
ssh_opts=(-i "$AISBENCH_ARM64_DIR/id_ed25519" -p "$AISBENCH_ARM64_SSH_PORT" -o StrictHostKeyChecking=no
  -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout=5 -o BatchMode=yes)

running() { [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

# The command runs in the host's shell, as ssh does: callers quote for it.
# shellcheck disable=SC2029
vm_ssh() { ssh "${ssh_opts[@]}" ops@127.0.0.1 "$@"; }

up() {
  if running; then
    arm64_log "already running (pid $(cat "$pidfile"))"
    return 0
  fi
  local key start
  key=$(bash "$here/build-disk.sh")
  mkdir -p "$AISBENCH_ARM64_SHARE"
  rm -f "$overlay"
  qemu-img create -q -f qcow2 -b "$AISBENCH_ARM64_DIR/disk-$key.qcow2" -F qcow2 "$overlay"
  start=$(date +%s)
  # -cpu max with pauth-impdef: the cheaper pointer-authentication algorithm under TCG. romfile="": Debian's
  # qemu-system-arm has no efi-virtio.rom for a direct kernel boot's NIC.
  qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on -smp "$AISBENCH_ARM64_CPUS" -m "$AISBENCH_ARM64_MEMORY" \
    -kernel "$AISBENCH_ARM64_DIR/vmlinuz-$key" -initrd "$AISBENCH_ARM64_DIR/initrd-$key" \
    -append "root=/dev/vda rw console=ttyAMA0 net.ifnames=0" \
    -drive "file=$overlay,if=none,id=root,format=qcow2,cache=unsafe,discard=unmap" -device virtio-blk-pci,drive=root \
    -netdev "user,id=net0,hostfwd=tcp:127.0.0.1:$AISBENCH_ARM64_SSH_PORT-:22" -device virtio-net-pci,netdev=net0,romfile= \
    -virtfs "local,path=$AISBENCH_ARM64_SHARE,mount_tag=aisbench-share,security_model=none,readonly=on" \
    -device virtio-rng-pci \
    -display none -serial "file:$serial" -daemonize -pidfile "$pidfile"
  for _ in $(seq 300); do
    if vm_ssh true 2>/dev/null; then
      arm64_log "up: SSH answered $(( $(date +%s) - start )) s after boot"
      return 0
    fi
    running || { arm64_log "QEMU exited; serial log:"; tail -40 "$serial" >&2; return 1; }
    sleep 2
  done
  arm64_log "no SSH after 600 s; serial log:"
  tail -40 "$serial" >&2
  return 1
}

down() {
  if running; then
    vm_ssh sudo systemctl poweroff >/dev/null 2>&1 || true
    for _ in $(seq 60); do running || break; sleep 1; done
    running && kill "$(cat "$pidfile")"
  fi
  rm -f "$pidfile" "$overlay"
}

inventory() {
  cat >"$1" <<INV
# Written by tests/arm64/vm.sh: the emulated arm64 test host, reached over SSH on 127.0.0.1 as a site's host is.
all:
  children:
    aisbench:
      children:
        arm64:
          hosts:
            arm64-host:
              ansible_host: 127.0.0.1
              ansible_port: $AISBENCH_ARM64_SSH_PORT
              ansible_user: ops
              ansible_become: true
              ansible_python_interpreter: /usr/bin/python3
              ansible_ssh_private_key_file: $AISBENCH_ARM64_DIR/id_ed25519
              ansible_ssh_common_args: -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null
INV
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  ssh) shift; vm_ssh "$@" ;;
  inventory) inventory "$2" ;;
  *) echo "usage: $0 up|down|ssh CMD|inventory PATH" >&2; exit 2 ;;
esac
