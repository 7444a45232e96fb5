# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0
"""Baked agent toolchains (L2): what the baked_images role builds and how Harbor jobs use them.

A toolchain is one agent at one version, self-contained under /opt/aisbench-agents/<agent> (its own interpreter and
libraries), built into the image aisbench/agent-<agent>:<version> and copied into the volume
aisbench-agent-<agent>-<version> on the engine that runs the trials. The volume's labels describe it; the harbor_job
module reads them, maps the agent names of a job config to the collection's Harbor classes (import_path) and mounts
the volumes read-only into the trial containers with a Docker Compose overlay.

This file holds both sides of that contract: the plan the role follows (toolchain_plan) and the config rewrite
harbor_job applies (use_baked_toolchains).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import difflib
import hashlib
import json
import os
import re

TOOLCHAIN_ROOT = "/opt/aisbench-agents"
IMAGE_REPOSITORY = "aisbench/agent-"
VOLUME_PREFIX = "aisbench-agent-"
LABEL_PREFIX = "org.aisbench.toolchain."
LABEL_AGENT = LABEL_PREFIX + "agent"
LABEL_VERSION = LABEL_PREFIX + "version"
LABEL_IMPORT_PATH = LABEL_PREFIX + "import-path"
LABEL_MOUNT = LABEL_PREFIX + "mount"
LABEL_HASH = LABEL_PREFIX + "hash"
LABEL_IMAGE_ID = LABEL_PREFIX + "image-id"
# Harbor agents that install nothing in the trial: they run anywhere as they are.
AGENTS_WITHOUT_INSTALL = ("oracle", "nop")
AGENT_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}\Z")
VERSION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}\Z")
IMPORT_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*:[A-Za-z_][A-Za-z0-9_]*\Z")
RECIPE_KEYS = ("import_path", "base", "python_packages", "npm_packages", "debian_packages", "tools", "commands",
               "check", "venv")


class ToolchainError(Exception):
    pass


def image_ref(agent, version):
    return "%s%s:%s" % (IMAGE_REPOSITORY, agent, version)


def volume_name(agent, version):
    return "%s%s-%s" % (VOLUME_PREFIX, agent, re.sub(r"[^A-Za-z0-9_.-]", "-", version))


def mount_path(agent):
    return "%s/%s" % (TOOLCHAIN_ROOT, agent)


def _strings(recipe, key, agent):
    value = recipe.get(key) or []
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        raise ToolchainError("agent recipe %s: %s must be a list of strings, got %r" % (agent, key, value))
    return value


def check_recipe(agent, recipe, own_template=False):
    """The recipe's problems as an exception; nothing returned when it is usable. With its own template an agent
    needs no packages (the template installs it)."""
    if not isinstance(recipe, dict):
        raise ToolchainError("agent recipe %s must be a mapping, got %r" % (agent, recipe))
    unknown = sorted(set(recipe) - set(RECIPE_KEYS))
    if unknown:
        raise ToolchainError("agent recipe %s: unknown keys %s (known: %s)" % (agent, ", ".join(unknown), ", ".join(RECIPE_KEYS)))
    if not IMPORT_PATH.match(str(recipe.get("import_path", ""))):
        raise ToolchainError("agent recipe %s: import_path must be module:Class, got %r" % (agent, recipe.get("import_path")))
    packages = _strings(recipe, "python_packages", agent) + _strings(recipe, "npm_packages", agent)
    if not packages and not own_template:
        raise ToolchainError("agent recipe %s: needs python_packages or npm_packages" % agent)
    commands = recipe.get("commands") or {}
    if not isinstance(commands, dict) or not all(AGENT_NAME.match(str(name)) and isinstance(path, str) and path
                                                 and not path.startswith("/") and ".." not in path.split("/")
                                                 for name, path in commands.items()):
        raise ToolchainError("agent recipe %s: commands must map command names to paths inside the toolchain, got %r"
                             % (agent, commands))
    check = _strings(recipe, "check", agent)
    if not check or check[0].startswith("/") or ".." in check[0].split("/"):
        raise ToolchainError("agent recipe %s: check must be a command line whose first word is a path inside the "
                             "toolchain (e.g. [bin/mini-swe-agent, --help]), got %r" % (agent, check))
    for key in ("debian_packages", "tools"):
        _strings(recipe, key, agent)


def find_template(agent, template_dirs, default):
    """The agent's own NAME.Dockerfile.j2 from the last of template_dirs that has one, else default."""
    for directory in reversed(template_dirs or []):
        path = os.path.join(directory, agent + ".Dockerfile.j2")
        if os.path.isfile(path):
            return path
    return default


