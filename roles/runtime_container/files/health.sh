# shellcheck shell=sh
# Health of the runtime container (run by the runtime_container role with docker exec):
# Harbor's CLI answers, the engine answers (inner in dind mode, the host's in host-socket mode)
# and every given path is a mount point. Prints what it saw; exits 1 at the first problem.
mode=$1
shift
if ! version=$(harbor --version 2>&1); then
  echo "harbor --version failed: $version"
  exit 1
fi
echo "harbor $version"
if ! info=$(docker info 2>&1); then
  echo "$mode engine not answering: $(echo "$info" | tail -n 3)"
  exit 1
fi
echo "$info" | awk -v mode="$mode" -F': ' '/^ *Storage Driver:/ { print "engine " mode " " $2; exit }'
for path in "$@"; do
  if ! awk -v p="$path" '$5 == p { found = 1 } END { exit !found }' /proc/self/mountinfo; then
    echo "not mounted: $path"
    exit 1
  fi
done
echo "mounts $#"
