#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: docker_engine_check
short_description: Prove a Docker engine works, or list the Harbor work a restart would kill
version_added: 0.1.0
description:
  - O(check=run) proves the engine can run a container and uses the data-root it was given. It imports a tiny image
    (one static executable for the kernel's own architecture, about 200 bytes, built on the target; nothing is pulled)
    unless the engine has it, runs it with the engine's default log, storage and network settings and compares the
    output; then it compares C(docker info)'s C(DockerRootDir) with O(data_root). An engine that answers C(docker info)
    but cannot start a container (for example a C(log-opts.max-size) it cannot parse) fails here with the engine's
    own words.
  - O(check=busy) lists the Harbor work running on the engine, which a restart of the engine kills, that is Harbor trial
    containers (the Docker Compose projects Harbor names C(TRIAL__env), C(TRIAL__verifier...)), and Harbor jobs in
    runtime containers (containers labelled C(org.aisbench.runtime-container.mode), whose processes are listed with
    C(docker exec)).
  - Uses the C(docker) CLI of the target, as a user of the engine would.
author: aisbench maintainers (!UNKNOWN)
options:
  check:
    description: What to check.
    type: str
    choices: [run, busy]
    required: true
  data_root:
    description: The data-root the engine must use (O(check=run)); C(/var/lib/docker) when daemon.json sets none.
    type: path
    default: /var/lib/docker
  image:
    description: Tag of the probe image (O(check=run)).
    type: str
    default: aisbench/engine-probe:1
  docker_executable:
    description: The docker CLI.
    type: str
    default: docker
  timeout:
    description: Seconds the probe container may take.
    type: int
    default: 60
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - aisbench.agent_runtime.attributes
attributes:
  check_mode:
    details:
      - O(check=run) checks in check mode what it can without a change that stays. It runs the probe container
        (removed at once) when the engine already has the probe image; without the image it would import it, so it
        reports C(changed) and lists the container check in RV(not_checked). The data-root is always compared.
      - O(check=busy) only reads, in check mode as otherwise.
"""

EXAMPLES = r"""
- name: Prove the restarted engine runs containers from its data-root
  aisbench.agent_runtime.docker_engine_check:
    check: run
    data_root: /var/lib/docker

- name: List the Harbor work a restart would kill
  aisbench.agent_runtime.docker_engine_check:
    check: busy
  register: busy
"""

RETURN = r"""
ok:
  description: Whether the check found the engine working (O(check=run)).
  returned: when check is run
  type: bool
reason:
  description: Why the engine does not work, in the engine's own words (O(check=run), when it failed).
  returned: when check is run and the engine does not work
  type: str
docker_root_dir:
  description: The data-root the engine reports.
  returned: when check is run
  type: str
checked:
  description: What O(check=run) checked (C(answers), C(runs a container), C(data-root)).
  returned: when check is run
  type: list
  elements: str
not_checked:
  description: What O(check=run) could not check in check mode, and why.
  returned: when check is run in check mode and the probe image is missing
  type: list
  elements: str
harbor_work:
  description: Running Harbor trial containers and Harbor jobs, one line each.
  returned: when check is busy
  type: list
  elements: str
  sample: ["trial container hello-pass__eqraumq__env-main-1 (project hello-pass__eqraumq__env)",
           "Harbor job nightly-2026-12-02 in runtime container agent-runtime (pid 41)"]
"""

import io
import os
import re
import tarfile
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._binfmt import build_probe, probe_message, running_kernel
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._harbor_runner import (
    PROCESS_LIST_SCRIPT,
    harbor_job_of_process,
    parse_process_list,
)

# Harbor's Compose project for a trial: session id "<task>__<7 characters>__env" (or __verifier..., __agent, __user).
TRIAL_PROJECT = re.compile(r"^.+__[a-z0-9]{7}__(env|agent|user|verifier)")
RUNTIME_LABEL = "org.aisbench.runtime-container.mode"
PROBE_PATH = "/aisbench-engine-probe"


def probe_tar(arch):
    """A root file system with one static executable that prints probe_message(arch)."""
    data = build_probe(arch)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo(PROBE_PATH.lstrip("/"))
        info.size = len(data)
        info.mode = 0o755
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def run_check(module):
    params = module.params
    docker = params["docker_executable"]
    arch = running_kernel()["arch"]
    result = {"changed": False, "ok": False, "checked": []}
    rc, out, err = module.run_command([docker, "info", "--format", "{{.DockerRootDir}}"])
    if rc != 0:
        return dict(result, reason="the engine does not answer: %s" % (err or out).strip())
    result["docker_root_dir"] = out.strip()
    result["checked"].append("answers")
    rc, _out, _err = module.run_command([docker, "image", "inspect", params["image"]])
    image_there = rc == 0
    if not image_there and module.check_mode:
        # The import would stay: check mode reports it and cannot run the probe container.
        result.update(changed=True, not_checked=["runs a container: check mode does not import the probe image %s"
                                                 % params["image"]])
    elif not image_there:
        with tempfile.NamedTemporaryFile(suffix=".tar") as handle:
            handle.write(probe_tar(arch))
            handle.flush()
            # docker import: no community.docker module imports a root file system tarball.
            rc, out, err = module.run_command([docker, "import", "--change", "CMD [\"%s\"]" % PROBE_PATH,
                                               handle.name, params["image"]])
        if rc != 0:
            return dict(result, reason="the engine cannot store an image: %s" % (err or out).strip())
        result["changed"] = True
    if image_there or not module.check_mode:
        # docker run with the engine's defaults (log driver and options, storage, default bridge): what Harbor gets.
        # --rm: the probe container does not stay, so check mode runs it too.
        rc, out, err = module.run_command(["timeout", str(params["timeout"]), docker, "run", "--rm", "--pull", "never",
                                           params["image"]])
        expected = probe_message(arch).decode()
        if rc != 0 or out != expected:
            reason = (err or out).strip() or "exit status %d" % rc
            return dict(result, reason="the engine cannot run a container: %s" % reason)
        result["checked"].append("runs a container")
    result["checked"].append("data-root")
    wanted = os.path.realpath(params["data_root"])
    if os.path.realpath(result["docker_root_dir"]) != wanted:
        return dict(result, reason="the engine uses the data-root %s, not %s: it does not see its images and containers"
                    % (result["docker_root_dir"], wanted))
    return dict(result, ok=True)


def busy_check(module):
    docker = module.params["docker_executable"]
    fmt = "{{.Names}}\t{{.Label \"com.docker.compose.project\"}}\t{{.Label \"%s\"}}" % RUNTIME_LABEL
    rc, out, err = module.run_command([docker, "ps", "--format", fmt])
    if rc != 0:
        return {"changed": False, "harbor_work": [], "engine_answers": False, "reason": (err or out).strip()}
    work = []
    for line in out.splitlines():
        name, project, runtime_mode = (line.split("\t") + ["", "", ""])[:3]
        if project and TRIAL_PROJECT.match(project):
            work.append("trial container %s (project %s)" % (name, project))
        elif runtime_mode:
            rc, procs, _err = module.run_command([docker, "exec", name, "sh", "-c", PROCESS_LIST_SCRIPT])
            for pid, args in parse_process_list(procs) if rc == 0 else []:
                job = harbor_job_of_process(args)
                if job:
                    work.append("Harbor job %s in runtime container %s (pid %d)" % (job, name, pid))
    return {"changed": False, "harbor_work": work, "engine_answers": True}


def main():
    module = AnsibleModule(
        argument_spec=dict(
            check=dict(type="str", required=True, choices=["run", "busy"]),
            data_root=dict(type="path", default="/var/lib/docker"),
            image=dict(type="str", default="aisbench/engine-probe:1"),
            docker_executable=dict(type="str", default="docker"),
            timeout=dict(type="int", default=60),
        ),
        supports_check_mode=True,
    )
    if module.params["check"] == "run":
        result = run_check(module)
        if not result["ok"]:
            module.fail_json(msg=result["reason"], **result)
    else:
        result = busy_check(module)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
