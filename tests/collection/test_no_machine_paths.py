"""No path of one machine's folders goes into the project (issue 40, item 4): a vendor's checkout,
the project's own checkout or the tools' folders are named by a variable (DRA_REPO, OPERATOR_REPO,
TEST_INFRA_REPO, ...), never by where they lie on the machine that wrote the file.

Runs in `make units`: every file git tracks, read as text."""

import os
import re
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# The development machines' folders: the checkout (/work/main, a worktree beside it), fetched
# repositories (/work/.mirror), the tool library and shared facts, and a user's home (not GKE's
# /home/kubernetes, a node's folder). "/work/" after another name (a kubelet root's work/plugins)
# is not one of them.
MACHINE_PATH = re.compile(r"(?<![\w.~-])(/work/(main|\.mirror|\.library|shared|wt[\w-]*)\b|/home/(?!kubernetes/)\w+/)")


# This file: its last test names such paths on purpose, to show what the pattern catches.
THIS_FILE = os.path.relpath(os.path.abspath(__file__), ROOT)


def tracked_files():
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    return [name for name in listed.decode().split("\0") if name and name != THIS_FILE]


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
    assert machine_paths("make real-plugin DRA_REPO=/work/.mirror/NVIDIA+k8s-dra-driver-gpu") == ["/work/.mirror"]
    assert machine_paths("cd /work/main && make test") == ["/work/main"]
    assert machine_paths('root + "/work/plugins", "/home/kubernetes/bin/nvidia"') == []
    assert machine_paths("clone it into /home/alice/src") == ["/home/alice/"]
