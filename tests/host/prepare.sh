#!/usr/bin/env bash
# Prepare a Debian/Ubuntu machine to run this collection's tests and demo:
# Docker engine, debootstrap, qemu-user-static, a running dockerd, chromium (the fleet report's browser test) and
# docker-registry (Debian's distribution 2.8: the registry scenario runs its binary in containers).
# Idempotent; needs root. Does NOT register any binfmt handler on this host.
set -euo pipefail

need_pkgs=()
for pkg in docker.io debootstrap qemu-user-static python3-venv make chromium docker-registry; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need_pkgs+=("$pkg")
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "prepare: installing ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # --no-install-recommends keeps binfmt-support out: the host stays free of qemu handlers.
  apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
  # The package starts its own registry on port 5000 of every address; the tests want only their own, on their own
  # network (the registry scenario runs the binary in containers).
  if [[ " ${need_pkgs[*]} " == *" docker-registry "* ]]; then
    if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
      systemctl disable --now docker-registry.service
    else
      service docker-registry stop >/dev/null 2>&1 || true
    fi
  fi
fi

# Privileged containers fail on hosts whose bounding set lacks a capability
# when dockerd is older than 23.0; route runc through a filtering shim then.
bounding=$(awk '/^CapBnd:/ {print $2}' /proc/self/status)
last_cap=$(cat /proc/sys/kernel/cap_last_cap)
full=$(printf '%016x' $(( (1 << (last_cap + 1)) - 1 )))
engine_major=$(dockerd --version | sed -E 's/^Docker version ([0-9]+)\..*/\1/')
mkdir -p /etc/docker
if [ "$((16#$bounding))" -ne "$((16#$full))" ] && [ "$engine_major" -lt 23 ]; then
  echo "prepare: capability bounding set $bounding is partial and dockerd $engine_major < 23: using runc-boundcaps"
  install -m 0755 "$(dirname "$0")/runc-boundcaps" /usr/local/sbin/runc-boundcaps
  want='{"runtimes": {"boundcaps": {"path": "/usr/local/sbin/runc-boundcaps"}}, "default-runtime": "boundcaps"}'
else
  want='{}'
fi
if [ "$(cat /etc/docker/daemon.json 2>/dev/null)" != "$want" ]; then
  echo "$want" > /etc/docker/daemon.json
  restart=1
fi

if docker info >/dev/null 2>&1 && [ -z "${restart:-}" ]; then
  echo "prepare: dockerd already running"
  exit 0
fi
if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
  systemctl restart docker
else
  if pidof dockerd >/dev/null; then
    kill "$(pidof dockerd)"
    for _ in $(seq 30); do pidof dockerd >/dev/null || break; sleep 1; done
  fi
  # No init system here (CI sandbox): run dockerd detached from this shell.
  setsid dockerd >/var/log/dockerd.log 2>&1 </dev/null &
fi
for _ in $(seq 60); do
  docker info >/dev/null 2>&1 && { echo "prepare: dockerd is up"; exit 0; }
  sleep 1
done
echo "prepare: dockerd did not answer within 60 s; last log lines:" >&2
tail -20 /var/log/dockerd.log >&2 || true
exit 1
