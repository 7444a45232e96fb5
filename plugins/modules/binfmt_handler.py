#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
module: binfmt_handler
short_description: Register QEMU binfmt_misc handlers that can never take over the host's own executables
version_added: 0.1.0
description:
  - Registers one C(qemu-<arch>) binfmt_misc handler per foreign architecture in O(arches), so the kernel runs
    executables of that architecture through C(qemu-<arch>) user emulation, and writes one binfmt.d(5) file per
    handler (C(<binfmt_d_dir>/qemu-<arch>.conf)) so C(systemd-binfmt) registers it again at boot.
  - Refuses to register an architecture the host runs natively (its own and, on x86_64, i386); see O(on_native).
    What is native is decided from the running kernel of the target (C(uname -m) of the machine the module runs on
    and the ELF header of its own C(/bin/sh)), never from a parameter or a fact.
  - No path registers a handler whose rule matches the kernel's own executables, neither a requested architecture
    nor a handler or binfmt.d file restored by O(state=absent).
  - Records every handler and file it creates in a manifest. O(state=absent) (and O(exclusive) for handlers no
    longer listed) removes exactly those, restoring a same-named handler or file it had replaced, and nothing else.
  - Reports enabled handlers, binfmt.d rules and binfmt-support entries that would take over native executables;
    with O(remove_native=true) unregisters them and keeps them from coming back at boot.
  - Never restarts C(systemd-binfmt.service), whose stop action unregisters every handler of the kernel.
author: aisbench maintainers (!UNKNOWN)
options:
  arches:
    description:
      - Architectures to manage, in any spelling C(aisbench.agent_runtime.qemu_arch) accepts
        (C(aarch64), C(arm64), C(linux/arm64), C(armhf), ...).
      - With O(state=absent), an empty list means every handler in the manifest.
    type: list
    elements: str
    default: []
  state:
    description: C(present) registers and persists the handlers; C(absent) removes the ones the manifest lists.
    type: str
    choices: [present, absent]
    default: present
  interpreter:
    description: Emulator path; C({arch}) is replaced by the QEMU architecture name. It must exist when registering.
    type: str
    default: /usr/bin/qemu-{arch}-static
  flags:
    description:
      - binfmt_misc flags. C(F) (fix binary) opens the emulator when the handler is registered, so executables
        run inside containers and chroots that do not contain the emulator. C(P) preserves argv[0]; C(O) and C(C)
        pass an open file and the executable's credentials (setuid executables then run with raised privileges).
    type: str
    default: F
  persistent:
    description: Write the binfmt.d file so the handler survives a reboot.
    type: bool
    default: true
  binfmt_d_dir:
    description: Directory of the persistent rules; C(/etc/binfmt.d) hides vendor files of the same name.
    type: path
    default: /etc/binfmt.d
  manifest:
    description: JSON file recording the handlers, files and masks this module created.
    type: path
    default: /var/lib/aisbench/qemu_binfmt/manifest.json
  proc_dir:
    description: Mount point of the binfmt_misc file system.
    type: path
    default: /proc/sys/fs/binfmt_misc
  mount:
    description:
      - Mount binfmt_misc at O(proc_dir) when nothing is mounted there, and leave it mounted. Handlers live only
        while some mount of binfmt_misc exists (recent kernels drop them all with the last mount).
      - In check mode and with O(state=absent) it is mounted only for the run and unmounted again; with no
        mount anywhere the kernel holds no handlers, so that loses none.
    type: bool
    default: true
  on_native:
    description:
      - What to do when O(arches) names an architecture the host runs natively.
      - C(fail) fails before anything changes; C(skip) leaves it out with a warning.
    type: str
    choices: [fail, skip]
    default: fail
  host_arch:
    description:
      - What the caller believes the host's architecture is (for example C(ansible_architecture)). It is only
        compared with the running kernel; when the kernel does not run it natively the module fails naming both
        values and changes nothing. It never decides what is native.
    type: str
  exclusive:
    description: With O(state=present), also remove the handlers of the manifest that O(arches) no longer lists.
    type: bool
    default: true
  remove_native:
    description:
      - Unregister enabled handlers that match native executables, mask the vendor binfmt.d files that would
        register them at boot (a symlink to C(/dev/null) in O(binfmt_d_dir)) and remove binfmt-support entries that
        match native executables. Without it they are only reported.
    type: bool
    default: false
