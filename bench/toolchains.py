"""`make bench`, part "toolchains": a host's first provisioning (site.yml) with its agent toolchain pulled from the site
registry, where a build host baked and pushed it once, against the same provisioning baking the toolchain itself.

The registry scenario's create and prepare set the stage (molecule/registry, under its lock): three fresh Debian 13
targets and the site's registries (Debian's docker-registry: a pull-through mirror and a private registry, TLS under a
private CA). Then, with the site's variables of docs/examples/mirror-only and the same extra variables for every run:
  1. toolchains.yml on the build host: mini-swe-agent baked and pushed;
  2. site.yml on the fleet host with baked_images_agent_source: pull;
  3. site.yml on the third host with baked_images_agent_source: bake.
The scenario's cleanup and destroy remove everything at the end. Numbers: each playbook's wall time and the seconds of
its baked_images role (profile_tasks). Both provisionings install Docker, pull the runtime image (1.9 GB) from the
private registry, start the runtime container and bake one L1 image through the mirror; only the toolchain differs.
"""

import glob
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = "registry"
LOCK = "/tmp/aisbench-scenario-registry.lock"
AGENT = "mini-swe-agent"


def molecule(step, env, log):
    log("toolchains: molecule %s -s %s" % (step, SCENARIO))
    argv = ["flock", LOCK, os.path.join(os.path.dirname(sys.executable), "molecule"), step, "-s", SCENARIO]
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError("molecule %s -s %s failed:\n%s" % (step, SCENARIO, (proc.stdout + proc.stderr)[-4000:]))


def run_benchmark(images_dir, runtime_tag, run_playbook, log):
    env = dict(os.environ, AISBENCH_IMAGES_DIR=images_dir, AISBENCH_RUNTIME_IMAGE_TAG=runtime_tag,
               ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".cache", "collections"),
               ANSIBLE_HOME=os.path.join(ROOT, ".cache", "ansible-home"))
    extra = {"runtime_image_tag": runtime_tag, "preflight_disk_min_free_gb": 5, "baked_images_agents": [AGENT],
             "baked_images_cases": [{"dataset": "sample", "id": "hello-pass"}],
             # The builds reach PyPI through this machine's TLS proxy (as in the agents scenario).
             "baked_images_ca_certificates": sorted(glob.glob("/usr/local/share/ca-certificates/*.crt"))}
    try:
        molecule("destroy", env, log)
        molecule("create", env, log)
        molecule("prepare", env, log)
        inventory = max(glob.glob(os.path.join(ROOT, ".cache", "ansible-home", "tmp", "molecule.*." + SCENARIO,
                                               "inventory")), key=os.path.getmtime)
        runs = {}
        for label, playbook, hosts, source in (
                ("build", "toolchains_build.yml", "aisbench_build", "bake"),
                ("pull", "toolchains_site.yml", "aisbench", "pull"),
                ("bake", "toolchains_site.yml", "registry_bare", "bake")):
            variables = dict(extra, aisbench_hosts=hosts, baked_images_agent_source=source)
            result = run_playbook("toolchains-" + label, os.path.join(ROOT, "bench", playbook), inventory,
                                  ["-e", json.dumps(variables)], forks=5)
            runs[label] = {"seconds": result["seconds"], "baked_images_seconds": result["role_seconds"].get("baked_images", 0.0),
                           "slowest_tasks": result["slowest_tasks"], "load_before": result["load_before"],
                           "load_after": result["load_after"], "command": result["command"]}
    finally:
        molecule("cleanup", env, log)
        molecule("destroy", env, log)
    return {"agent": AGENT, "runs": runs,
            "pull_vs_bake": round(runs["pull"]["seconds"] / runs["bake"]["seconds"], 2)}


def render(section, measured):
    runs = section["runs"]
    rows = (("build", "`toolchains.yml`: bake %s, push it" % section["agent"], "build host"),
            ("pull", "`site.yml`, toolchain pulled (`baked_images_agent_source: pull`)", "fresh fleet host"),
            ("bake", "`site.yml`, toolchain baked here (`baked_images_agent_source: bake`)", "another fresh host"))
    out = [
        "## Toolchains once per fleet: first provisioning, toolchain pulled vs baked",
        "",
        "The `registry` scenario's targets and registries (a mirror-only site, [airgapped.md](airgapped.md#mirror-only-sites)): "
        "a build host bakes and pushes %s's toolchain once; a fresh host's first `site.yml` then pulls it, another "
        "fresh host's bakes it itself. Both provisionings install Docker, pull the runtime image from the private "
        "registry, start the runtime container and bake one L1 image through the mirror; only the toolchain differs."
        % section["agent"],
        "",
        "| run | host | wall time | baked_images role |",
        "|---|---|---:|---:|",
    ]
    for key, what, host in rows:
        out.append("| %s | %s | %.0f s | %.0f s |" % (what, host, runs[key]["seconds"], runs[key]["baked_images_seconds"]))
    out += ["", "First provisioning with the toolchain pulled: %.2fx the time of baking it. %s" % (
        section["pull_vs_bake"], measured), ""]
    return out
