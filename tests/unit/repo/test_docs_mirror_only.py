"""docs/airgapped.md's "Mirror-only sites" as written: its group_vars are the example file the registry scenario
provisions with, every variable in them is a role's, and its two commands select the build host and the fleet.

Its tests that start a process: tests/integration/plays/test_docs_mirror_only_play.py.
"""
import os
import re

import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
EXAMPLE = os.path.join(ROOT, "docs", "examples", "mirror-only", "group_vars_all.yml")


def section(heading):
    with open(os.path.join(ROOT, "docs", "airgapped.md"), encoding="utf-8") as handle:
        text = handle.read()
    return re.split(r"\n#+ ", text.split("\n" + heading + "\n", 1)[1], maxsplit=1)[0]


def test_the_howto_shows_the_example_file_the_scenario_runs():
    block = re.search(r"```yaml\n(.*?)```", section("## Mirror-only sites"), re.S).group(1)
    with open(EXAMPLE, encoding="utf-8") as handle:
        example = yaml.safe_load(handle)
    assert yaml.safe_load(block) == example
    with open(os.path.join(ROOT, "molecule", "registry", "converge.yml"), encoding="utf-8") as handle:
        assert "docs/examples/mirror-only/group_vars_all.yml" in handle.read()
    specs = {}
    for role in ("docker_engine", "runtime_image", "runtime_container", "baked_images"):
        with open(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml"), encoding="utf-8") as handle:
            specs.update(yaml.safe_load(handle)["argument_specs"]["main"]["options"])
    assert [name for name in example if name not in specs] == []
