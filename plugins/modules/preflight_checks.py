#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: preflight_checks
short_description: Read-only acceptance checks of an agent-benchmark host in one round trip
version_added: 0.1.0
description:
  - Runs the selected checks on the target and reports each as C(PASS), C(FAIL) or C(SKIP) with a reason.
  - Never changes the host. The task fails when a check listed in O(required) is C(FAIL), naming those checks with
    their reasons and showing the table; the result (RV(failed_required), RV(by_name), ...) is returned either way.
  - With O(gather_subset) it also returns, in the same round trip, the facts C(ansible.builtin.setup) gathers for
    those subsets (the same Ansible fact collectors), so a play can do without its own fact gathering.
  - Checks are C(commands), C(architecture), C(os_release), C(python), C(disk), C(binfmt_misc), C(docker),
    C(registry_mirrors), C(registry_logins), C(gpu), C(cuda) and C(clock).
  - The action plugin of the same name checks the options before the round trip, reads the controller's clock
    before and after it for the C(clock) check, and fails the task when a required check failed.
author: aisbench maintainers (!UNKNOWN)
extends_documentation_fragment:
  - aisbench.agent_runtime.registry_logins
options:
  checks:
    description: Checks to run; the others are reported as C(SKIP).
    type: list
    elements: str
    choices: [commands, architecture, os_release, python, disk, binfmt_misc, docker, registry_mirrors, registry_logins, gpu, cuda,
              clock]
    default: [commands, architecture, os_release, python, disk, binfmt_misc, docker, registry_mirrors, registry_logins, gpu, cuda,
              clock]
  required:
    description: Checks whose C(FAIL) counts in RV(failed_required).
    type: list
    elements: str
    choices: [commands, architecture, os_release, python, disk, binfmt_misc, docker, registry_mirrors, registry_logins, gpu, cuda,
              clock]
    default: []
  commands:
    description: Commands that must be on C(PATH) (the sbin directories are searched too).
    type: list
    elements: str
    default: []
  supported_architectures:
    description: Accepted C(uname -m) values (C(amd64)/C(arm64) spellings are accepted too). Empty accepts every known architecture.
    type: list
    elements: str
    default: [x86_64, aarch64]
  supported_os:
    description:
      - Accepted releases as C(ID-VERSION_ID) from C(/etc/os-release), e.g. C(debian-13) or C(ubuntu-24.04).
      - A bare C(ID) accepts every release; C(debian-12) also accepts C(12.x). Empty accepts everything.
    type: list
    elements: str
    default: [debian-12, debian-13, ubuntu-22.04, ubuntu-24.04]
  python_min_version:
    description: Minimum version of the Python interpreter Ansible uses on the target.
    type: str
    default: "3.9"
  disk_path:
    description: The Docker data-root. When it does not exist yet, its nearest existing parent is measured.
    type: path
    default: /var/lib/docker
  disk_min_free_gb:
    description: Minimum free space (GiB, as C(df) shows it as available) at O(disk_path).
    type: float
    default: 20
  docker_host:
    description: Engine API endpoint, C(unix:///path) or C(tcp://host:port) (no TLS).
    type: str
    default: unix:///var/run/docker.sock
  docker_expected:
    description: When true an unreachable engine is C(FAIL); when false it is C(SKIP) (a host not provisioned yet).
    type: bool
    default: false
  docker_timeout:
    description: Seconds to wait for the engine API.
    type: float
    default: 5
  registry_mirrors:
    description:
      - Registry mirror URLs (as in daemon.json's C(registry-mirrors)); C(GET <url>/v2/) must answer 200 or 401 (auth
        required still means reachable), its TLS checked as dockerd checks it (the system's CAs plus the mirror's CA
        from O(registry_ca_files)).
    type: list
    elements: str
    default: []
  registry_ca_files:
    description:
      - Registry C(host[:port]) (the C(/etc/docker/certs.d) directory name) to a PEM CA file on the controller that
        signs that registry's or mirror's certificate, trusted on top of the system's CAs.
      - The action plugin reads the files and hands their content to the module as O(registry_ca_certificates).
    type: dict
    default: {}
  registry_ca_certificates:
    description: The same as PEM text (set by the action plugin from O(registry_ca_files)).
    type: dict
    default: {}
  registry_timeout:
    description: Seconds to wait for each registry.
    type: float
    default: 5
  registry_validate_certs:
    description: Verify the registries' TLS certificates.
    type: bool
    default: true
  gpu_min_count:
    description: Minimum number of usable NVIDIA GPUs. 0 reports what is there and C(SKIP)s when there is none.
    type: int
    default: 0
  cuda_check:
    description:
      - Initialise CUDA through the driver API (C(libcuda.so.1), no toolkit needed) in a child process and copy
        1 MiB to every GPU and back.
    type: bool
    default: false
  cuda_timeout:
    description: Seconds the CUDA probe may take.
    type: int
    default: 60
  nvidia_smi:
    description: C(nvidia-smi) to list GPU names when the driver is loaded (a name looked up on C(PATH) or a path).
    type: str
    default: nvidia-smi
  clock_max_skew:
    description: Largest accepted offset (seconds) between the target's clock and the controller's.
    type: float
    default: 5
  gather_subset:
    description:
      - Fact subsets to gather as C(ansible.builtin.setup) does with the same O(ansible.builtin.setup#module:gather_subset),
        e.g. V([min, virtual]); returned as RV(ansible_facts). Empty gathers none.
    type: list
    elements: str
    default: []
  gather_timeout:
    description: Seconds each fact collector may take, as for C(ansible.builtin.setup).
    type: int
    default: 10
  fact_path:
    description: Directory of the local facts (C(ansible_local)) the subset C(local), part of V(min), reads, as for
      C(ansible.builtin.setup).
    type: path
    default: /etc/ansible/facts.d
  input_names:
    description:
      - Names to show for the options in error messages (option name -> name), e.g. the variables of a role that
        passes them. Options not listed are shown by their own name.
    type: dict
    default: {}
  controller_time:
    description:
      - The controller's clock (epoch seconds) when the task started. Set by the action plugin; leave it out.
    type: float
notes:
  - Supports check mode and runs identically in it (all checks are read-only).
  - Runs with the target's standard library only; the registry checks honour the proxy variables.
"""

EXAMPLES = r"""
- name: Check a host before provisioning
  aisbench.agent_runtime.preflight_checks:
    commands: [apt-get, systemctl, tar]
    disk_path: /var/lib/docker
    disk_min_free_gb: 50
    registry_mirrors: [https://mirror.example.internal]
    required: [architecture, os_release, disk]
    gather_subset: [min, virtual]  # the facts later plays read, in the same round trip
  register: preflight

- name: Count GPUs and prove CUDA works
  aisbench.agent_runtime.preflight_checks:
    checks: [gpu, cuda]
    gpu_min_count: 8
    cuda_check: true
    required: [gpu, cuda]
  register: gpu_preflight
"""

RETURN = r"""
checks:
  description: One entry per check, in table order.
  returned: always
  type: list
  elements: dict
  contains:
    name: {description: Check name., type: str}
    status: {description: 'PASS, FAIL or SKIP.', type: str}
    reason: {description: Why., type: str}
    required: {description: Whether a FAIL counts in failed_required., type: bool}
    details: {description: What was measured (check specific)., type: dict}
by_name:
  description: The same entries keyed by check name.
  returned: always
  type: dict
failed_required:
  description: Names of required checks that failed.
  returned: always
  type: list
  elements: str
summary:
  description: The table, one line per check plus a count line.
  returned: always
  type: list
  elements: str
architecture:
  description: C(uname -m) of the host.
  returned: always
  type: str
platform:
  description: Docker platform of the host (e.g. linux/arm64), or null for an unknown architecture.
  returned: always
  type: str
target_time:
  description: The target's clock (epoch seconds) when the module started.
  returned: always
  type: float
elapsed:
  description: Seconds the module took after reading target_time (the action plugin subtracts it).
  returned: always
  type: float
ansible_facts:
  description: The facts of O(gather_subset), as C(ansible.builtin.setup) returns them; empty without O(gather_subset).
  returned: unless a required check failed (a failed task sets no facts)
  type: dict
"""

import os
import platform as platform_module
import sys
import time

# Read the clock first: everything after this is subtracted from the round trip by the action plugin.
_TARGET_TIME = time.time()
_STARTED = time.monotonic() if hasattr(time, "monotonic") else time.time()

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.facts import ansible_collector, default_collectors
from ansible.module_utils.facts.collector import CollectorNotFoundError, CycleFoundInFactDeps, UnresolvedFactDep
from ansible.module_utils.facts.namespace import PrefixFactNamespace
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _preflight as pf
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _registry as registry


def _validate(module):
    problems = pf.input_problems(module.params, module.params["input_names"])
    if problems:
        module.fail_json(msg=" ".join(problem + "." for problem in problems))


def _gather_facts(module):
    """The facts `setup` returns for gather_subset, from Ansible's own fact collectors; {} for no subset."""
    if not module.params["gather_subset"]:
        return {}
    try:
        collector = ansible_collector.get_ansible_collector(
            all_collector_classes=default_collectors.collectors,
            namespace=PrefixFactNamespace(namespace_name="ansible", prefix="ansible_"),
            filter_spec=[],
            gather_subset=module.params["gather_subset"],
            gather_timeout=module.params["gather_timeout"],
            minimal_gather_subset=pf.MINIMAL_GATHER_SUBSET)
    except (TypeError, CollectorNotFoundError, CycleFoundInFactDeps, UnresolvedFactDep) as exc:
        module.fail_json(msg="gather_subset: %s" % exc)
    return collector.collect(module=module)


def _run_check(module, name):
    params = module.params
    if name == "commands":
        return pf.check_commands(params["commands"], pf.probe_commands(params["commands"]))
    if name == "architecture":
        return pf.check_architecture(platform_module.machine(), params["supported_architectures"])
    if name == "os_release":
        return pf.check_os_release(pf.probe_os_release(), params["supported_os"])
    if name == "python":
        return pf.check_python(sys.version_info, params["python_min_version"], sys.executable)
    if name == "disk":
        probed, free, total = pf.probe_disk(params["disk_path"])
        return pf.check_disk(os.path.normpath(params["disk_path"]), probed, free, total, params["disk_min_free_gb"])
    if name == "binfmt_misc":
        return pf.check_binfmt(*pf.probe_binfmt())
    if name == "docker":
        return pf.check_docker(params["docker_expected"], pf.probe_docker(params["docker_host"], params["docker_timeout"]))
    if name in ("registry_mirrors", "registry_logins"):
        cas = params["registry_ca_certificates"]

        def probe(url, **login):
            return registry.probe(url, params["registry_timeout"], cas.get(registry.certs_dir_name(url)),
                                  validate_certs=params["registry_validate_certs"], **login)

        if name == "registry_mirrors":
            return pf.check_registry_mirrors([probe(url) for url in params["registry_mirrors"]], params["input_names"])
        return pf.check_registry_logins([probe(login["registry"], username=login["username"], password=login["password"])
                                         for login in params["registry_logins"]], params["input_names"])
    if name == "gpu":
        smi = module.get_bin_path(params["nvidia_smi"], opt_dirs=list(pf.SBIN_DIRS))
        return pf.check_gpu(params["gpu_min_count"], pf.probe_nvidia(run_smi=(lambda: pf.run_nvidia_smi(smi)) if smi else None))
    if name == "cuda":
        if not params["cuda_check"]:
            return pf.check_cuda(False, {})
        return pf.check_cuda(True, pf.probe_cuda(params["cuda_timeout"]))
    if name == "clock":
        # The action plugin replaces this with the controller's reading after the round trip.
        return pf.check_clock(params["clock_max_skew"], _TARGET_TIME, params["controller_time"])
    raise AssertionError(name)


def main():
    module = AnsibleModule(
        argument_spec=pf.ARGUMENT_SPEC,
        supports_check_mode=True,
    )
    _validate(module)
    facts = _gather_facts(module)
    selected = set(module.params["checks"])
    results = []
    for name in pf.CHECK_NAMES:
        if name not in selected:
            results.append(pf.skipped(name, "not selected"))
            continue
        try:
            results.append(_run_check(module, name))
        except Exception as exc:  # One broken probe is that check's FAIL, not the end of the report.
            results.append(pf.result(name, pf.FAIL, "check crashed: %s: %s" % (type(exc).__name__, exc)))
    checks, failed_required, summary = pf.summarize(results, module.params["required"])
    now = time.monotonic() if hasattr(time, "monotonic") else time.time()
    module.exit_json(
        changed=False,
        checks=checks,
        by_name=dict((item["name"], item) for item in checks),
        failed_required=failed_required,
        summary=summary,
        platform=pf.ARCH_TO_PLATFORM.get(platform_module.machine()),
        target_time=_TARGET_TIME,
        elapsed=now - _STARTED,
        architecture=platform_module.machine(),
        ansible_facts=facts,
    )


if __name__ == "__main__":
    main()
