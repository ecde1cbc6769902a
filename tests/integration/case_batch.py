"""Many one-play cases in one ansible-playbook run, each on an inventory host of its own.

test_bad_input.py's cases are each a play of their own: one module task, or one role, with
module_defaults and environment of the case's own. Run one by one, each paid ansible-playbook's
start (imports, collection loading: most of a case's time on a loaded machine). Here each case
becomes the tasks file of an inventory host named after it (local connection), and one play
includes, on every host, that host's file. Hosts keep their own facts and registered results and
a failure stops only its own host, as a run of its own would; the linear strategy runs each
distinct task once, so the JSON callback's record of a task is that case's.

Not for roles that run a task once per play (run_once): with many hosts in the play they would
run it for one case only; those cases keep a run of their own.
"""

import datetime
import json
import os
import tempfile

import yaml

from conftest import run_playbook


def case_tasks(kind, target, args, defaults=None, env=None):
    """One case as a block: the module task or the imported role, its module_defaults and environment."""
    if kind == "module":
        task = {"name": "run", target: args}
    else:
        task = {"name": "run", "ansible.builtin.import_role": {"name": target}, "vars": args}
    block = {"block": [task]}
    if defaults is not None:
        block["module_defaults"] = {"group/dra.gpu.k8s": defaults}
    if env:
        block["environment"] = env
    return [block]


def task_seconds(task):
    """How long a task of the JSON callback's report ran, from its start and end stamps."""
    def parse(stamp):
        return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    duration = task["task"]["duration"]
    return (parse(duration["end"]) - parse(duration["start"])).total_seconds()


def run_cases(cases):
    """cases: {host name: tasks (case_tasks)}. Returns (rc, stderr, report, per host
    [(task name, result, seconds)] in the order they ran), the include task left out."""
    folder = tempfile.mkdtemp(prefix="it-case-batch-")
    hosts = {}
    for name, tasks in cases.items():
        path = os.path.join(folder, name + ".yml")
        with open(path, "w") as handle:
            yaml.safe_dump(tasks, handle)
        hosts[name] = {"ansible_connection": "local", "case_tasks_file": path}
    inventory = os.path.join(folder, "inventory.json")
    with open(inventory, "w") as handle:
        json.dump({"all": {"hosts": hosts}}, handle)
    play = [{"hosts": "all", "gather_facts": False, "strategy": "linear",
             "tasks": [{"name": "case", "ansible.builtin.include_tasks": "{{ case_tasks_file }}"}]}]
    rc, report, stderr = run_playbook(play, inventory)
    per_host = dict((name, []) for name in cases)
    for played in report["plays"]:
        for task in played["tasks"][1:]:
            for host, result in task["hosts"].items():
                per_host[host].append((task["task"]["name"], result, task_seconds(task)))
    return rc, stderr, report, per_host
