"""Run Molecule scenarios in N lanes: each lane takes the next scenario from the queue when its last one ends.

Scenarios spend most of their time waiting (engines starting inside targets, Harbor trials, package downloads), so two
lanes on two cores finish the suite sooner than one. They share nothing but the host engine: every scenario names its
own targets, networks and volumes, and only qemu_binfmt touches the host's binfmt_misc. Each scenario's output goes to
its own log, printed whole when the scenario ends, so lanes never interleave lines.

Usage: run_scenarios.py --lanes N --log-dir DIR --command 'molecule test -s {}' SCENARIO...
({} in the command is the scenario's name; the Makefile's `molecule` target calls it so.)
"""

import argparse
import os
import shlex
import subprocess
import sys
import threading
import time


def say(text):
    sys.stdout.write(text)
    sys.stdout.flush()


def run_lanes(scenarios, lanes, command_for, log_dir):
    """Run every scenario (in queue order) on `lanes` workers; return {scenario: (passed, seconds)}."""
    os.makedirs(log_dir, exist_ok=True)
    queue = list(scenarios)
    results = {}
    lock = threading.Lock()

    def worker():
        while True:
            with lock:
                if not queue:
                    return
                scenario = queue.pop(0)
                say("=== molecule scenario %s: start %s\n" % (scenario, time.strftime("%H:%M:%S", time.gmtime())))
            log_path = os.path.join(log_dir, "%s.log" % scenario)
            start = time.time()
            with open(log_path, "wb") as log:
                passed = subprocess.run(command_for(scenario), stdout=log, stderr=subprocess.STDOUT, check=False).returncode == 0
            seconds = int(time.time() - start)
            with lock:
                results[scenario] = (passed, seconds)
                with open(log_path, "rb") as log:
                    sys.stdout.buffer.write(log.read())
                say("=== scenario %s %s %d s\n" % (scenario, "passed in" if passed else "FAILED after", seconds))

    threads = [threading.Thread(target=worker) for _lane in range(max(1, min(lanes, len(queue))))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--command", required=True, help="the command line per scenario; {} is its name")
    parser.add_argument("--lanes", type=int, default=2)
    parser.add_argument("--log-dir", required=True)
    parser.add_argument("scenarios", nargs="+")
    args = parser.parse_args(argv)
    words = shlex.split(args.command)
    results = run_lanes(args.scenarios, args.lanes, lambda scenario: [word.replace("{}", scenario) for word in words],
                        args.log_dir)
    # A summary last: CI shows the tail of its output, so every scenario's time is there.
    for scenario in args.scenarios:
        passed, seconds = results[scenario]
        print("=== summary %-18s %-6s %5d s" % (scenario, "passed" if passed else "FAILED", seconds))
    failed = [scenario for scenario in args.scenarios if not results[scenario][0]]
    if failed:
        print("=== failed scenarios: %s" % " ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
