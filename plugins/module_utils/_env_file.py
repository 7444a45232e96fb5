# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0 (see LICENSE)
"""Env files: the one rule for what may go in one and how it is written (standard library only).

Two styles: ``docker`` (``docker exec --env-file``: one ``KEY=value`` a line, the value literal) and
``dotenv`` (Harbor's ``--env-file`` and the runtime container's ``api_key.env``, read with python-dotenv
and the model gateway's line reader: single-quoted values, ``\\`` and ``'`` escaped with a backslash).
Neither style can carry a line break or NUL; python-dotenv expands ``${...}`` even in single quotes,
so a dotenv value may not contain it. Such input is refused (``env_problems``), never written.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

ENV_KEY_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
STYLES = ("docker", "dotenv")


class EnvFileError(ValueError):
    """Input that cannot be written as an env file; the message names keys, never values."""


def _text(value):
    return "" if value is None else str(value)


def _problem_kind(key, value, style):
    """None, or why one entry cannot be written: 'name', 'line break' or 'expansion'."""
    if not ENV_KEY_PATTERN.match(str(key)):
        return "name"
    text = _text(value)
    if "\n" in text or "\r" in text or "\0" in text:
        return "line break"
    if style == "dotenv" and "${" in text:
        # Harbor's --env-file loader (python-dotenv) expands ${...} even in quotes.
        return "expansion"
    return None


def env_problems(env, style):
    """Reasons the env mapping cannot be written safely as an env file of the given style."""
    messages = {
        "name": "env key %r is not a valid variable name",
        "line break": "env value of %s contains a line break or NUL",
        "expansion": "env value of %s contains '${', which Harbor's env-file loader would expand",
    }
    problems = []
    for key, value in sorted((env or {}).items()):
        kind = _problem_kind(key, value, style)
        if kind:
            problems.append(messages[kind] % ((key,) if kind == "name" else key))
    return problems


def bad_env_keys(env, style):
    """The keys env_problems refuses, as {'bad_names': [...], 'bad_values': [...]} (sorted; never a value)."""
    kinds = dict((str(key), _problem_kind(key, value, style)) for key, value in (env or {}).items())
    return {"bad_names": sorted(key for key, kind in kinds.items() if kind == "name"),
            "bad_values": sorted(key for key, kind in kinds.items() if kind in ("line break", "expansion"))}


def render_env_file(env, style, header=None):
    """Env file text, keys sorted; ``header`` lines (if any) first, each as a ``# `` comment.

    None is the empty value. Does not check its input: call ``env_problems`` first (or ``checked_env_file``).
    """
    if style not in STYLES:
        raise EnvFileError("env file style must be one of %s, got %r" % (", ".join(STYLES), style))
    header = list(header or [])
    if any(re.search(r"[\r\n\0]", str(line)) for line in header):
        raise EnvFileError("an env file's header lines may not contain a line break or NUL")
    lines = ["# " + str(line) for line in header]
    for key, value in sorted((env or {}).items()):
        text = _text(value)
        if style == "dotenv":
            text = "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
        lines.append("%s=%s" % (key, text))
    return "\n".join(lines) + ("\n" if lines else "")


def checked_env_file(env, style, header=None):
    """``render_env_file`` after ``env_problems``: raises EnvFileError naming every problem."""
    if env is not None and not isinstance(env, dict):
        raise EnvFileError("an env file needs a mapping of names to values, got %s" % type(env).__name__)
    problems = env_problems(env, style)
    if problems:
        raise EnvFileError("; ".join(problems))
    return render_env_file(env, style, header=header)


def env_file_names(text):
    """The variable names an env file's text sets, sorted (comments and blank lines skipped; never a value)."""
    names = set()
    for line in _text(text).splitlines():
        name, sep, _value = line.partition("=")
        name = name.strip()
        if sep and name and not name.startswith("#"):
            names.add(name)
    return sorted(names)
