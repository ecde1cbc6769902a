"""playbooks/upgrade.yml's passes: which pass plans and which pass upgrades, as the plans say.

A 1.33 -> 1.35 path takes two passes, and the second pass's plan says one pass is left (its
own). The upgrade plays of that pass must still run: an earlier version decided a pass's
upgrade plays from the plan made in that same pass, and skipped the last hop of every path
longer than one. Real multi-minor upgrades need nodes at three versions, which the node lab
does not build, so here the real playbooks run against a stand-in cluster_upgrade role whose
plan step returns scripted plans and records what ran; the stand-in sets the same facts the
real tasks/plan.yml shares (cluster_upgrade_plan, cluster_upgrade_pass) and ends the play in
check mode as it does. The real tasks/pass_groups.yml (and the role's defaults) then make the
groups the pass's plays target.
"""

import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PLAYBOOKS = os.environ.get("DRA_GPU_PLAYBOOKS", os.path.join(ROOT, "playbooks"))
ROLE = os.path.join(os.path.dirname(PLAYBOOKS), "roles", "cluster_upgrade")

STAND_IN_PLAN = """---
- name: Scripted plan of this pass
  ansible.builtin.set_fact:
    cluster_upgrade_plan: {passes_needed: "{{ scripted[(cluster_upgrade_pass_number | default(1) | int) - 1] }}"}
    cluster_upgrade_pass: "{{ {'nodes': []} if scripted[(cluster_upgrade_pass_number | default(1) | int) - 1] | int > 0 else None }}"
- name: Record the plan
  ansible.builtin.lineinfile:
    path: "{{ record }}"
    line: "plan {{ cluster_upgrade_pass_number | default(1) }}"
    create: true
    mode: "0600"
  check_mode: false
- name: Record the host that planned
  ansible.builtin.lineinfile:
    path: "{{ record }}"
    line: "planner {{ cluster_upgrade_pass_number | default(1) }} {{ inventory_hostname }}"
  check_mode: false
- name: Stop here in check mode, as the real plan does
  ansible.builtin.meta: end_play
  when: ansible_check_mode
"""

STAND_IN_UPGRADE = """---
- name: Record the upgrade of this host
  ansible.builtin.lineinfile:
    path: "{{ record }}"
    line: "upgrade {{ cluster_upgrade_pass_number | default(1) }} {{ inventory_hostname }}"
    create: true
    mode: "0600"
  check_mode: false
"""


@pytest.fixture
def stand_in(tmp_path):
    collection = tmp_path / "ansible_collections" / "dra" / "gpu"
    role = collection / "roles" / "cluster_upgrade"
    tasks = role / "tasks"
    tasks.mkdir(parents=True)
    shutil.copy(os.path.join(ROLE, "tasks", "pass_groups.yml"), tasks / "pass_groups.yml")
    shutil.copytree(os.path.join(ROLE, "defaults"), role / "defaults")
    (tasks / "plan.yml").write_text(STAND_IN_PLAN)
    (tasks / "main.yml").write_text(STAND_IN_UPGRADE)
    shutil.copytree(PLAYBOOKS, collection / "playbooks")
    inventory = tmp_path / "inventory.yml"
    inventory.write_text(json.dumps({"all": {
        "vars": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable},
        "hosts": {"localhost": {}},
        "children": {"kube_control_plane": {"hosts": {"cp-1": {}}},
                     "kube_node": {"hosts": {"cp-1": {}, "gpu-1": {}}}}}}))
    return tmp_path, collection, inventory


def run_passes(stand_in, scripted, check=False, extra=None):
    tmp_path, collection, inventory = stand_in
    record = tmp_path / "record.txt"
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(tmp_path), ANSIBLE_HOST_KEY_CHECKING="False")
    command = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", str(inventory),
               str(collection / "playbooks" / "upgrade.yml"), "-c", "local",
               "-e", json.dumps(dict({"scripted": scripted, "record": str(record)}, **(extra or {})))] + (["--check"] if check else [])
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return record.read_text().splitlines() if record.exists() else []


def upgraded_in(lines):
    return sorted(set(int(line.split()[1]) for line in lines if line.startswith("upgrade ")))


def test_the_last_hop_of_a_two_pass_path_runs(stand_in):
    lines = run_passes(stand_in, [2, 1, 1, 1])
    assert [line for line in lines if line.startswith("plan ")] == ["plan 1", "plan 2"]
    assert upgraded_in(lines) == [1, 2]
    # Control planes first, then the workers, in every pass that upgrades.
    assert lines.index("upgrade 2 cp-1") < lines.index("upgrade 2 gpu-1")


def test_a_three_pass_path_runs_three_passes_and_no_fourth(stand_in):
    lines = run_passes(stand_in, [3, 2, 1, 1])
    assert [line for line in lines if line.startswith("plan ")] == ["plan 1", "plan 2", "plan 3"]
    assert upgraded_in(lines) == [1, 2, 3]


def test_a_one_pass_path_leaves_the_later_passes_idle(stand_in):
    lines = run_passes(stand_in, [1, 1, 1, 1])
    assert [line for line in lines if line.startswith("plan ")] == ["plan 1"]
    assert upgraded_in(lines) == [1]


def test_a_cluster_at_the_target_upgrades_nothing(stand_in):
    lines = run_passes(stand_in, [0, 0, 0, 0])
    assert [line for line in lines if line.startswith("plan ")] == ["plan 1"]
    assert upgraded_in(lines) == []


def test_check_mode_plans_once_however_long_the_path(stand_in):
    # Nothing moves in check mode, so every later plan would say the same: plan once.
    lines = run_passes(stand_in, [3, 3, 3, 3], check=True)
    assert [line for line in lines if line.startswith("plan ")] == ["plan 1"]


def test_the_api_host_plans_every_pass_and_the_controller_by_default(stand_in):
    # The plan runs where cluster_upgrade_api_host says, with that host's variables, as before
    # the passes chose their hosts through groups.
    lines = run_passes(stand_in, [2, 1, 0, 0], extra={"cluster_upgrade_api_host": "cp-1"})
    assert [line for line in lines if line.startswith("planner")] == ["planner 1 cp-1", "planner 2 cp-1"]
    lines = run_passes(stand_in, [1, 0, 0, 0])
    assert [line for line in lines if line.startswith("planner")][-1] == "planner 1 localhost"


def test_an_api_host_outside_the_inventory_leaves_the_plan_to_the_controller(stand_in):
    # The real plan's input check then refuses the name; a bare added host could not be reached.
    lines = run_passes(stand_in, [1, 0, 0, 0], extra={"cluster_upgrade_api_host": "no-such-host"})
    assert [line for line in lines if line.startswith("planner")] == ["planner 1 localhost"]


def test_imported_only_when_asked_no_pass_plans_without_a_target(stand_in):
    # site.yml imports upgrade.yml so: a run that names no cluster_upgrade_target upgrades nothing,
    # however far behind the (scripted) cluster is; one that names it plans and upgrades as usual.
    lines = run_passes(stand_in, [2, 1, 1, 1], extra={"cluster_upgrade_only_when_asked": True})
    assert lines == []
    lines = run_passes(stand_in, [2, 1, 1, 1], extra={"cluster_upgrade_only_when_asked": True,
                                                      "cluster_upgrade_target": "1.36"})
    assert [line for line in lines if line.startswith("plan ")] == ["plan 1", "plan 2"]
    assert upgraded_in(lines) == [1, 2]
