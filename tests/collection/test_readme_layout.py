"""The README's Layout stays true to the tree: it names every module_utils folder and every
top-level folder a newcomer opens, and every folder it names exists (issue 32).

Runs in `make units` (no lab)."""

import os
import re
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODULE_UTILS = os.path.join(ROOT, "plugins", "module_utils")
# Top-level folders that are bookkeeping rather than the product's floor plan.
NOT_IN_LAYOUT = {"LICENSES", "changelogs", "meta", ".ci"}


def _layout_block():
    with open(os.path.join(ROOT, "README.md")) as handle:
        readme = handle.read()
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```", 2)[1]


def _folders_named():
    """'plugins/module_utils/dra/cel' for the nested lines: an indented 'cel/' under 'dra/'."""
    named, parents = set(), {}
    for line in _layout_block().splitlines():
        match = re.match(r"^( *)([A-Za-z_.][\w.-]*(?:/[\w.-]+)*)/", line)
        if not match:
            continue
        depth, folder = len(match.group(1)), match.group(2)
        parents = {d: p for d, p in parents.items() if d < depth}
        parent = parents[max(parents)] if parents else ""
        full = os.path.join(parent, folder) if parent and not os.path.exists(os.path.join(ROOT, folder)) else folder
        parents[depth] = full
        named.add(full)
    return named


def _module_utils_folders():
    found = set()
    for directory, _dirs, files in os.walk(MODULE_UTILS):
        if any(f.endswith(".py") and f != "__init__.py" for f in files):
            found.add(os.path.relpath(directory, ROOT))
    return found


def test_every_module_utils_folder_is_in_the_layout():
    assert _module_utils_folders() - _folders_named() == set()


def test_every_top_level_folder_is_in_the_layout():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    top = {path.split("/", 1)[0] for path in tracked.splitlines() if "/" in path}
    assert top - NOT_IN_LAYOUT - {f.split("/", 1)[0] for f in _folders_named()} == set()


def test_every_folder_the_layout_names_exists():
    assert sorted(f for f in _folders_named() if not os.path.isdir(os.path.join(ROOT, f))) == []
