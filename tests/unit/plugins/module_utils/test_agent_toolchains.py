"""The baked agent toolchain contract (plugins/module_utils/_agent_toolchains.py) and the builder's pure parts.
Its tests that start a process: tests/integration/scripts/test_agent_toolchains_installers.py."""
import importlib.machinery
import importlib.util
import json
import os
from pathlib import Path

import pytest
import yaml
from ansible_collections.aisbench.agent_runtime.plugins.module_utils import _agent_toolchains as tc

ROOT = Path(__file__).resolve().parents[4]
ROLE = ROOT / "roles/baked_images"
DEFAULTS = yaml.safe_load((ROLE / "defaults/main.yml").read_text())
RECIPES = yaml.safe_load((ROLE / "vars/main.yml").read_text())["_baked_images_agent_recipes"]
VERSIONS = DEFAULTS["baked_images_agent_versions"]
TEMPLATE = str(ROLE / "templates/toolchain.Dockerfile.j2")
BUILDER = str(ROLE / "files/aisbench-toolchain")


def plan(agents, **extra):
    extra.setdefault("default_template", TEMPLATE)
    extra.setdefault("build_files", [BUILDER])
    return tc.toolchain_plan(agents, extra.pop("versions", VERSIONS), extra.pop("recipes", RECIPES), **extra)


def image(entry, hash_label=None):
    return {"Id": "sha256:" + entry["agent"], "RepoTags": [entry["image"]],
            "Config": {"Labels": {tc.LABEL_HASH: hash_label or entry["hash"]}}}


def volume(entry, image_id=None, hash_label=None):
    labels = tc.toolchain_labels(entry, image_id or "sha256:" + entry["agent"])
    if hash_label:
        labels[tc.LABEL_HASH] = hash_label
    return {"Name": entry["volume"], "Labels": labels}


# --- the plan ------------------------------------------------------------------------------------------------


def test_plan_names_images_volumes_and_mounts():
    mini, qwen = plan(["mini-swe-agent", "qwen-coder"])
    assert (mini["image"], mini["volume"], mini["mount"]) == (
        "aisbench/agent-mini-swe-agent:2.4.6", "aisbench-agent-mini-swe-agent-2.4.6", "/opt/aisbench-agents/mini-swe-agent")
    assert mini["import_path"] == "aisbench_harbor.agents:MiniSweAgent" and mini["action"] == "build"
    assert qwen["npm_packages"] == ["@qwen-code/qwen-code@0.24.4"] and qwen["python_packages"] == []
    assert mini["labels"][tc.LABEL_VERSION] == "2.4.6"
    assert mini["check_argv"] == mini["manifest"]["check"] == ["/opt/aisbench-agents/mini-swe-agent/bin/mini-swe-agent", "--help"]
    assert qwen["check_argv"][1] == "/opt/aisbench-agents/qwen-coder/node/lib/node_modules/@qwen-code/qwen-code/cli-entry.js"


def test_existing_image_with_the_same_hash_is_kept_and_another_hash_rebuilt():
    first = plan(["mini-swe-agent"])[0]
    assert plan(["mini-swe-agent"], images=[image(first)])[0]["action"] == "skip"
    assert plan(["mini-swe-agent"], images=[image(first, "stale")])[0]["action"] == "build"
    assert plan(["mini-swe-agent"], images=[image(first)], rebuild=True)[0]["action"] == "build"


def test_archive_loads_unless_the_image_is_there():
    first = plan(["aider"], archives={"aider": "/srv/aider.tar"})[0]
    assert first["action"] == "load"
    assert plan(["aider"], archives={"aider": "/srv/aider.tar"}, images=[image(first, "other")])[0]["action"] == "skip"


