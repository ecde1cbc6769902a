# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Semantic versions as DRA attributes of type ``version`` carry them."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")


class SemverError(ValueError):
    pass


class Semver:
    __slots__ = ("text", "major", "minor", "patch", "prerelease")

    def __init__(self, text):
        match = _SEMVER_RE.match(str(text))
        if not match:
            raise SemverError("%r is not a semantic version (example: 1.2.3)" % (text,))
        self.text = str(text)
        self.major, self.minor, self.patch = (int(g) for g in match.groups()[:3])
        self.prerelease = match.group(4)

    def _prerelease_key(self):
        if self.prerelease is None:
            return (1,)
        parts = []
        for part in self.prerelease.split("."):
            parts.append((0, int(part), "") if part.isdigit() else (1, 0, part))
        return (0, tuple(parts))

    def key(self):
        return (self.major, self.minor, self.patch, self._prerelease_key())

    def compare(self, other):
        return (self.key() > other.key()) - (self.key() < other.key())

    def __eq__(self, other):
        return isinstance(other, Semver) and self.key() == other.key()

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.key())

    def __repr__(self):
        return "Semver(%r)" % self.text

    def __str__(self):
        return self.text


def is_semver(text):
    return bool(_SEMVER_RE.match(str(text)))
