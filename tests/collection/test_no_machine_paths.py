"""No path of one machine's folders goes into the project (issue 40, item 4): a vendor's checkout,
the project's own checkout or the tools' folders are named by a variable (DRA_REPO, OPERATOR_REPO,
TEST_INFRA_REPO, ...), never by where they lie on the machine that wrote the file.

Runs in `make units`: every file git tracks, read as text."""

import os
import re
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# The development machines' folders under one root: the checkout and its worktrees, fetched
# repositories, the tool library and shared facts; and a user's home (not GKE's node folder
# /home/kubernetes). The names are joined here, not written out, so this file names none of them.
# Below that root, another name (a kubelet root's work/plugins) is not one of them.
DEV_ROOT = "/" + "work"
DEV_FOLDERS = ("main", r"\.mirror", r"\.library", "shared", r"wt[\w-]*")
MACHINE_PATH = re.compile(r"(?<![\w.~-])(%s/(%s)\b|/home/(?!kubernetes/)\w+/)" % (DEV_ROOT, "|".join(DEV_FOLDERS)))


def tracked_files():
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [name for name in listed.decode().split("\0") if name]


def machine_paths(text):
    return sorted(set(match.group(0) for match in MACHINE_PATH.finditer(text)))


def test_no_tracked_file_names_a_folder_of_one_machine():
    found = {}
    for name in tracked_files():
        path = os.path.join(ROOT, name)
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as handle:
            raw = handle.read()
        if b"\0" in raw:
            continue  # not text
        paths = machine_paths(raw.decode("utf-8", "replace"))
        if paths:
            found[name] = paths
    assert found == {}, "take these from a variable and say in the docs how to set it: %s" % found


def test_the_pattern_tells_a_machine_path_from_a_path_inside_a_root():
    mirror, checkout = DEV_ROOT + "/.mirror", DEV_ROOT + "/main"
    assert machine_paths("make real-plugin DRA_REPO=%s/NVIDIA+k8s-dra-driver-gpu" % mirror) == [mirror]
    assert machine_paths("cd %s && make test" % checkout) == [checkout]
    assert machine_paths('root + "%s/plugins"' % DEV_ROOT) == []
    assert machine_paths('root + "/work/plugins", "/home/kubernetes/bin/nvidia"') == []
    home = "/" + "home/alice/"
    assert machine_paths("clone it into %ssrc" % home) == [home]
