# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # The read options of harbor_job_info and harbor_job_summary (one argument spec: module_utils/_harbor_job_read.py).
    DOCUMENTATION = r"""
options:
  jobs_dir:
    description:
      - Directory holding Harbor's job directories (Harbor's C(-o)), on the target.
      - Required unless O(runtime) gives it (its C(host_jobs_dir)).
    type: path
  jobs:
    description:
      - Which jobs to read. Each item is a job name, a shell-style glob (C(nightly-*)), V(all), or V(latest) (the job
        that started last). An exact directory name wins over a glob reading, so names holding C([) work.
      - A plain name without a directory is reported as a job with an error.
      - Hidden directories (such as the C(.harbor_job) directory of M(aisbench.agent_runtime.harbor_job)) are skipped.
    type: list
    elements: str
    default: [all]
  details:
    description:
      - Read every trial's C(result.json) for per-task outcomes, tokens, cost and phase durations per eval.
      - V(false) reads only the job-level C(result.json) of a finished job (one file, whatever the number of trials);
        the counters and pass@1 are the same either way.
    type: bool
    default: true
  trials:
    description:
      - Also list every completed trial (RV(jobs[].trials)) in the result and the JSON summary file, with its task,
        agent, model, benchmark, rewards, exception and phase durations; implies O(details).
      - The night's shard mode of the nightly playbook merges these from every host into one pass@1 per benchmark,
        agent and model (see docs/playbooks.md).
    type: bool
    default: false
  reward_key:
    description:
      - The reward key pass@1 and the mean reward are computed on when a job's verifier writes several keys to
        C(reward.json).
      - Without it (or for an eval that does not record it) the key is C(reward) when recorded, else the only key,
        else the first key in name order (the one Harbor's progress bar shows); C(primary_key_reason) in RV(jobs[].evals)
        says which rule applied. Every key's mean is reported in C(rewards) of RV(jobs[].evals) either way.
    type: str
notes:
  - "pass@1 = passed trials / scored trials of a benchmark, agent and model, as Harbor's Mean metric counts them:
    Harbor 0.25 scores every trial with a C(result.json), errored and cancelled ones included (a trial without
    rewards counts 0); Harbor 0.26 only the trials whose reward is valid (C(reward_valid): no exception that voids
    it, such as C(CancelledError), an API error or a missing reward file). A trial passes when its primary reward
    (O(reward_key)) is at least 1. For 0/1 rewards pass@1 equals Harbor's C(stats.evals[KEY].metrics[0].mean) (one
    key) or C(metrics[0][KEY]) (several); C(mean_reward) in RV(jobs[].evals) equals it for any rewards.
    docs/harbor_modules.md lists every rule with the Harbor field it matches."
  - Field names follow Harbor 0.25's C(result.json), C(config.json) and C(lock.json).
"""
