# -*- coding: utf-8 -*-
# Copyright: aisbench maintainers
# Apache License 2.0 (see LICENSE)

from __future__ import absolute_import, division, print_function

__metaclass__ = type


class ModuleDocFragment(object):
    # What every module of the collection shares: POSIX targets, full check mode, no diff. Listed after
    # ansible.builtin.action_common_attributes (the descriptions); a module's own attributes block adds
    # details or overrides a value (e.g. diff_mode support full), because a module's own doc wins over a fragment.
    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  platform:
    platforms: posix
"""