def test_bumping_one_version_changes_that_toolchain_only():
    before = {entry["agent"]: entry for entry in plan(["mini-swe-agent", "qwen-coder"])}
    after = {entry["agent"]: entry for entry in plan(["mini-swe-agent", "qwen-coder"],
                                                     versions=dict(VERSIONS, **{"qwen-coder": "0.25.0"}))}
    assert after["mini-swe-agent"]["hash"] == before["mini-swe-agent"]["hash"]
    assert after["qwen-coder"]["hash"] != before["qwen-coder"]["hash"]
    assert after["qwen-coder"]["image"] == "aisbench/agent-qwen-coder:0.25.0"
    assert after["qwen-coder"]["volume"] == "aisbench-agent-qwen-coder-0.25.0"


def test_a_changed_template_or_builder_changes_the_hash(tmp_path):
    template = tmp_path / "mini-swe-agent.Dockerfile.j2"
    template.write_text("FROM x\n")
    own = plan(["mini-swe-agent"], template_dirs=[str(tmp_path)])[0]
    assert own["template"] == str(template)
    assert own["hash"] != plan(["mini-swe-agent"])[0]["hash"]
    builder = tmp_path / "builder"
    builder.write_text("other builder")
    assert plan(["mini-swe-agent"], build_files=[str(builder)])[0]["hash"] != plan(["mini-swe-agent"])[0]["hash"]


@pytest.mark.parametrize("agents,recipes,versions,message", [
    (["claude-code"], RECIPES, VERSIONS, "unknown agent claude-code: no recipe (known: aider, mini-swe-agent"),
    (["mini-swe-agent", "mini-swe-agent"], RECIPES, VERSIONS, "listed twice"),
    (["Mini"], RECIPES, VERSIONS, "lowercase letters"),
    (["mini-swe-agent"], RECIPES, {}, "needs a version for it"),
    (["mini-swe-agent"], RECIPES, {"mini-swe-agent": "1.0 ; rm -rf /"}, "needs a version for it"),
    (["x"], {"x": {"import_path": "m:C", "check": ["bin/x"]}}, {"x": "1"}, "needs python_packages or npm_packages"),
    (["x"], {"x": {"import_path": "not a path", "python_packages": ["x"], "check": ["bin/x"]}}, {"x": "1"}, "import_path must be module:Class"),
    (["x"], {"x": {"import_path": "m:C", "python_packages": ["x"], "check": ["/bin/x"]}}, {"x": "1"}, "check must be a command line"),
    (["x"], {"x": {"import_path": "m:C", "python_packages": ["x"], "check": ["bin/x"], "commands": {"x": "../x"}}}, {"x": "1"}, "commands must map"),
    (["x"], {"x": {"import_path": "m:C", "python_packages": ["x"], "check": ["bin/x"], "colour": 1}}, {"x": "1"}, "unknown keys colour"),
])
def test_bad_input_is_refused_with_its_reason(agents, recipes, versions, message):
    with pytest.raises(tc.ToolchainError, match=message.replace("(", r"\(").replace("[", r"\[")):
        plan(agents, recipes=recipes, versions=versions)


def test_stale_volumes():
    mini, qwen, aider = plan(["mini-swe-agent", "qwen-coder", "aider"])
    images = [image(mini), image(qwen), image(aider)]
    results = [{"item": mini, "exists": True, "volume": volume(mini)},
               {"item": qwen, "exists": True, "volume": volume(qwen, image_id="sha256:old")},
               {"item": aider, "exists": False}]
    assert tc.stale_volumes([mini, qwen, aider], images, results) == [qwen["volume"], aider["volume"]]
    results[0]["volume"] = volume(mini, hash_label="old")
    assert mini["volume"] in tc.stale_volumes([mini], images, results)
    # engine_objects_info's form (name to inspect document or None) decides the same.
    by_name = {mini["volume"]: volume(mini), qwen["volume"]: volume(qwen, image_id="sha256:old"), aider["volume"]: None}
    assert tc.stale_volumes([mini, qwen, aider], images, by_name) == [qwen["volume"], aider["volume"]]


