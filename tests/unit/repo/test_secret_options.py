"""Secrets as one capability: every role option that can carry a credential is no_log in its argument spec, and no
message a role prints (fail_msg, msg, a loop label) interpolates one. The canary scenario (molecule/secrets) proves
the same for real: --check --diff -vvvv and a real run show none of them."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
ROLES = ROOT / "roles"
# Options that are secrets by nature; URL options are found below by the credentials=true of their check.
SECRET_OPTIONS = {"runtime_container_api_keys"}
URL_WITH_CREDENTIALS = re.compile(
    r"(\w+)\s+is\s+aisbench\.agent_runtime\.url\([^)]*credentials=true"
    r"|(\w+)\s*\|\s*(?:reject|select)\('aisbench\.agent_runtime\.url'[^)]*credentials=true")
MESSAGE_KEYS = ("msg", "fail_msg", "success_msg", "label")


def specs():
    """{option: (role, spec)} of every role's entry points."""
    options = {}
    for path in sorted(ROLES.glob("*/meta/argument_specs.yml")):
        for entry in yaml.safe_load(path.read_text())["argument_specs"].values():
            for name, spec in (entry.get("options") or {}).items():
                options[name] = (path.parts[-3], spec)
    return options


def task_texts():
    return {path: path.read_text() for path in sorted(ROLES.glob("*/tasks/*.yml"))}


def credential_options():
    found = set(SECRET_OPTIONS)
    for text in task_texts().values():
        for match in URL_WITH_CREDENTIALS.finditer(text):
            found.add(match.group(1) or match.group(2))
    return found


def messages(node):
    """Every message-like string of a task file (msg, fail_msg, success_msg, loop labels), recursively."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in MESSAGE_KEYS and isinstance(value, str):
                yield value
            else:
                yield from messages(value)
    elif isinstance(node, list):
        for item in node:
            yield from messages(item)


def test_every_option_that_can_carry_a_credential_is_no_log():
    options = specs()
    found = credential_options()
    # The URL options the roles accept user:token@ in (plugins/test/url.py's credentials=true).
    assert {"runtime_image_pip_index_url", "runtime_image_pip_extra_index_urls", "baked_images_pip_index_url",
            "baked_images_pip_extra_index_urls", "baked_images_npm_registry"} <= found
    not_no_log = sorted(name for name in found if options[name][1].get("no_log") is not True)
    assert not_no_log == []


def test_no_message_shows_a_credential():
    secret = credential_options()
    shown = []
    for path, text in task_texts().items():
        for message in messages(yaml.safe_load(text)):
            for expression in re.findall(r"\{\{(.*?)\}\}", message, re.S):
                # Names in string literals are text; "| length" shows no value.
                code = re.sub(r"'[^']*'|\"[^\"]*\"", "''", expression)
                shown += ["%s: %s" % (path.relative_to(ROOT), name) for name in secret
                          if re.search(r"\b%s\b(?!\s*\|\s*length\b)" % name, code)]
    assert shown == []
