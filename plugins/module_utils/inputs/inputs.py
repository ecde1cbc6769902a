# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Checks of what a person types, each failing with a message that names the input and the fix.

Pure functions; modules call them on their options and the role files (inputs/roles/) on role
variables, so ``count: 0``, ``target: 1.3x`` or a namespace Helm would refuse are refused
before anything is read or changed. ``name`` is the input's name as the user wrote it
(``smoke_test_count``, ``first_available[1].count``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

from ansible_collections.dra.gpu.plugins.module_utils.upgrade import versions

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")
_REQUIREMENT = re.compile(r"^\s*(!?)\s*([A-Za-z0-9][-A-Za-z0-9_./]*)\s*(?:(==|=|!=)\s*([-A-Za-z0-9_.]*)|"
                          r"\s+(in|notin)\s*\(([^()]*)\))?\s*$")


class InputError(ValueError):
    """A wrong input; the message names it and says what to write instead."""


def _show(value):
    return repr(value) if isinstance(value, str) else str(value)


def integer(name, value, minimum=1, what=None):
    """A whole number of at least ``minimum`` (booleans and fractions are refused)."""
    if isinstance(value, bool) or value is None:
        raise InputError("%s is %s; it must be a whole number of at least %d%s"
                         % (name, _show(value), minimum, " (%s)" % what if what else ""))
    try:
        number = int(str(value).strip())
    except ValueError:
        raise InputError("%s is %s, not a whole number; set it to %d or more%s"
                         % (name, _show(value), minimum, " (%s)" % what if what else ""))
    if number < minimum:
        hint = " (%s)" % what if what else ""
        raise InputError("%s is %d; it must be at least %d%s" % (name, number, minimum, hint))
    return number


def seconds(name, value):
    return integer(name, value, 1, "seconds to wait")


def version(name, value, latest=False, exact=False):
    """A Kubernetes version as a person writes it: 1.35, 1.35.4, v1.35.4 (and, with ``latest``,
    the targets ``latest`` and ``tested``). A pre-release is refused as one, naming the version to use."""
    if latest and str(value).strip() in (versions.LATEST, versions.TESTED):
        return str(value).strip()
    refusal = versions.pre_release_refusal(name, value)
    if refusal:
        raise InputError(refusal)
    try:
        parsed = versions.parse_input(value)
    except versions.VersionError:
        examples = "1.35.4" if exact else "1.35 or 1.35.4"
        raise InputError("%s is %s, which is not a Kubernetes version; write it like %s%s"
                         % (name, _show(value), examples, " or latest or tested" if latest else ""))
    if exact and parsed[2] is None:
        raise InputError("%s is %s; it needs a patch version, like %s.4" % (name, _show(value), value))
    return parsed


def versions_list(name, values, exact=True):
    return [version("%s[%d]" % (name, index), item, exact=exact) for index, item in enumerate(values or [])]


def _kubernetes_name(name, value, what, pattern, longest, rule):
    text = str(value or "")
    if len(text) > longest or not pattern.match(text):
        raise InputError("%s is %s, which is not a valid %s name: %s" % (name, _show(value), what, rule))
    return text


def dns_label(name, value, what="namespace"):
    return _kubernetes_name(name, value, what, DNS_LABEL, 63, "use at most 63 lowercase letters, digits and '-', "
                            "starting and ending with a letter or digit (e.g. gpu-operator)")


def dns_subdomain(name, value, what="object"):
    return _kubernetes_name(name, value, what, DNS_SUBDOMAIN, 253, "use lowercase letters, digits, '-' and '.', "
                            "starting and ending with a letter or digit (e.g. gpu.example.com)")


def helm_release(name, value):
    text = str(value or "")
    if len(text) > 53 or not DNS_SUBDOMAIN.match(text):
        raise InputError("%s is %s, which Helm refuses as a release name: use at most 53 lowercase letters, digits, "
                         "'-' and '.', starting and ending with a letter or digit (e.g. gpu-operator)"
                         % (name, _show(value)))
    return text


def label_key(name, key):
    text = str(key or "")
    prefix, _sep, short = text.rpartition("/")
    if not short or len(short) > 63 or not LABEL_NAME.match(short) or \
            (prefix and (len(prefix) > 253 or not DNS_SUBDOMAIN.match(prefix))):
        raise InputError("%s has the key %s, which is not a label key: write name or prefix/name, e.g. "
                         "nvidia.com/gpu.present" % (name, _show(key)))


def label_value(name, key, value):
    if value is None or isinstance(value, (dict, list)):
        raise InputError("%s sets %s to %s; label values are strings (quote \"true\")" % (name, key, _show(value)))
    text = str(value).lower() if isinstance(value, bool) else str(value)
    if len(text) > 63 or not LABEL_NAME.match(text):
        raise InputError("%s sets %s to %s, which is not a label value: at most 63 letters, digits, '-', '_' and '.'"
                         % (name, key, _show(value)))
    return text


def labels(name, mapping):
    if mapping is None:
        return {}
    if not isinstance(mapping, dict):
        raise InputError("%s is %s; it must be a mapping of label keys to values, e.g. {nvidia.com/gpu.present: "
                         "\"true\"}" % (name, _show(mapping)))
    for key, value in mapping.items():
        label_key(name, key)
        label_value(name, key, value)
    return mapping


def label_selector(name, value):
    """A label selector as kubectl -l takes it; empty is allowed."""
    text = str(value or "").strip()
    if not text:
        return text
    for requirement in _split_selector(text):
        match = _REQUIREMENT.match(requirement)
        if not match or (match.group(1) and (match.group(3) or match.group(5))):
            raise InputError("%s is %s, which is not a label selector: write key=value, key!=value, key, !key or "
                             "'key in (a,b)', joined by commas (e.g. nvidia.com/gpu.present=true)" % (name, _show(value)))
        label_key(name, match.group(2))
    return text


def _split_selector(text):
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def strings(name, values, allow_empty_list=True):
    """A list of non-empty strings."""
    if values is None:
        values = []
    if not isinstance(values, list):
        raise InputError("%s is %s; it must be a list of strings" % (name, _show(values)))
    if not values and not allow_empty_list:
        raise InputError("%s is empty; list at least one entry" % name)
    for index, item in enumerate(values):
        if not isinstance(item, str) or not item.strip():
            raise InputError("%s[%d] is %s; each entry must be a non-empty string" % (name, index, _show(item)))
    return values


def unique(name, values, what="entry"):
    seen, twice = set(), []
    for value in values:
        if value in seen and value not in twice:
            twice.append(value)
        seen.add(value)
    if twice:
        raise InputError("%s names %s more than once; each %s must appear once (remove or rename the repeated one)"
                         % (name, ", ".join(str(t) for t in twice), what))
    return values


def in_inventory(name, hosts, inventory, implicit=("localhost", "127.0.0.1")):
    """Every host is an inventory host (or the implicit localhost)."""
    known = set(inventory or [])
    missing = [str(h) for h in hosts if h not in known and h not in implicit]
    if missing:
        shown = sorted(known)
        raise InputError("%s names %s, which %s not in the inventory (its hosts: %s); add %s to the inventory or "
                         "correct the name" % (name, ", ".join(missing), "is" if len(missing) == 1 else "are",
                                               ", ".join(shown[:20]) + (" ..." if len(shown) > 20 else "")
                                               if shown else "none", "it" if len(missing) == 1 else "them"))
    return hosts


class Problems:
    """The problems found in one set of inputs, gathered so that one error lists them all.

    Each check is a plain function that returns the value it accepted or raises InputError
    naming the input and the fix; ``check`` runs it and keeps the message instead:

        problems = inputs.Problems()
        problems.check(inputs.seconds, "timeout", params["timeout"])
        problems.check(inputs.dns_label, "namespace", params["namespace"])
        return problems.found
    """

    def __init__(self):
        self.found = []

    def check(self, check, *args, **kwargs):
        """Run ``check(*args, **kwargs)``: its value, or None with its refusal kept."""
        try:
            return check(*args, **kwargs)
        except InputError as exc:
            self.found.append(str(exc))
            return None

    def add(self, message):
        self.found.append(message)

    def extend(self, messages):
        self.found.extend(messages)


def stripped(values, prefix):
    """The entries of ``values`` whose names start with ``prefix``, by the rest of their names:
    a role's variables (``smoke_test_count``) as its module's options (``count``)."""
    return dict((k[len(prefix):], v) for k, v in (values or {}).items() if k.startswith(prefix))


def mappings(listed, root, shape, report):
    """(label, entry) for each mapping in ``listed``; any other entry is a problem in ``report``
    naming it and ``shape`` (what each entry must be)."""
    for index, item in enumerate(listed):
        label = "%s[%d]" % (root, index)
        if isinstance(item, dict):
            yield label, item
        else:
            report.add("%s is %r; each %s" % (label, item, shape))


def refuse(module, problems):
    """Fail ``module`` at once, before it reads or changes anything, when ``problems`` (messages,
    e.g. a Problems' ``found``) is not empty: one error lists every problem."""
    if problems:
        module.fail_json(msg="; ".join(problems), problems=problems)