def test_failure_records():
    mini, aider = plan(["mini-swe-agent", "aider"])
    failures = tc.base_failures([mini, aider], [{"RepoTags": ["debian:13-slim"]}],
                                [{"item": "debian:12-slim", "msg": "no such file"}])
    assert failures == [{"image": aider["image"], "log": [],
                         "error": "builder base image debian:12-slim is not on the engine: no such file"}]
    assert tc.image_failures([{"item": mini, "msg": "bad tar"}, {"item": aider, "image": {"Id": "x"}}], "archive did not load") == [
        {"image": mini["image"], "error": "archive did not load: bad tar", "log": []}]
    assert tc.toolchain_summary(mini, [mini["volume"]], [])["volume_action"] == "filled"
    assert tc.toolchain_summary(aider, [], [aider["image"]])["image_action"] == "failed"


# --- the job config (harbor_job) -----------------------------------------------------------------------------


def engine(*entries):
    return tc.parse_toolchain_volumes([volume(entry) for entry in entries])


def test_agents_are_mapped_and_their_toolchains_mounted():
    mini, qwen = plan(["mini-swe-agent", "qwen-coder"])
    config = {"agents": [{"name": "mini-swe-agent", "model_name": "openai/m"}, {"name": "qwen-coder", "model_name": "openai/q"},
                         {"name": "oracle"}, {"import_path": "my.mod:Agent"}],
              "datasets": [{"path": "/t"}], "environment": {"extra_docker_compose": ["/c/net.json"]}}
    original = json.dumps(config, sort_keys=True)
    mapped, overlay, problems, used = tc.use_baked_toolchains(config, engine(mini, qwen), "/jobs/.harbor_job/j/tc.json")
    assert problems == [] and json.dumps(config, sort_keys=True) == original
    assert mapped["agents"] == [{"import_path": "aisbench_harbor.agents:MiniSweAgent", "model_name": "openai/m"},
                                {"import_path": "aisbench_harbor.agents:QwenCode", "model_name": "openai/q"},
                                {"name": "oracle"}, {"import_path": "my.mod:Agent"}]
    assert mapped["environment"]["extra_docker_compose"] == ["/c/net.json", "/jobs/.harbor_job/j/tc.json"]
    assert overlay["services"]["main"]["volumes"] == [
        {"type": "volume", "source": "aisbench-agent-mini-swe-agent-2.4.6", "target": "/opt/aisbench-agents/mini-swe-agent", "read_only": True},
        {"type": "volume", "source": "aisbench-agent-qwen-coder-0.24.4", "target": "/opt/aisbench-agents/qwen-coder", "read_only": True}]
    assert overlay["volumes"] == {"aisbench-agent-mini-swe-agent-2.4.6": {"external": True},
                                  "aisbench-agent-qwen-coder-0.24.4": {"external": True}}
    assert [item["agent"] for item in used] == ["mini-swe-agent", "qwen-coder"]


@pytest.mark.parametrize("config", [{}, {"agents": [{"name": "oracle"}, {"name": "nop"}]}, {"agents": [{"name": "m.x:Cls"}]}])
def test_configs_that_install_nothing_are_left_alone(config):
    assert tc.use_baked_toolchains(config, [], "/o.json") == (config, None, [], [])


def test_missing_agents_and_versions_refuse_the_job():
    mini = plan(["mini-swe-agent"])[0]
    config = {"agents": [{"name": "claude-code"}, {"name": "mini-swe-agent", "kwargs": {"version": "9.9"}}]}
    mapped, overlay, problems, used = tc.use_baked_toolchains(config, engine(mini), "/o.json")
    assert (mapped, overlay, used) == (config, None, [])
    assert problems == [
        "agent claude-code has no baked toolchain on the trial engine (baked: mini-swe-agent 2.4.6); "
        "Harbor would install it from the Internet in every trial",
        "agent mini-swe-agent version 9.9 is not baked on the trial engine (baked: 2.4.6)"]


