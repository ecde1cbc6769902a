# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a role registered from kubernetes.core.k8s_info, as the list of objects the filters read."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def objects(data):
    """The objects of k8s_info's result ({resources}), of a loop of them ({results}), or a list as it is."""
    if isinstance(data, dict):
        if "results" in data:
            return [o for r in data["results"] for o in objects(r)]
        return list(data.get("resources") or [])
    return list(data or [])


def unlisted(data, listed):
    """Sorted names of the registered objects that ``listed`` does not name: what a role that
    labels what it creates prunes (its objects found by label, minus those it still manages)."""
    keep = set(listed or [])
    return sorted(set(o["metadata"]["name"] for o in objects(data)) - keep)
