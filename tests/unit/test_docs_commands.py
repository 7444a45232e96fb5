"""Commands the docs give work as written: run them with --list-hosts/--list-tasks (nothing is changed)."""
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)


def shell_commands(doc, heading):
    """The commands of the first bash block under the heading, continuation lines joined, comments dropped."""
    with open(os.path.join(ROOT, "docs", doc), encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("\n## " + heading + "\n", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    return [line for line in block.replace("\\\n", " ").splitlines() if line.strip() and not line.startswith("#")]


def test_airgapped_build_command_selects_the_build_host_and_the_runtime_image_tasks(tmp_path):
    commands = [c for c in shell_commands("airgapped.md", "Build once, ship the tar") if c.startswith("ansible-playbook")]
    assert len(commands) == 1, commands
    argv = shlex.split(commands[0])
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"), ANSIBLE_HOME=str(tmp_path / "home"),
               ANSIBLE_COLLECTIONS_PATH=os.path.join(ROOT, ".cache", "collections"))
    proc = subprocess.run([os.path.join(BIN, argv[0])] + argv[1:] + ["--list-hosts", "--list-tasks"],
                          capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    plays = re.findall(r"hosts \((\d+)\):\n\s+(\S+)", proc.stdout)
    assert plays and all(plays_hosts == ("1", "build-host") for plays_hosts in plays), proc.stdout
    # site.yml imports the role: its own tasks are listed, tagged runtime_image.
    assert re.search(r"aisbench\.agent_runtime\.runtime_image : Read what the target holds.*\tTAGS: \[runtime_image\]",
                     proc.stdout), proc.stdout


def yaml_blocks(doc):
    """Every ```yaml block of a doc, parsed."""
    import yaml  # pylint: disable=import-outside-toplevel

    with open(os.path.join(ROOT, "docs", doc), encoding="utf-8") as handle:
        return [yaml.safe_load(block) for block in re.findall(r"```yaml\n(.*?)```", handle.read(), re.S)]


def test_add_a_dataset_names_real_variables_and_the_sample_tasks_have_its_layout():
    import yaml  # pylint: disable=import-outside-toplevel

    specs = {}
    for role in ("baked_images", "runtime_container"):
        with open(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
            specs.update(yaml.safe_load(handle)["argument_specs"]["main"]["options"])
    with open(os.path.join(ROOT, "playbooks", "nightly.yml"), encoding="utf-8") as handle:
        nightly = handle.read()
    blocks = yaml_blocks("datasets.md")
    assert len(blocks) == 3
    for block in (blocks[0], blocks[2]):
        for name in block:
            assert name in specs or (name.startswith("aisbench_nightly_") and name in nightly), name
    # The baked_images example has the keys the sample inventory's cases have (which make demo bakes).
    with open(os.path.join(ROOT, "inventories", "local", "group_vars", "aisbench.yml"), encoding="utf-8") as handle:
        local_case = yaml.safe_load(handle.read().replace("{{ aisbench_images_dir }}", "/x"))["baked_images_cases"][0]
    assert set(blocks[0]["baked_images_cases"][0]) == set(local_case)
    assert blocks[1]["datasets"][0]["path"] == "/opt/swebench/tasks/my_dataset"
    # The worked example: the sample tasks e2e and make demo run have every file the page lists.
    sample = os.path.join(ROOT, "playbooks", "files", "sample_tasks")
    for task in ("hello-pass", "hello-fail"):
        for path in ("task.toml", "instruction.md", "environment/Dockerfile", "solution/solve.sh", "tests/test.sh"):
            assert os.path.isfile(os.path.join(sample, task, path)), (task, path)