notes:
  - binfmt_misc is global to the kernel; handlers registered from a container apply to the host and every container.
  - Masks made by O(remove_native) are kept by O(state=absent), as they only keep native executables native.
requirements:
  - Linux with binfmt_misc; mount(8) when O(mount) has to mount it.
extends_documentation_fragment:
  - ansible.builtin.action_common_attributes
  - aisbench.agent_runtime.attributes
attributes:
  diff_mode:
    support: full
"""

EXAMPLES = r"""
- name: Run arm64 and armhf executables on an x86_64 host, inside containers too
  aisbench.agent_runtime.binfmt_handler:
    arches: [aarch64, arm]

- name: Debian 13 qemu-user (no -static names), fail if a native architecture is asked for
  aisbench.agent_runtime.binfmt_handler:
    arches: "{{ wanted_arches }}"
    interpreter: /usr/bin/qemu-{arch}
    on_native: fail

- name: Remove every handler this module registered
  aisbench.agent_runtime.binfmt_handler:
    state: absent
"""

RETURN = r"""
handlers:
  description: The handlers the manifest lists after the run, by name.
  returned: always
  type: dict
  sample: {"qemu-aarch64": {"arch": "aarch64", "file": "/etc/binfmt.d/qemu-aarch64.conf",
           "rule": ":qemu-aarch64:M:0:\\x7f\\x45...:\\xff\\xff...:/usr/bin/qemu-aarch64-static:F"}}
registered:
  description: Handlers registered (or re-registered with a new definition, or re-enabled) in the kernel.
  returned: always
  type: list
  elements: str
  sample: [qemu-aarch64]
unregistered:
  description: Handlers removed from the kernel.
  returned: always
  type: list
  elements: str
files:
  description: binfmt.d files written, removed or restored.
  returned: always
  type: list
  elements: str
skipped_native:
  description: Architectures of O(arches) left out because the host runs them natively.
  returned: always
  type: list
  elements: str
native_arches:
  description: Architectures the running kernel runs natively.
  returned: always
  type: list
  elements: str
  sample: [x86_64, i386]
kernel:
  description: How the running kernel was identified (its C(uname -m) and its own C(/bin/sh)).
  returned: always
  type: dict
  sample: {"uname": "x86_64", "uname_arch": "x86_64", "shell": "/bin/sh", "shell_arch": "x86_64", "arch": "x86_64",
           "native": ["x86_64", "i386"]}
hijackers:
  description: Enabled handlers matching native executables (before removal), with what they matched.
  returned: always
  type: list
  elements: dict
  sample: [{"name": "qemu-x86_64", "interpreter": "/usr/bin/qemu-x86_64-static", "matches": ["probe:x86_64", "/bin/sh"]}]
boot_hijackers:
  description: binfmt.d rules and binfmt-support entries that would register a handler matching native executables at boot.
  returned: always
  type: list
  elements: dict
masked:
  description: Vendor binfmt.d files masked by O(remove_native).
  returned: always
  type: list
  elements: str
mounted:
  description: Whether this run left binfmt_misc mounted where it was not (or would, in check mode).
  returned: always
  type: bool
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._arch import UnknownArchError, qemu_arch
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._atomic_file import atomic_write
from ansible_collections.aisbench.agent_runtime.plugins.module_utils._binfmt import (
    BINFMT_D_DIRS,
    BinfmtError,
    Entry,
    check_declared_arch,
    elf_magic_mask,
    effective_rule_files,
    handler_name,
    hijackers,
    is_mounted,
    native_headers,
    native_matches,
    normalize_flags,
    parse_binfmts_admin,
    parse_rule_line,
    parse_rules_file,
    read_entries,
    register,
    running_kernel,
    set_enabled,
    unregister,
)

