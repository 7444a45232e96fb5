"""docs/airgapped.md's "Mirror-only sites" as written: its group_vars are the example file the registry scenario
provisions with, every variable in them is a role's, and its two commands select the build host and the fleet.

Its pure tests: tests/unit/repo/test_docs_mirror_only.py.
"""
import os
import re
import subprocess
import sys

from test_docs_mirror_only import section

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
BIN = os.path.dirname(sys.executable)
EXAMPLE = os.path.join(ROOT, "docs", "examples", "mirror-only", "group_vars_all.yml")


def test_the_two_commands_select_the_build_host_and_the_fleet(tmp_path):
    block = re.search(r"```bash\n(.*?)```", section("### Toolchains once per fleet"), re.S).group(1)
    commands = [line.split("#")[0].split() for line in block.splitlines() if line.startswith("ansible-playbook")]
    assert [argv[-1] for argv in commands] == ["aisbench.agent_runtime.toolchains", "aisbench.agent_runtime.site"]
    inventory = tmp_path / "inventories" / "mysite"
    (inventory / "group_vars").mkdir(parents=True)
    (inventory / "hosts.yml").write_text("all:\n  children:\n    aisbench_build: {hosts: {build-1: {}}}\n"
                                         "    aisbench: {hosts: {bench-1: {}, bench-2: {}}}\n")
    with open(EXAMPLE, encoding="utf-8") as handle:
        (inventory / "group_vars" / "all.yml").write_text(handle.read())
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_HOME=str(tmp_path / "home"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".cache", "collections"))
    listed = []
    for argv in commands:
        proc = subprocess.run([os.path.join(BIN, argv[0])] + argv[1:] + ["--list-hosts", "--list-tasks"],
                              capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=120, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        listed.append(proc.stdout)
    toolchains, site = listed
    assert set(re.findall(r"hosts \(\d+\):\n\s+(\S+)", toolchains)) == {"build-1"}, toolchains
    assert "aisbench.agent_runtime.baked_images : Push the toolchain images, fill their volumes and export them" in toolchains
    assert "aisbench.agent_runtime.runtime_image" not in toolchains
    assert re.search(r"hosts \(2\):\n\s+bench-\d\n\s+bench-\d", site), site
    assert "build-1" not in site
