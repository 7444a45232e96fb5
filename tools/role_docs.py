"""Write the variables table of every role into docs/roles/<role>.md from meta/argument_specs.yml.

`python tools/role_docs.py` rewrites the files; `--check` exits 1 when one is out of date
(the unit tests run the check, so docs cannot drift from the argument specs).
"""
import argparse
import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN = "<!-- BEGIN GENERATED VARIABLES: tools/role_docs.py -->"
END = "<!-- END GENERATED VARIABLES -->"


def _cell(value):
    text = " ".join(str(value).split())
    text = re.sub(r"[CV]\(([^()]*)\)", r"`\1`", text)  # ansible-doc markup to Markdown
    text = re.sub(r"I\(([^()]*)\)", r"*\1*", text)
    return text.replace("|", "\\|")


def _default(spec):
    if "default" not in spec:
        return "(required)" if spec.get("required") else ""
    default = spec["default"]
    if isinstance(default, str):
        return "`%s`" % default if default else '`""`'
    return "`%s`" % yaml.safe_dump(default, default_flow_style=True).strip().replace("\n...", "").strip()


def variables_table(role_dir):
    with open(os.path.join(role_dir, "meta", "argument_specs.yml")) as handle:
        specs = yaml.safe_load(handle)["argument_specs"]
    parts = []
    for entry_point, entry in specs.items():
        parts.append("### Entry point `%s`\n" % entry_point)
        parts.append("%s\n" % _cell(entry.get("short_description", "")))
        parts.append("| variable | type | default | description |")
        parts.append("|---|---|---|---|")
        for name, spec in sorted((entry.get("options") or {}).items()):
            kind = spec.get("type", "str")
            if kind == "list" and spec.get("elements"):
                kind = "list of %s" % spec["elements"]
            choices = " Choices: %s." % ", ".join("`%s`" % c for c in spec["choices"]) if spec.get("choices") else ""
            description = spec.get("description", "")
            if isinstance(description, list):
                description = " ".join(description)
            parts.append("| `%s` | %s | %s | %s%s |" % (name, kind, _default(spec), _cell(description), choices))
        parts.append("")
    return "\n".join(parts)


def render(role, current):
    table = variables_table(os.path.join(ROOT, "roles", role))
    block = "%s\n%s\n%s" % (BEGIN, table, END)
    if BEGIN in current and END in current:
        head, rest = current.split(BEGIN, 1)
        return head + block + rest.split(END, 1)[1]
    prefix = current.rstrip() + "\n\n" if current.strip() else "# Role `%s`\n\n" % role
    return prefix + "## All variables\n\n" + block + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail when a doc is out of date")
    args = parser.parse_args()
    stale = []
    for role in sorted(os.listdir(os.path.join(ROOT, "roles"))):
        if not os.path.exists(os.path.join(ROOT, "roles", role, "meta", "argument_specs.yml")):
            continue
        path = os.path.join(ROOT, "docs", "roles", "%s.md" % role)
        current = open(path).read() if os.path.exists(path) else ""
        wanted = render(role, current)
        if wanted != current:
            stale.append(path)
            if not args.check:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as handle:
                    handle.write(wanted)
    if args.check and stale:
        print("out of date (run python tools/role_docs.py): %s" % ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
