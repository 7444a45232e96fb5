"""Commands the docs give work as written (README.md and docs/*.md, run in a clean shell), and what the docs name exists.
Its pure tests: tests/unit/repo/test_docs_commands.py."""
import os
import re
import shlex
import subprocess
import shutil
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
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


# --- every command a user copies from README.md and docs/*.md runs as written --------------------------------------

# Reviewed: commands that cannot run here, with the reason.
NOT_RUN_HERE = {
    "ansible-galaxy collection install aisbench.agent_runtime": "needs galaxy.ansible.com, which this machine cannot reach",
    "ansible-galaxy collection install community.docker":
        "needs galaxy.ansible.com (the venv's ansible package bundles it)",
    "antsibull-changelog release": "a release step: it rewrites changelogs/ (test_changelog.py runs generate)",
    "antsibull-changelog generate": "rewrites CHANGELOG.md (test_changelog.py runs it on a copy)",
}
INLINE_COMMAND = re.compile(r"`((?:make|ansible-playbook|\.venv/bin/pytest|AISBENCH_WRITE_DOCS=1 \.venv/bin/pytest) [^`]+"
                            r"|\. \.venv/bin/activate)`")
CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def doc_commands(text):
    """The commands of a doc in its order: every line of its ```bash blocks (continuations joined) and the inline code
    spans that are commands."""
    commands = []
    for match in re.finditer(r"```bash\n(.*?)```|" + INLINE_COMMAND.pattern, text, re.S):
        if match.group(1) is not None:
            # A trailing "  # comment" goes (no command in the docs has " # " in quotes).
            commands += [re.sub(r"\s+#\s.*$", "", line.strip()) for line in match.group(1).replace("\\\n", " ").splitlines()
                         if line.strip() and not line.strip().startswith("#")]
        else:
            commands.append(match.group(2))
    return commands


def as_run_here(command):
    """What the test runs for a documented command (None: not run here, see NOT_RUN_HERE): make dry-runs (-n) in the
    checkout; ansible-playbook lists hosts and tasks (nothing on the inventory's hosts changes; the vault password
    comes from ANSIBLE_VAULT_PASSWORD_FILE instead of a prompt); pytest collects; the rest runs as it is."""
    if any(command.startswith(prefix) for prefix in NOT_RUN_HERE):
        return None
    command = re.sub(r"<[a-z-]+>", "example", command)  # placeholders such as <branch>
    if command.startswith("make "):
        return "(cd %s && make -n %s)" % (shlex.quote(ROOT), command[len("make "):])
    if "ansible-playbook " in command:
        return command.replace(" --ask-vault-pass", "") + " --list-hosts --list-tasks"
    if ".venv/bin/pytest " in command:
        return command + " --collect-only -q -p no:cacheprovider"
    return command


def user_checkout(tmp_path):
    """A checkout as a user has it after make setup (its .venv and .cache), the inventories a copy they may change."""
    home = tmp_path / "checkout"
    home.mkdir()
    for name in os.listdir(ROOT):
        if name in ("inventories", ".git", "reports"):
            continue
        os.symlink(os.path.join(ROOT, name), str(home / name))
    shutil.copytree(os.path.join(ROOT, "inventories"), str(home / "inventories"))
    return home


def test_every_documented_command_runs_as_written(tmp_path):
    """One shell for the docs in reading order (README, the quick start, the rest), which starts each doc with a clean
    PATH (no virtualenv) and no ANSIBLE_* variables: a doc whose commands need the virtualenv says to activate it."""
    docs = ["README.md", "docs/quickstart.md"] + sorted(
        "docs/" + name for name in os.listdir(os.path.join(ROOT, "docs"))
        if name.endswith(".md") and name not in ("quickstart.md", "performance.md"))
    home = user_checkout(tmp_path)
    vault_password = tmp_path / "vault-password"
    vault_password.write_text("docs-test\n")
    script, ran = [], []
    for doc in docs:
        with open(os.path.join(ROOT, doc), encoding="utf-8") as handle:
            commands = doc_commands(handle.read())
        script.append("deactivate 2>/dev/null; unset VIRTUAL_ENV; export PATH=%s; cd %s" % (CLEAN_PATH, shlex.quote(str(home))))
        for command in commands:
            run = as_run_here(command)
            if run is None:
                continue
            ran.append((doc, command))
            script.append("%s\necho \"@@ %d $?\"" % (run, len(ran) - 1))
    env = {"PATH": CLEAN_PATH, "HOME": str(tmp_path), "EDITOR": "true", "LANG": "C.UTF-8",
           "ANSIBLE_VAULT_PASSWORD_FILE": str(vault_password), "ANSIBLE_LOCAL_TEMP": str(tmp_path / "ansible-tmp")}
    proc = subprocess.run(["bash", "-c", "\n".join(script)], env=env, cwd=str(home), capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=900, check=False)
    output = proc.stdout + proc.stderr
    codes = {int(index): int(rc) for index, rc in re.findall(r"^@@ (\d+) (\d+)$", proc.stdout, re.M)}
    failed = [ran[index] for index in range(len(ran)) if codes.get(index) != 0]
    assert failed == [], output[-6000:]
    for problem in ("Unable to parse", "Could not match supplied host pattern", "provided hosts list is empty",
                    "command not found"):
        assert problem not in output, output[-6000:]
    # The commands of the issue this test came from are among them.
    assert ("docs/quickstart.md", "make status") in ran
    assert any(doc == "README.md" and command.startswith("ansible-playbook -i inventories/mysite") for doc, command in ran)
