#!/usr/bin/env bash
# make test-arm64: the collection on an emulated arm64 host, as a user runs it.
#   disk      the host's disk from Debian's arm64 packages (cached by content: build-disk.sh)
#   images    the arm64 runtime image and the x86_64 task base on the share (cached: images.sh)
#   boot      a fresh overlay of the disk under qemu-system-aarch64, SSH on 127.0.0.1
#   site      site.yml over SSH + sudo (preflight, docker_engine, qemu_binfmt, runtime_image, runtime_container, baked_images)
#   rerun     site.yml again: changed=0
#   nightly   nightly.yml: the sample tasks (x86_64 images, under qemu-x86_64) with the oracle agent
#   verify    tests/arm64/verify.yml: rewards and pass@1 from Harbor's result.json, uname -m in the trials, binfmt, health
#   status    status.yml
#   guard     tests/arm64/guard.yml: the ELOOP guard on the arm64 kernel, the host's programs run after it
# Each phase's seconds go to $AISBENCH_ARM64_DIR/result.{json,md} (with the commit, the date and the rewards);
# logs to $AISBENCH_ARM64_DIR/logs/. The host is powered off at the end (KEEP=1 keeps it running).
# AISBENCH_ARM64_FROM=PHASE (site or later) resumes on the host a KEEP=1 run left up: the phases before PHASE are taken
# as done, their seconds kept from that run, and the result says so.
# Usage: run.sh RUNTIME_IMAGE_TAG (the Makefile passes $(RUNTIME_IMAGE_TAG)-arm64).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=tests/arm64/lib.sh
. "$here/lib.sh"
export AISBENCH_ARM64_RUNTIME_TAG=${1:?usage: run.sh RUNTIME_IMAGE_TAG}
export AISBENCH_ARM64_SHARE
night=${AISBENCH_ARM64_NIGHT:-arm64-$(date -u +%Y%m%d-%H%M%S)}
logs=$AISBENCH_ARM64_DIR/logs
reports=$AISBENCH_ARM64_DIR/reports
inventory=$AISBENCH_ARM64_DIR/inventory
phases=$AISBENCH_ARM64_DIR/phases.tsv
mkdir -p "$logs" "$reports" "$inventory/group_vars"
resume_from=${AISBENCH_ARM64_FROM:-}
all_phases=" disk images boot share site rerun nightly verify status guard "
if [ -n "$resume_from" ]; then
  case "$resume_from" in
    site | rerun | nightly | verify | status | guard) ;;
    *) echo "AISBENCH_ARM64_FROM=$resume_from: resume from one of site rerun nightly verify status guard" >&2; exit 2 ;;
  esac
  [ -s "$phases" ] || { echo "AISBENCH_ARM64_FROM: no earlier run's $phases to resume" >&2; exit 2; }
  # Keep the seconds of the phases before it; the resumed ones are measured again (the run resumed's are kept as
  # "<phase> (earlier run)", outside the total).
  awk -F '\t' -v OFS='\t' -v done="${all_phases%% "$resume_from" *} " \
    'index(done, " " $1 " ") { print; next } $1 !~ /earlier run/ { $1 = $1 " (earlier run)"; print }' "$phases" >"$phases.kept"
  mv "$phases.kept" "$phases"
  # After the nightly phase, the night of the run resumed.
  case "$resume_from" in verify|status|guard) night=$(cat "$AISBENCH_ARM64_DIR/night") ;; esac
else
  : >"$phases"
fi
cd "$repo"

playbook() {
  local log=$1
  shift
  ansible-playbook -i "$inventory/hosts.yml" "$@" >"$logs/$log.log" 2>&1 || { tail -60 "$logs/$log.log" >&2; return 1; }
}

# The PLAY RECAP's counters for the host: "ok=N changed=N ... failed=N".
recap() { grep -E '^arm64-host +:' "$logs/$1.log" | tail -n 1 | sed -E 's/^arm64-host +: +//; s/ +/ /g'; }

