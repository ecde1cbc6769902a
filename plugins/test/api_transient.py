# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
name: api_transient
short_description: Whether a failed Kubernetes task is worth retrying
version_added: 0.2.0
author:
  - dra.gpu developers (@dra-gpu)
description:
  - True when a registered task result failed because the API server was away or busy (connection refused or
    reset, timeouts, 429 including a PodDisruptionBudget's refusal of an eviction, 5xx), for use in C(until).
  - A 401 or 403 counts only inside a restart window that the caller opened itself, from O(restarted_at) for
    O(window) seconds, so a real permission problem still fails at once.
  - False for a task that succeeded and for any other failure.
options:
  _input:
    description: A registered task result.
    type: dict
    required: true
  restarted_at:
    description: Seconds since the epoch when the caller last restarted the API server (the C(ready_at) of M(dra.gpu.api_ready)); 0 for none.
    type: float
    default: 0
  window:
    description: Seconds after O(restarted_at) in which 401/403 are retried.
    type: float
    default: 0
"""

EXAMPLES = r"""
- name: Uncordon, riding out an API server that restarts
  kubernetes.core.k8s_drain:
    name: cp1
    state: uncordon
  register: uncordon
  retries: 60
  delay: 2
  until: uncordon is not dra.gpu.api_transient(restarted_at=api.ready_at | default(0), window=120)
"""

RETURN = r"""
_value:
  description: Whether to try again.
  type: bool
"""

import time

from ansible_collections.dra.gpu.plugins.module_utils.k8s import api_errors


def api_transient(result, restarted_at=0, window=0):
    kind = api_errors.classify_result(result)
    if kind is None:
        return False
    in_window = bool(restarted_at) and time.time() - float(restarted_at) <= float(window)
    return api_errors.worth_retrying(kind, in_window)


class TestModule(object):
    def tests(self):
        return {"api_transient": api_transient}
