"""Write the arm64 test's result (tests/arm64/run.sh): commit, date, phase seconds, site.yml recaps and the night's
pass@1 and per-task outcomes from the fleet report, as result.json and result.md (docs/arm64.md quotes the last)."""

import argparse
import datetime
import json
import os
import platform
import subprocess


def git(*args):
    return subprocess.run(["git"] + list(args), capture_output=True, text=True, check=False).stdout.strip()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", required=True)
    parser.add_argument("--night", required=True)
    parser.add_argument("--reports", required=True)
    parser.add_argument("--site-recap", default="")
    parser.add_argument("--rerun-recap", default="")
    parser.add_argument("--cache-state", default="")
    parser.add_argument("--images-note", default="", help="set when the run kept the share's images (not rebuilt)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    with open(args.phases, encoding="utf-8") as handle:
        phases = [(name, int(seconds)) for name, seconds in (line.rstrip("\n").split("\t") for line in handle if line.strip())]
    with open(os.path.join(args.reports, args.night, "fleet-report.json"), encoding="utf-8") as handle:
        report = json.load(handle)
    row = report["fleet"]["rows"][0]
    result = {
        "commit": git("rev-parse", "--short", "HEAD") + ("+changes" if git("status", "--porcelain", "--untracked-files=no") else ""),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": "%s, %d cores (controller and emulator)" % (platform.machine(), os.cpu_count()),
        "cache": args.cache_state,
        "images": args.images_note or "built or current (images.sh)",
        "phases": dict(phases),
        # A resumed run (AISBENCH_ARM64_FROM) lists the resumed phases' earlier seconds too, outside the total.
        "total_seconds": sum(seconds for name, seconds in phases if not name.endswith("(earlier run)")),
        "site_recap": args.site_recap,
        "rerun_recap": args.rerun_recap,
        "night": args.night,
        "pass_at_1": report["fleet"]["pass_at_1"],
        "tasks": {task: {"n_pass": cell["n_pass"], "n_fail": cell["n_fail"]} for task, cell in sorted(row["tasks"].items())},
    }
    with open(args.out + ".json", "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2)
        handle.write("\n")
    lines = [
        "commit %s, %s, %s%s" % (result["commit"], result["date"], result["machine"],
                                 ", cache: " + result["cache"] if result["cache"] else ""),
        "",
        "runtime image: %s" % result["images"],
        "",
        "| phase | seconds |",
        "|---|---:|",
    ] + ["| %s | %d |" % item for item in phases] + [
        "| **total** | **%d** |" % result["total_seconds"],
        "",
        "site.yml: %s; rerun: %s" % (result["site_recap"], result["rerun_recap"]),
        "",
        "night %s, (sample, oracle) pass@1 %s: %s" % (
            result["night"], result["pass_at_1"],
            ", ".join("%s %s" % (task, "pass" if cell["n_pass"] else "fail") for task, cell in result["tasks"].items())),
    ]
    with open(args.out + ".md", "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