def harbor_agents(version):
    """The agent names a real Harbor release knows (its probe's output, recorded from the runtime image)."""
    with open(os.path.join(ROOT, "tests", "fixtures", "harbor", "cli", "harbor-%s-probe.json" % version)) as handle:
        return json.load(handle)["agents"]


@pytest.mark.parametrize("version", ["0.25.0", "0.26.0"])
def test_a_misspelled_agent_is_unknown_and_a_harbor_agent_is_unbaked(version):
    mini = plan(["mini-swe-agent"])[0]
    config = {"agents": [{"name": "mini-swe-agnet"}, {"name": "claude-code"}, {"name": "cowsay"}]}
    _m, overlay, problems, used = tc.use_baked_toolchains(config, engine(mini), "/o.json", harbor_agents(version))
    assert overlay is None and used == []
    assert problems[0].startswith("unknown agent mini-swe-agnet (did you mean mini-swe-agent?): neither baked on the "
                                  "trial engine nor an agent of Harbor (known: baked mini-swe-agent; Harbor's acp, aider, ")
    assert "qwen-coder" in problems[0] and "openhands" in problems[0]
    assert problems[1] == ("agent claude-code has no baked toolchain on the trial engine (baked: mini-swe-agent 2.4.6); "
                           "Harbor would install it from the Internet in every trial")
    assert problems[2].startswith("unknown agent cowsay: neither baked")
    # An agent of the site's own recipe is baked, so it is known though Harbor has no agent of that name.
    recipe = {"import_path": "my_agents:SayHello", "python_packages": ["cowsay"], "check": ["bin/cowsay"]}
    say_hello = plan(["say-hello"], recipes={"say-hello": recipe}, versions={"say-hello": "6.1"})[0]
    _m, _o, problems, used = tc.use_baked_toolchains({"agents": [{"name": "say-hello"}]}, engine(say_hello), "/o.json",
                                                     harbor_agents(version))
    assert problems == [] and used[0]["agent"] == "say-hello"


def test_the_version_asked_for_wins_else_the_newest():
    old = plan(["mini-swe-agent"], versions={"mini-swe-agent": "2.4.9"})[0]
    new = plan(["mini-swe-agent"], versions={"mini-swe-agent": "2.4.10"})[0]
    volumes = engine(new, old)
    assert [item["version"] for item in volumes] == ["2.4.9", "2.4.10"]
    _m, overlay, _p, used = tc.use_baked_toolchains({"agents": [{"name": "mini-swe-agent"}]}, volumes, "/o.json")
    assert used[0]["version"] == "2.4.10"
    _m, overlay, _p, used = tc.use_baked_toolchains({"agents": [{"name": "mini-swe-agent", "kwargs": {"version": "2.4.9"}}]}, volumes, "/o.json")
    assert used[0]["volume"] == "aisbench-agent-mini-swe-agent-2.4.9"
    _m, _o, problems, _u = tc.use_baked_toolchains(
        {"agents": [{"name": "mini-swe-agent", "kwargs": {"version": "2.4.9"}}, {"name": "mini-swe-agent", "kwargs": {"version": "2.4.10"}}]},
        volumes, "/o.json")
    assert problems == ["agent mini-swe-agent: one job can use one version of it, the matrix asks for 2.4.9 and 2.4.10"]


def test_volumes_without_complete_labels_are_ignored():
    mini = plan(["mini-swe-agent"])[0]
    broken = volume(mini)
    del broken["Labels"][tc.LABEL_IMPORT_PATH]
    assert tc.parse_toolchain_volumes([broken, {"Name": "other", "Labels": None}]) == []


# --- the builder (runs inside the toolchain build; its pure parts here) ---------------------------------------