def _file_digest(paths):
    digest = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as handle:
            digest.update(handle.read())
    return digest.hexdigest()


def remote_ref(registry, ref):
    """The toolchain image's name in the site registry (registry host[:port][/path] + the local name)."""
    return "%s/%s" % (registry.strip("/"), ref) if registry else ""


def toolchain_plan(agents, versions, recipes, images=None, archives=None, base="debian:13-slim", rebuild=False,
                   template_dirs=None, default_template=None, build_files=None, source="bake", registry=""):
    """What the role does for each agent toolchain (on the controller).

    agents: agent names to bake; versions: agent -> version; recipes: agent -> recipe; images: docker_image_info's
    ``images`` for the toolchain refs (those that exist); archives: agent -> image tar to load instead of building;
    template_dirs/default_template: where the Dockerfile template comes from (see find_template); build_files: other
    files of the build context. The hash covers the recipe, the version, the template and those files.
    source: bake (build what is missing here) or pull (pull it from registry, where a build host pushed it); an agent
    with an archive is loaded either way.
    Returns one dict per agent: agent, version, image, remote (its name in registry), volume, mount, import_path, base,
    archive, template, hash, action (skip, load, pull or build) and the build inputs (packages, commands, manifest).
    """
    if source not in ("bake", "pull"):
        raise ToolchainError("baked_images_agent_source must be bake or pull, got %r" % (source,))
    if source == "pull" and not registry:
        raise ToolchainError("baked_images_agent_source=pull needs baked_images_agent_registry (the site registry the "
                             "build host pushed the toolchains to)")
    archives = archives or {}
    existing = {}
    for image in images or []:
        for tag in image.get("RepoTags") or []:
            existing[tag] = image
    seen, plan = set(), []
    for agent in agents:
        agent = str(agent)
        if not AGENT_NAME.match(agent):
            raise ToolchainError("agent name %r: lowercase letters, digits, '.', '_' and '-' only" % agent)
        if agent in seen:
            raise ToolchainError("agent %s is listed twice" % agent)
        seen.add(agent)
        if agent not in recipes:
            raise ToolchainError("unknown agent %s: no recipe (known: %s); add one in baked_images_agent_recipes"
                                 % (agent, ", ".join(sorted(recipes))))
        recipe = recipes[agent]
        template = find_template(agent, template_dirs, default_template) if default_template else ""
        check_recipe(agent, recipe, own_template=bool(template) and template != default_template)
        version = str(versions.get(agent, "")) if isinstance(versions, dict) else ""
        if not VERSION.match(version):
            raise ToolchainError("agent %s: baked_images_agent_versions needs a version for it, got %r" % (agent, version))
        ref = image_ref(agent, version)
        mount = mount_path(agent)
        # The check as run everywhere (builder, toolchain image, trial): its command and "{toolchain}" made absolute.
        check_argv = ["%s/%s" % (mount, recipe["check"][0])] + [arg.replace("{toolchain}", mount) for arg in recipe["check"][1:]]
        manifest = {
            "agent": agent,
            "version": version,
            "commands": recipe.get("commands") or {},
            "tools": recipe.get("tools") or [],
            "check": check_argv,
            "venv": recipe.get("venv", "venv"),
        }
        entry = {
            "agent": agent,
            "version": version,
            "image": ref,
            "ref": ref,
            "volume": volume_name(agent, version),
            "mount": mount,
            "import_path": recipe["import_path"],
            "base": recipe.get("base") or base,
            "python_packages": [item.replace("{version}", version) for item in recipe.get("python_packages") or []],
            "npm_packages": [item.replace("{version}", version) for item in recipe.get("npm_packages") or []],
            "debian_packages": recipe.get("debian_packages") or [],
            "tools": recipe.get("tools") or [],
            "manifest": manifest,
            "archive": str(archives.get(agent) or ""),
            "dockerfile": "toolchain-%s.Dockerfile" % agent,
            "template": template,
        }
        files = ([entry["template"]] if entry["template"] else []) + list(build_files or [])
        inputs = dict(entry, archive="", template=os.path.basename(entry["template"]))
        entry["hash"] = hashlib.sha256(json.dumps([inputs, _file_digest(files)], sort_keys=True).encode("utf-8")).hexdigest()
        entry["labels"] = toolchain_labels(entry)
        entry["check_argv"] = check_argv
        current = existing.get(ref)
        labels = ((current or {}).get("Config") or {}).get("Labels") or {}
        entry["remote"] = remote_ref(registry, ref)
        if current is not None and not rebuild and (entry["archive"] or labels.get(LABEL_HASH) == entry["hash"]):
            entry["action"] = "skip"
        elif entry["archive"]:
            entry["action"] = "load"
        elif source == "pull":
            entry["action"] = "pull"
        else:
            entry["action"] = "build"
        plan.append(entry)
    return plan


