# shellcheck shell=sh
# Lists the Harbor jobs running in this container, one "PID<TAB>JOB" line each (run by the
# runtime_container role with docker exec before it recreates or removes the container).
# A job is a process whose program (or interpreter script) is "harbor" running "job(s) start",
# "job(s) resume" or "run"; JOB is its --job-name, the directory of a resume (-p), or "(unnamed)".
for dir in /proc/[0-9]*; do
  pid=${dir#/proc/}
  [ "$pid" = "$$" ] && continue
  [ -r "$dir/cmdline" ] || continue
  tr '\000' '\n' <"$dir/cmdline" 2>/dev/null | awk -v pid="$pid" '
    { arg[NR] = $0 }
    END {
      if (NR < 2 || arg[2] == "-c") exit
      n = split(arg[1], a, "/"); m = split(arg[2], b, "/")
      if (a[n] != "harbor" && b[m] != "harbor") exit
      verb = ""; name = ""
      for (i = 2; i <= NR; i++) {
        if ((arg[i - 1] == "job" || arg[i - 1] == "jobs") && (arg[i] == "start" || arg[i] == "resume")) verb = arg[i]
        if (arg[i] == "run" && verb == "") verb = "run"
        if (arg[i] == "--job-name" && i < NR) name = arg[i + 1]
        if (index(arg[i], "--job-name=") == 1) name = substr(arg[i], 12)
        if ((arg[i] == "-p" || arg[i] == "--job-path") && i < NR) { k = split(arg[i + 1], p, "/"); name = p[k] }
      }
      if (verb == "") exit
      if (name == "") name = "(unnamed)"
      printf "%s\t%s\n", pid, name
    }'
done
exit 0