def builder():
    loader = importlib.machinery.SourceFileLoader("aisbench_toolchain", BUILDER)
    spec = importlib.util.spec_from_loader("aisbench_toolchain", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


LDD = """\
\tlinux-vdso.so.1 (0x00007ffd6a5f2000)
\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f0e1c4e8000)
\tlibz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x00007f0e1c4c9000)
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f0e1c2e8000)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f0e1c9d0000)
"""


def test_ldd_output_is_read():
    loader, libraries, missing = builder().parse_ldd(LDD + "\tlibgone.so.1 => not found\n")
    assert loader == "/lib64/ld-linux-x86-64.so.2"
    assert libraries == {"libm.so.6": "/lib/x86_64-linux-gnu/libm.so.6", "libz.so.1": "/lib/x86_64-linux-gnu/libz.so.1",
                         "libc.so.6": "/lib/x86_64-linux-gnu/libc.so.6"}
    assert missing == ["libgone.so.1"]


def test_commands_link_python_scripts_and_wrap_node_scripts(tmp_path):
    module = builder()
    prefix = tmp_path / "opt" / "agent"
    (prefix / "venv/bin").mkdir(parents=True)
    (prefix / "node/lib/pkg").mkdir(parents=True)
    (prefix / "venv/bin/tool").write_text("#!/opt/agent/venv/bin/python3\nprint(1)\n")
    (prefix / "node/lib/pkg/cli.js").write_text("#!/usr/bin/env node\nconsole.log(1)\n")
    module.make_commands(str(prefix), {"tool": "venv/bin/tool", "js": "node/lib/pkg/cli.js"})
    assert os.readlink(prefix / "bin/tool") == str(prefix / "venv/bin/tool")
    wrapper = (prefix / "bin/js").read_text()
    assert wrapper == '#!/bin/sh\nexec %s/node/bin/node %s/node/lib/pkg/cli.js "$@"\n' % (prefix, prefix)
    assert os.access(prefix / "bin/js", os.X_OK)
    with pytest.raises(SystemExit, match="command gone"):
        module.make_commands(str(prefix), {"gone": "venv/bin/gone"})


def test_npm_tarballs_extract_below_package_only(tmp_path):
    import io
    import tarfile
    module = builder()
    tgz = tmp_path / "p.tgz"
    with tarfile.open(tgz, "w:gz") as archive:
        for name, data in (("package/bin/node", b"ELF"), ("package/../../evil", b"x"), ("other/file", b"y")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    module.extract_package(str(tgz), str(tmp_path / "out"))
    assert (tmp_path / "out/bin/node").read_bytes() == b"ELF"
    assert not (tmp_path / "evil").exists() and (tmp_path / "out/file").read_bytes() == b"y"


def test_index_options_go_to_both_installers_and_requirements_to_uv():
    index, rest = builder().split_index_options(
        ["--index-url", "https://pypi.corp/simple", "--extra-index-url=https://extra/simple", "mini-swe-agent==2.4.6", "litellm[mcp]"])
    assert index == ["--index-url", "https://pypi.corp/simple", "--extra-index-url=https://extra/simple"]
    assert rest == ["mini-swe-agent==2.4.6", "litellm[mcp]"]


def test_a_registry_with_credentials_is_fetched_with_basic_auth(tmp_path, capsys):
    """fetch() sends user:password as an Authorization header (urllib refuses them in the URL) and never prints them."""
    import base64
    import http.server
    import threading

    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            seen.append(self.headers.get("Authorization"))
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"tarball")

        def log_message(self, *args):
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        module = builder()
        url, credentials = module.split_credentials("http://npm:reg-canary-4@127.0.0.1:%d/reg" % server.server_port)
        module.fetch(url + "/node.tgz", str(tmp_path / "node.tgz"), credentials)
    finally:
        server.shutdown()
    assert (tmp_path / "node.tgz").read_bytes() == b"tarball"
    assert seen == ["Basic " + base64.b64encode(b"npm:reg-canary-4").decode()]
    assert "reg-canary-4" not in capsys.readouterr().out


# --- toolchains once per fleet: pulled from the site registry, pushed by the build host --------------------------


def test_pull_hosts_pull_what_they_lack_and_keep_what_they_have():
    first = plan(["mini-swe-agent"], source="pull", registry="registry.example:5000/")[0]
    assert first["action"] == "pull"
    assert first["remote"] == "registry.example:5000/aisbench/agent-mini-swe-agent:2.4.6"
    # The registry is no input of the toolchain: a pulled toolchain has the build host's hash.
    assert first["hash"] == plan(["mini-swe-agent"])[0]["hash"]
    assert plan(["mini-swe-agent"], source="pull", registry="r:5000", images=[image(first)])[0]["action"] == "skip"
    assert plan(["mini-swe-agent"], source="pull", registry="r:5000", images=[image(first, "other")])[0]["action"] == "pull"
    # An archive is loaded whatever the source.
    assert plan(["aider"], source="pull", registry="r:5000", archives={"aider": "/srv/a.tar"})[0]["action"] == "load"


@pytest.mark.parametrize("source, registry, message", [
    ("pull", "", "baked_images_agent_source=pull needs baked_images_agent_registry"),
    ("fetch", "r:5000", "baked_images_agent_source must be bake or pull, got 'fetch'"),
])
def test_pull_without_a_registry_or_an_unknown_source_is_refused(source, registry, message):
    with pytest.raises(tc.ToolchainError, match=message):
        plan(["mini-swe-agent"], source=source, registry=registry)


def test_a_pulled_toolchain_of_another_recipe_is_refused_and_a_failed_pull_named():
    mini, aider = plan(["mini-swe-agent", "aider"], source="pull", registry="registry.example:5000")
    results = [{"item": mini, "image": {"Id": "sha256:m", "Config": {"Labels": {tc.LABEL_HASH: mini["hash"]}}}},
               {"item": aider, "image": {"Id": "sha256:a", "Config": {"Labels": {tc.LABEL_HASH: "elsewhere"}}}},
               {"item": aider, "msg": "manifest unknown"}, {"item": mini, "skipped": True}]
    failures = tc.pull_failures(results)
    assert [failure["image"] for failure in failures] == [aider["image"], aider["image"]]
    assert failures[0]["error"].startswith("registry.example:5000/aisbench/agent-aider:0.86.2 in the site registry was "
                                           "baked from another recipe, version or template than this host's")
    assert failures[0]["error"].endswith("bake and push it again on the build host")
    assert failures[1]["error"] == ("cannot pull registry.example:5000/aisbench/agent-aider:0.86.2 from the site registry: "
                                    "manifest unknown")


def test_push_plan_skips_what_the_registry_already_got_and_what_failed():
    mini, aider, qwen = plan(["mini-swe-agent", "aider", "qwen-coder"], registry="registry.example:5000")
    images = [dict(image(mini), RepoDigests=["registry.example:5000/aisbench/agent-mini-swe-agent@sha256:1"]),
              dict(image(aider), RepoDigests=["elsewhere.example/aisbench/agent-aider@sha256:2"]),
              image(qwen)]
    assert [entry["agent"] for entry in tc.push_plan([mini, aider, qwen], images, [])] == ["aider", "qwen-coder"]
    assert [entry["agent"] for entry in tc.push_plan([mini, aider, qwen], images, [qwen["image"]])] == ["aider"]
    # No registry, nothing to push.
    assert tc.push_plan(plan(["aider"]), [image(aider)], []) == []


def test_summary_says_pulled_and_pushed():
    mini = plan(["mini-swe-agent"], source="pull", registry="r:5000")[0]
    summary = tc.toolchain_summary(mini, [mini["volume"]], [], [mini["image"]])
    assert (summary["image_action"], summary["volume_action"], summary["pushed"]) == ("pulled", "filled", True)