BINFMTS_ADMIN_DIR = "/var/lib/binfmts"
FILE_HEADER = (
    "# Managed by aisbench.agent_runtime (binfmt_handler): QEMU user emulation for {arch}.\n"
    "# Written and removed by the qemu_binfmt role; ownership is recorded in {manifest}.\n"
)


def read_path(path):
    """{'symlink': target} or {'content': text} for an existing path, None when it does not exist."""
    if os.path.islink(path):
        return {"symlink": os.readlink(path)}
    if os.path.exists(path):
        with open(path) as handle:
            return {"content": handle.read()}
    return None


class Handler(object):
    def __init__(self, module):
        self.module = module
        self.params = module.params
        self.check = module.check_mode
        self.proc_dir = self.params["proc_dir"]
        self.result = dict(changed=False, registered=[], unregistered=[], files=[], skipped_native=[],
                           hijackers=[], boot_hijackers=[], masked=[], mounted=False, handlers={})
        self.before = []
        self.after = []
        self.live = {}
        self.mounted_here = False
        self.headers = []  # native executables' headers: no handler this module registers may match one

    # --- helpers --------------------------------------------------------------------------------

    def fail(self, msg, **kwargs):
        self.unmount()
        self.module.fail_json(msg=msg, **dict(self.result, **kwargs))

    def changed(self, before, after):
        self.result["changed"] = True
        if before is not None:
            self.before.append(before)
        if after is not None:
            self.after.append(after)

    def kernel(self, action, *args):
        """Run a binfmt_misc write and keep self.live what the kernel now holds (check mode: would hold)."""
        if not self.check:
            try:
                action(*args, proc_dir=self.proc_dir)
            except BinfmtError as exc:
                self.fail(str(exc))
        if action is register:
            self.live[args[0].name] = parse_rule_line(args[0].rule_line())
        elif action is unregister:
            self.live.pop(args[0], None)
        elif action is set_enabled and args[0] in self.live:
            self.live[args[0]].enabled = args[1]

    def refuse_native(self, entry, why):
        """Fail before registering an entry that would take over the kernel's own executables."""
        labels = native_matches(entry, self.headers)
        if labels:
            self.fail("refusing to register %s (%s): its rule matches this host's own executables (%s), so native "
                      "programs would run through %s. Nothing was registered for it."
                      % (entry.name, why, ", ".join(labels), entry.interpreter))

    def write_path(self, path, state):
        """Make path hold state ({'content'} or {'symlink'}) or, with state None, remove it."""
        if self.check:
            return
        directory = os.path.dirname(path)
        if state is not None and not os.path.isdir(directory):
            os.makedirs(directory, 0o755)
        if os.path.lexists(path) and (state is None or "symlink" in state or os.path.islink(path)):
            os.unlink(path)
        if state is None:
            return
        if "symlink" in state:
            os.symlink(state["symlink"], path)
            return
        atomic_write(path, state["content"])  # like atomic_move: an existing file keeps its mode and owner

    # --- manifest -------------------------------------------------------------------------------

    def load_manifest(self):
        path = self.params["manifest"]
        if not os.path.exists(path):
            return {"version": 1, "handlers": {}, "masks": {}}
        try:
            with open(path) as handle:
                data = json.load(handle)
        except ValueError as exc:
            self.fail("manifest %s is not valid JSON (%s): fix or remove it; it records which binfmt handlers "
                      "this collection owns" % (path, exc))
        if not isinstance(data, dict) or data.get("version") != 1:
            self.fail("manifest %s has an unknown format" % path)
        data.setdefault("handlers", {})
        data.setdefault("masks", {})
        return data

    def save_manifest(self, manifest):
        path = self.params["manifest"]
        keep = manifest["handlers"] or manifest["masks"]
        new_text = json.dumps(manifest, indent=2, sort_keys=True) + "\n" if keep else None
        old = read_path(path)
        old_text = old.get("content") if old else None
        if new_text == old_text:
            return
        self.changed("manifest %s:\n%s" % (path, old_text or "(absent)\n"),
                     "manifest %s:\n%s" % (path, new_text or "(absent)\n"))
        self.write_path(path, {"content": new_text} if new_text else None)
        directory = os.path.dirname(path)
        if not new_text and not self.check and os.path.isdir(directory) and not os.listdir(directory):
            os.rmdir(directory)  # the module created it for the manifest

    # --- binfmt_misc ----------------------------------------------------------------------------

    def ensure_mounted(self):
        if is_mounted(self.proc_dir):
            self.live = read_entries(self.proc_dir)
            return
        if not self.params["mount"]:
            self.fail("binfmt_misc is not mounted at %s and mount=false" % self.proc_dir)
        if not os.path.isdir(self.proc_dir):
            self.fail("%s does not exist: the kernel lacks binfmt_misc (try: modprobe binfmt_misc)" % self.proc_dir)
        if self.params["state"] == "present":
            self.result["mounted"] = True
            self.changed("binfmt_misc: not mounted at %s" % self.proc_dir, "binfmt_misc: mounted at %s" % self.proc_dir)
        mount = self.module.get_bin_path("mount", required=True)
        rc, out, err = self.module.run_command([mount, "-t", "binfmt_misc", "binfmt_misc", self.proc_dir])
        if rc != 0:
            self.fail("mounting binfmt_misc at %s failed (rc=%d): %s" % (self.proc_dir, rc, (err or out).strip()))
        self.mounted_here = True
        self.live = read_entries(self.proc_dir)

    def transient_mount(self):
        """Check mode and state=absent mount binfmt_misc only for this run. That loses nothing: with no
        mount anywhere the kernel holds no handlers, and a mount elsewhere keeps them alive."""
        return self.check or self.params["state"] == "absent"

    def unmount(self):
        """Undo a mount made only for this run."""
        if not self.mounted_here or not self.transient_mount():
            return
        self.mounted_here = False
        umount = self.module.get_bin_path("umount", required=True)
        rc, out, err = self.module.run_command([umount, self.proc_dir])
        if rc != 0:
            self.module.warn("unmounting binfmt_misc at %s failed (rc=%d): %s" % (self.proc_dir, rc, (err or out).strip()))

    def desired_entry(self, arch):
        magic, mask = elf_magic_mask(arch)
        interpreter = self.params["interpreter"].replace("{arch}", arch)
        return Entry(handler_name(arch), interpreter, self.params["flags"], magic=magic, mask=mask)

    def ensure_live(self, entry, record):
        self.refuse_native(entry, "requested architecture")
        live = self.live.get(entry.name)
        if live is not None and entry.same_definition(live):
            if not live.enabled:
                self.changed("handler %s: disabled" % entry.name, "handler %s: enabled" % entry.name)
                self.kernel(set_enabled, entry.name, True)
                self.result["registered"].append(entry.name)
            return
        if live is not None:
            if record.get("rule") is None and record.get("previous_rule") is None:
                record["previous_rule"] = live.rule_line()  # someone else's handler: restore it on absent
            self.changed("handler %s: %s" % (entry.name, live.rule_line()), None)
            self.kernel(unregister, entry.name)
        self.changed(None if live else "handler %s: (not registered)" % entry.name,
                     "handler %s: %s" % (entry.name, entry.rule_line()))
        self.kernel(register, entry)
        self.result["registered"].append(entry.name)

    def ensure_file(self, entry, arch, record):
        path = os.path.join(self.params["binfmt_d_dir"], entry.name + ".conf")
        content = FILE_HEADER.format(arch=arch, manifest=self.params["manifest"]) + entry.rule_line() + "\n"
        current = read_path(path)
        if current == {"content": content}:
            record["file"] = path
            return
        if current is not None and record.get("file") is None and "previous_file" not in record:
            record["previous_file"] = current  # not ours: restore it on absent
        self.changed("file %s:\n%s" % (path, self.describe(current)), "file %s:\n%s" % (path, content))
        self.write_path(path, {"content": content})
        record["file"] = path
        self.result["files"].append(path)

    @staticmethod
    def describe(state):
        if state is None:
            return "(absent)\n"
        if "symlink" in state:
            return "(symlink to %s)\n" % state["symlink"]
        return state["content"]

    # --- present / absent -----------------------------------------------------------------------

    def present(self, manifest, entries):
        for arch, entry in entries:
            record = dict(manifest["handlers"].get(entry.name, {}))
            self.ensure_live(entry, record)
            if self.params["persistent"]:
                self.ensure_file(entry, arch, record)
            elif record.get("file"):
                self.remove_file(record)
            record.update(arch=arch, rule=entry.rule_line())
            record.setdefault("previous_rule", None)
            manifest["handlers"][entry.name] = record

    def remove_file(self, record):
        """Remove the handler's binfmt.d file (or restore the one it replaced) unless someone changed it."""
        path = record.get("file")
        if not path:
            return
        current = read_path(path)
        if current is not None and not self.is_our_file(current, record):
            self.module.warn("%s was changed by someone else since this module wrote it: left in place" % path)
        else:
            previous = record.get("previous_file")
            bad = self.native_rules(previous)
            if bad:
                self.module.warn("%s is not restored to the file it replaced: that file registers %s, which matches "
                                 "this host's own executables" % (path, ", ".join(bad)))
                previous = None
            if current != previous:
                self.changed("file %s:\n%s" % (path, self.describe(current)),
                             "file %s:\n%s" % (path, self.describe(previous)))
                self.write_path(path, previous)
                self.result["files"].append(path)
        record["file"] = None

    def native_rules(self, state):
        """Names of the rules in a file state ({'content'}) that match native executables."""
        if not state or "content" not in state:
            return []
        try:
            rules = parse_rules_file(state["content"])
        except BinfmtError:
            return []
        return [rule.name for rule in rules if native_matches(rule, self.headers)]

    @staticmethod
    def is_our_file(state, record):
        if "content" not in state:
            return False
        try:
            rules = parse_rules_file(state["content"])
        except BinfmtError:
            return False
        return len(rules) == 1 and rules[0].rule_line() == record.get("rule")

    def remove_handler(self, manifest, name):
        record = manifest["handlers"][name]
        ours = parse_rule_line(record["rule"])
        live = self.live.get(name)
        if live is not None and ours.same_definition(live):
            self.changed("handler %s: %s" % (name, live.rule_line()), "handler %s: (not registered)" % name)
            self.kernel(unregister, name)
            self.result["unregistered"].append(name)
            previous = record.get("previous_rule")
            if previous:
                entry = parse_rule_line(previous)
                labels = native_matches(entry, self.headers)
                if labels:
                    self.module.warn("handler %s replaced earlier by this module is not restored: it matches this "
                                     "host's own executables (%s)" % (name, ", ".join(labels)))
                elif os.access(entry.interpreter, os.X_OK):
                    self.changed(None, "handler %s: %s (restored)" % (name, previous))
                    self.kernel(register, entry)
                else:
                    self.module.warn("handler %s replaced earlier by this module is not restored: its emulator %s "
                                     "is gone" % (name, entry.interpreter))
        elif live is not None:
            self.module.warn("handler %s was redefined by someone else since this module registered it: left in place"
                             % name)
        self.remove_file(record)
        del manifest["handlers"][name]

    # --- native protection ----------------------------------------------------------------------

    def protect_native(self, manifest):
        remove = self.params["remove_native"]
        # self.live is what the kernel holds after this run's changes: a handler registered above is never
        # mistaken for the one it replaced (and it cannot match: refuse_native checked it).
        found = hijackers(self.live, None, headers=self.headers)
        self.result["hijackers"] = found
        for item in found:
            if item["name"] in manifest["handlers"]:
                # Recorded as ours (by an earlier release that trusted a wrong fact): always remove it.
                self.changed("handler %s: %s" % (item["name"], self.live[item["name"]].rule_line()),
                             "handler %s: (not registered: matched native %s)" % (item["name"], ", ".join(item["matches"])))
                self.kernel(unregister, item["name"])
                self.result["unregistered"].append(item["name"])
                record = manifest["handlers"].pop(item["name"])
                record["previous_rule"] = None
                self.remove_file(record)
            elif remove:
                self.changed("handler %s: %s" % (item["name"], self.live[item["name"]].rule_line()),
                             "handler %s: (not registered: matched native %s)" % (item["name"], ", ".join(item["matches"])))
                self.kernel(unregister, item["name"])
                self.result["unregistered"].append(item["name"])
            else:
                self.module.warn("binfmt_misc handler %s (%s) takes over native executables (%s): native programs "
                                 "run through an emulator; unregister it or set remove_native=true"
                                 % (item["name"], item["interpreter"], ", ".join(item["matches"])))
        headers = self.headers
        etc_dir = self.params["binfmt_d_dir"]
        for basename, path in sorted(effective_rule_files(self.rule_dirs()).items()):
            try:
                with open(path) as handle:  # follows vendor symlinks; a /dev/null mask reads empty
                    entries = parse_rules_file(handle.read())
            except (BinfmtError, IOError, OSError):
                continue
            bad = [entry.name for entry in entries if any(entry.matches(header) for _label, header in headers)]
            if not bad:
                continue
            self.result["boot_hijackers"].append({"source": path, "handlers": bad})
            mask = os.path.join(etc_dir, basename)
            if remove and os.path.dirname(path) != etc_dir:
                self.changed("file %s: (absent)" % mask, "file %s: (symlink to /dev/null, masks %s)" % (mask, path))
                self.write_path(mask, {"symlink": "/dev/null"})
                manifest["masks"][mask] = {"hides": path, "handlers": bad}
                self.result["masked"].append(path)
            elif remove:
                self.module.warn("%s registers %s at boot, which takes over native executables: it is not this "
                                 "collection's file, remove it by hand" % (path, ", ".join(bad)))
            else:
                self.module.warn("%s registers %s at boot, which takes over native executables: set remove_native=true "
                                 "to mask it" % (path, ", ".join(bad)))
        self.protect_binfmt_support(headers, remove)

    def rule_dirs(self):
        etc_dir = self.params["binfmt_d_dir"]
        return (etc_dir,) + tuple(d for d in BINFMT_D_DIRS if d != etc_dir)

    def protect_binfmt_support(self, headers, remove):
        try:
            names = sorted(os.listdir(BINFMTS_ADMIN_DIR))
        except (IOError, OSError):
            return
        for name in names:
            path = os.path.join(BINFMTS_ADMIN_DIR, name)
            try:
                with open(path) as handle:
                    package, entry = parse_binfmts_admin(name, handle.read())
            except (BinfmtError, IOError, OSError):
                continue
            if not any(entry.matches(header) for _label, header in headers):
                continue
            self.result["boot_hijackers"].append({"source": path, "handlers": [name], "package": package})
            command = ["update-binfmts", "--package", package, "--remove", name, entry.interpreter]
            if not remove:
                self.module.warn("binfmt-support registers %s (%s) at boot, which takes over native executables: set "
                                 "remove_native=true or run: %s" % (name, package, " ".join(command)))
                continue
            self.changed("binfmt-support entry %s (%s)" % (name, package), "binfmt-support entry %s: (removed)" % name)
            if not self.check:
                command[0] = self.module.get_bin_path("update-binfmts", required=True)
                rc, out, err = self.module.run_command(command)
                if rc != 0:
                    self.fail("%s failed (rc=%d): %s" % (" ".join(command), rc, (err or out).strip()))

    # --- main -----------------------------------------------------------------------------------

    def run(self):
        params = self.params
        try:
            kernel = running_kernel()
            check_declared_arch(params["host_arch"], kernel)
        except BinfmtError as exc:
            self.fail(str(exc))
        self.result["kernel"] = kernel
        self.result["native_arches"] = list(kernel["native"])
        self.headers = native_headers(kernel["native"])
        host = kernel["arch"]
        try:
            params["flags"] = normalize_flags(params["flags"])
            foreign, native = [], []
            for value in params["arches"]:
                name = qemu_arch(value)
                bucket = native if name in kernel["native"] else foreign
                if name not in bucket:
                    bucket.append(name)
        except UnknownArchError as exc:
            self.fail("arches: %s" % exc)
        except BinfmtError as exc:
            self.fail("flags: %s" % exc)
        if native and params["state"] == "present":
            if params["on_native"] == "fail":
                self.fail("arches: %s %s natively on this %s host; a handler for %s would route the host's own "
                          "executables through an emulator. Remove %s from arches."
                          % (", ".join(native), "runs" if len(native) == 1 else "run", host,
                             "it" if len(native) == 1 else "them", "it" if len(native) == 1 else "them"),
                          skipped_native=native)
            self.module.warn("skipping %s: this %s host runs %s natively" % (", ".join(native), host,
                                                                             "it" if len(native) == 1 else "them"))
        self.result["skipped_native"] = native if params["state"] == "present" else []

        entries = [(arch, self.desired_entry(arch)) for arch in foreign] if params["state"] == "present" else []
        for arch, entry in entries:
            if not os.access(entry.interpreter, os.X_OK):
                if not self.check:
                    self.fail("emulator %s for %s is missing or not executable: install QEMU user emulation "
                              "(qemu-user-static) first or set interpreter" % (entry.interpreter, arch))
                self.module.warn("emulator %s is not installed yet (check mode)" % entry.interpreter)

        manifest = self.load_manifest()
        self.ensure_mounted()
        if params["state"] == "present":
            wanted = set(entry.name for _arch, entry in entries)
            if params["exclusive"]:
                for name in sorted(manifest["handlers"]):
                    if name not in wanted:
                        self.remove_handler(manifest, name)
            self.present(manifest, entries)
        else:
            targets = set(handler_name(arch) for arch in foreign + native) if params["arches"] else None
            for name in sorted(manifest["handlers"]):
                if targets is None or name in targets:
                    self.remove_handler(manifest, name)
        self.protect_native(manifest)
        self.save_manifest(manifest)
        self.unmount()
        self.result["handlers"] = manifest["handlers"]
        if self.module._diff and self.result["changed"]:
            self.result["diff"] = {"before": "\n".join(self.before) + "\n", "after": "\n".join(self.after) + "\n"}
        self.module.exit_json(**self.result)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            arches=dict(type="list", elements="str", default=[]),
            state=dict(type="str", choices=["present", "absent"], default="present"),
            interpreter=dict(type="str", default="/usr/bin/qemu-{arch}-static"),
            flags=dict(type="str", default="F"),
            persistent=dict(type="bool", default=True),
            binfmt_d_dir=dict(type="path", default="/etc/binfmt.d"),
            manifest=dict(type="path", default="/var/lib/aisbench/qemu_binfmt/manifest.json"),
            proc_dir=dict(type="path", default="/proc/sys/fs/binfmt_misc"),
            mount=dict(type="bool", default=True),
            on_native=dict(type="str", choices=["fail", "skip"], default="fail"),
            host_arch=dict(type="str"),
            exclusive=dict(type="bool", default=True),
            remove_native=dict(type="bool", default=False),
        ),
        supports_check_mode=True,
    )
    Handler(module).run()


if __name__ == "__main__":
    main()
