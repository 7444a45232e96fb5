"""The docker CLI for the bench scripts: one helper for run.py, shard.py, trial_overhead.py and agents.py.

The bench is plain Python run by ``make bench``, not a playbook: it starts, times and removes throw-away engines
and containers itself, where community.docker modules would need an Ansible task each, so it shells out here.
"""

import subprocess


def docker(*args, check=True, **kwargs):
    """``docker ARGS...`` with its output captured as text; CalledProcessError on failure unless check=False."""
    return subprocess.run(["docker"] + list(args), check=check, capture_output=True, text=True, **kwargs)