def toolchain_labels(entry, image_id=None):
    """Labels of a toolchain image (without the image id) or of its volume (with it)."""
    labels = {
        LABEL_AGENT: entry["agent"],
        LABEL_VERSION: entry["version"],
        LABEL_IMPORT_PATH: entry["import_path"],
        LABEL_MOUNT: entry["mount"],
        LABEL_HASH: entry["hash"],
    }
    if image_id:
        labels[LABEL_IMAGE_ID] = image_id
    return labels


def stale_volumes(plan, images, volume_results):
    """Volumes to (re)fill: the missing ones and those whose labels name another toolchain hash or image than the
    engine has now. images: docker_image_info's ``images``; volume_results: docker_volume_info results (loop), or
    engine_objects_info's ``volumes`` (name to inspect document or None)."""
    ids = {}
    for image in images or []:
        for tag in image.get("RepoTags") or []:
            ids[tag] = image.get("Id")
    if isinstance(volume_results, dict):
        volumes = dict(volume_results)
    else:
        volumes = {}
        for result in volume_results or []:
            volume = result.get("volume") if result.get("exists") else None
            volumes[(result.get("item") or {}).get("volume")] = volume
    stale = []
    for entry in plan:
        volume = volumes.get(entry["volume"])
        labels = (volume or {}).get("Labels") or {}
        if volume is None or labels.get(LABEL_HASH) != entry["hash"] or labels.get(LABEL_IMAGE_ID) != ids.get(entry["image"]):
            stale.append(entry["volume"])
    return stale


def base_failures(builds, images, results):
    """Failure records for the toolchain builds whose builder base image is still not on the engine after the role
    loaded or pulled what it could. results: the looped load/pull results (item = base reference)."""
    present = set()
    for image in images or []:
        present.update(image.get("RepoTags") or [])
    why = {}
    for result in results or []:
        if result.get("skipped"):
            continue
        why[result.get("item")] = result.get("msg") or "failed"
    return [{"image": entry["image"], "log": [],
             "error": "builder base image %s is not on the engine: %s" % (
                 entry["base"], why.get(entry["base"], "no archive in baked_images_base_archives and baked_images_pull is false"))}
            for entry in builds if entry["base"] not in present]