phase() {
  local name=$1 start
  shift
  if [ -n "$resume_from" ]; then
    [ "$name" = "$resume_from" ] || { arm64_log "phase $name: done by the run resumed (AISBENCH_ARM64_FROM)"; return 0; }
    resume_from=""
    resumed_note="resumed at $name on the host of an earlier run (AISBENCH_ARM64_FROM)"
  fi
  start=$(date +%s)
  arm64_log "phase $name: start"
  "$@"
  printf '%s\t%s\n' "$name" "$(( $(date +%s) - start ))" >>"$phases"
  arm64_log "phase $name: $(( $(date +%s) - start )) s"
}

site_rerun() {
  playbook site-rerun playbooks/site.yml
  recap site-rerun | grep -Eq 'changed=0 .*failed=0' || { arm64_log "site.yml rerun changed something: $(recap site-rerun)"; return 1; }
}

write_result() {
  "$repo/.venv/bin/python" "$here/result.py" --phases "$phases" --night "$night" --reports "$reports" \
    --site-recap "$(recap site 2>/dev/null || true)" --rerun-recap "$(recap site-rerun 2>/dev/null || true)" \
    --out "$AISBENCH_ARM64_DIR/result" --cache-state "${AISBENCH_ARM64_CACHE_STATE:-}" \
    --images-note "$images_note${resumed_note:+; $resumed_note}"
}

# Cold: neither the disk nor the runtime image tar was there (both are rebuilt only when their inputs change).
if compgen -G "$AISBENCH_ARM64_DIR/disk-*.qcow2" >/dev/null && [ -s "$AISBENCH_ARM64_SHARE/agent-runtime-arm64.tar" ]; then
  export AISBENCH_ARM64_CACHE_STATE=warm
else
  export AISBENCH_ARM64_CACHE_STATE=cold
fi
resumed_note=""
[ -n "${KEEP:-}" ] || trap 'bash "$here/vm.sh" down' EXIT
phase disk bash "$here/build-disk.sh" >/dev/null
# AISBENCH_ARM64_KEEP_IMAGES=1 takes the share's runtime image tar as it is, even when the role would build another
# (after a change to the image's inputs the cross-build takes hours here); the result says so, with the tar's date.
if [ -n "${AISBENCH_ARM64_KEEP_IMAGES:-}" ] && [ -s "$AISBENCH_ARM64_SHARE/agent-runtime-arm64.tar" ]; then
  images_note="kept: the share's agent-runtime-arm64.tar of $(date -u -r "$AISBENCH_ARM64_SHARE/agent-runtime-arm64.tar" '+%Y-%m-%d %H:%M UTC')"
  arm64_log "images: $images_note (AISBENCH_ARM64_KEEP_IMAGES)"
else
  images_note=""
  phase images bash "$here/images.sh" "$AISBENCH_ARM64_RUNTIME_TAG"
fi
[ -z "$resume_from" ] || bash "$here/vm.sh" ssh true >/dev/null 2>&1 || {
  echo "AISBENCH_ARM64_FROM: no arm64 host answers on SSH (KEEP=1 leaves the host of a run up)" >&2; exit 2; }
phase boot bash "$here/vm.sh" up
bash "$here/vm.sh" inventory "$inventory/hosts.yml"
# The site's group_vars: the shipped example for arm64 hosts, as a site copies it, and the test's own.
cp inventories/production/group_vars/arm64.yml "$inventory/group_vars/arm64.yml"
cp "$here/inventory/aisbench.yml" "$inventory/group_vars/aisbench.yml"
phase share playbook prepare "$here/prepare.yml"
phase site playbook site playbooks/site.yml
phase rerun site_rerun
echo "$night" >"$AISBENCH_ARM64_DIR/night"
phase nightly playbook nightly playbooks/nightly.yml -e aisbench_nightly_night="$night" -e aisbench_nightly_report_dir="$reports"
phase verify playbook verify "$here/verify.yml" -e arm64_night="$night" -e arm64_report_dir="$reports"
phase status playbook status playbooks/status.yml
phase guard playbook guard "$here/guard.yml"
write_result
cat "$AISBENCH_ARM64_DIR/result.md"
