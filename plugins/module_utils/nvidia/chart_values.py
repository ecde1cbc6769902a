# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helm chart values addressed by dotted keys (``driver.manager.repository``), as the planners
read and write them (pure logic)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import copy


def lookup(values, dotted, default=None):
    """The value at a dotted key, or ``default`` when any part of the path is missing."""
    node = values
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return default
        node = node[part]
    return node


def set_value(values, dotted, value):
    """Set a dotted key, creating the dicts on its way."""
    node = values
    parts = dotted.split(".")
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def truthy(value):
    """As Helm templates test a value a user may have written as a string ("true")."""
    return value is True or str(value).lower() == "true"


def deep_merge(base, extra):
    """A copy of ``base`` with ``extra`` merged in; dicts merge, anything else replaces."""
    result = copy.deepcopy(base)
    for key, value in (extra or {}).items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result