def pull_failures(results):
    """Failure records of the looped docker_image_pull results (item: a plan entry): not pulled, or pulled but baked from
    another recipe, version or template than this host's plan (its hash label differs): such a toolchain is not used."""
    failures = []
    for result in results or []:
        entry = result.get("item") or {}
        image = result.get("image") or {}
        if result.get("skipped"):
            continue
        if not image:
            error = "cannot pull %s from the site registry: %s" % (entry.get("remote"), result.get("msg", "failed"))
            failures.append({"image": entry.get("image"), "log": [], "error": error})
            continue
        found = ((image.get("Config") or {}).get("Labels") or {}).get(LABEL_HASH)
        if found != entry.get("hash"):
            failures.append({"image": entry.get("image"), "log": [],
                             "error": "%s in the site registry was baked from another recipe, version or template than "
                                      "this host's (toolchain hash %s, here %s): bake and push it again on the build host"
                                      % (entry.get("remote"), found, entry.get("hash"))})
    return failures


def push_plan(plan, images, failed):
    """The toolchains to push to the site registry: not failed, and the engine's image has no digest from that
    repository yet (a push leaves one; a rebuilt image has none). images: docker_image_info's ``images``."""
    digests = {}
    for image in images or []:
        for tag in image.get("RepoTags") or []:
            digests[tag] = image.get("RepoDigests") or []
    return [entry for entry in plan
            if entry.get("remote") and entry["image"] not in failed and entry["image"] in digests
            and not any(digest.startswith(entry["remote"].rsplit(":", 1)[0] + "@") for digest in digests[entry["image"]])]


def toolchain_summary(entry, stale, failed, pushed=None):
    """What the role did for one toolchain, for baked_images_result."""
    if entry["image"] in failed:
        image_action, volume_action = "failed", "none"
    else:
        image_action = {"skip": "kept", "load": "loaded", "pull": "pulled", "build": "built"}[entry["action"]]
        volume_action = "filled" if entry["volume"] in stale else "kept"
    return {"agent": entry["agent"], "version": entry["version"], "image": entry["image"], "volume": entry["volume"],
            "mount": entry["mount"], "import_path": entry["import_path"], "image_action": image_action,
            "volume_action": volume_action, "pushed": entry["image"] in (pushed or [])}


def image_failures(results, error):
    """Failure records (image, error, log) of looped docker_image results that produced no image."""
    return [{"image": (result.get("item") or {}).get("image"), "error": "%s: %s" % (error, result.get("msg", "failed")),
             "log": []} for result in results or [] if "image" not in result or not result.get("image")]


# --- harbor_job side ---------------------------------------------------------------------------------------


def parse_toolchain_volumes(volumes):
    """Toolchains from ``docker volume inspect`` output (a list of volumes); volumes without complete labels are
    ignored."""
    found = []
    for volume in volumes or []:
        labels = volume.get("Labels") or {}
        agent, version = labels.get(LABEL_AGENT), labels.get(LABEL_VERSION)
        import_path, mount = labels.get(LABEL_IMPORT_PATH), labels.get(LABEL_MOUNT)
        if not (agent and version and import_path and mount and IMPORT_PATH.match(import_path)):
            continue
        found.append({"agent": agent, "version": version, "import_path": import_path, "mount": mount,
                      "volume": volume.get("Name")})
    return sorted(found, key=lambda item: (item["agent"], version_key(item["version"])))


