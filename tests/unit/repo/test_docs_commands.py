"""Commands the docs give work as written (README.md and docs/*.md, run in a clean shell), and what the docs name exists.
Its tests that start a process: tests/integration/scripts/test_docs_commands_run.py."""
import os
import re

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))


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
    with open(os.path.join(ROOT, "roles", "aisbench_nightly", "meta", "argument_specs.yml"), encoding="utf-8") as handle:
        for entry_point in yaml.safe_load(handle)["argument_specs"].values():
            specs.update(entry_point["options"])
    blocks = yaml_blocks("datasets.md")
    assert len(blocks) == 3
    for block in (blocks[0], blocks[2]):
        for name in block:
            assert name in specs, name
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


def test_the_agent_toolchains_switch_agents_md_names_reaches_harbor_job_from_nightly():
    import yaml  # pylint: disable=import-outside-toplevel

    with open(os.path.join(ROOT, "docs", "agents.md"), encoding="utf-8") as handle:
        assert 'aisbench_nightly_agent_toolchains: "off"' in handle.read()
    with open(os.path.join(ROOT, "roles", "aisbench_nightly", "tasks", "run_job.yml"), encoding="utf-8") as handle:
        tasks = yaml.safe_load(handle)
    submits = [task["aisbench.agent_runtime.harbor_job"] for task in tasks
               if task.get("aisbench.agent_runtime.harbor_job", {}).get("state") == "started"]
    assert len(submits) == 2  # the check-mode plan and the submission
    assert all(args["agent_toolchains"] == "{{ aisbench_nightly_agent_toolchains | default(omit) }}" for args in submits)