def version_key(version):
    """Sort key: numeric parts compare as numbers (2.4.10 after 2.4.9)."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"[.+-]", version)]


def describe(toolchains):
    return ", ".join("%s %s" % (item["agent"], item["version"]) for item in toolchains) or "none"


def _agent_version(entry):
    kwargs = entry.get("kwargs") or {}
    version = kwargs.get("version") if isinstance(kwargs, dict) else None
    return None if version in (None, "") else str(version)


def needs_toolchain(entry):
    """Whether Harbor would install this agent entry of a job config inside every trial."""
    if not isinstance(entry, dict) or entry.get("import_path"):
        return False
    name = entry.get("name")
    if name is None or name in AGENTS_WITHOUT_INSTALL:
        return False
    return ":" not in str(name)  # Harbor reads "module:Class" as an import path


def with_compose_overlay(config, overlay_path):
    """A copy of the job config with OVERLAY_PATH added to environment.extra_docker_compose (once)."""
    new_config = dict(config)
    environment = dict(new_config.get("environment") or {})
    extra = list(environment.get("extra_docker_compose") or [])
    if overlay_path not in extra:
        extra.append(overlay_path)
    environment["extra_docker_compose"] = extra
    new_config["environment"] = environment
    return new_config


def unknown_agent_problem(name, toolchains, harbor_agents):
    """The refusal of an agent name that is neither baked here nor one of Harbor's (a misspelled name), or None."""
    baked = sorted(set(item["agent"] for item in toolchains))
    if harbor_agents is None or name in baked or name in harbor_agents:
        return None
    known = sorted(set(baked) | set(harbor_agents))
    close = difflib.get_close_matches(name, known, n=1)
    return "unknown agent %s%s: neither baked on the trial engine nor an agent of Harbor (known: baked %s; Harbor's %s)" % (
        name, " (did you mean %s?)" % close[0] if close else "", ", ".join(baked) or "none", ", ".join(sorted(harbor_agents)))


def use_baked_toolchains(config, toolchains, overlay_path, harbor_agents=None):
    """(config, overlay, problems, used): the job config with every agent Harbor would install mapped to the collection's
    class for its baked toolchain, and the Compose overlay that mounts those toolchains read-only.

    config is not modified. overlay is None when no agent needs a toolchain. problems lists the agents that have no
    toolchain (or not the version asked for), and, when harbor_agents (the agent names the Harbor that runs the job
    knows) is given, the names that are neither baked nor Harbor's; the job must not start then. used lists the
    toolchains mounted.
    """
    agents = config.get("agents")
    if not isinstance(agents, list) or not any(needs_toolchain(entry) for entry in agents):
        return config, None, [], []
    by_agent = {}
    for item in toolchains:
        by_agent.setdefault(item["agent"], []).append(item)
    problems, mapped, used = [], [], {}
    for entry in agents:
        if not needs_toolchain(entry):
            mapped.append(entry)
            continue
        name, version = str(entry["name"]), _agent_version(entry)
        candidates = by_agent.get(name, [])
        if version is not None:
            candidates = [item for item in candidates if item["version"] == version]
        if not candidates:
            unknown = unknown_agent_problem(name, toolchains, harbor_agents)
            if unknown:
                problems.append(unknown)
            elif by_agent.get(name):
                problems.append("agent %s version %s is not baked on the trial engine (baked: %s)"
                                % (name, version, ", ".join(item["version"] for item in by_agent[name])))
            else:
                problems.append("agent %s has no baked toolchain on the trial engine (baked: %s); Harbor would "
                                "install it from the Internet in every trial" % (name, describe(toolchains)))
            continue
        chosen = candidates[-1]  # the newest when the matrix names no version
        other = used.get(chosen["mount"])
        if other is not None and other["volume"] != chosen["volume"]:
            problems.append("agent %s: one job can use one version of it, the matrix asks for %s and %s"
                            % (name, other["version"], chosen["version"]))
            continue
        used[chosen["mount"]] = chosen
        rewritten = dict(entry)
        rewritten.pop("name", None)
        rewritten["import_path"] = chosen["import_path"]
        mapped.append(rewritten)
    if problems:
        return config, None, problems, []
    overlay = {
        "services": {"main": {"volumes": [
            {"type": "volume", "source": item["volume"], "target": item["mount"], "read_only": True}
            for item in sorted(used.values(), key=lambda item: item["mount"])
        ]}},
        "volumes": {item["volume"]: {"external": True} for item in used.values()},
    }
    new_config = with_compose_overlay(config, overlay_path)
    new_config["agents"] = mapped
    return new_config, overlay, [], sorted(used.values(), key=lambda item: item["agent"])
