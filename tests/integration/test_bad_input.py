"""Bad input gets one clear error, fast, and nothing half-applied (issue 12, item 5).

A matrix of wrong inputs as a user types them, against every module and role, through
ansible-playbook against the running lab. Each case asserts that its play fails, that the
last failure's message names the input and the fix (``words``), that it fails before anything
waits: none of its tasks takes TIME_BOUND seconds or, on a machine busy enough that even a good
one-module playbook takes a third of that, SLOWER_THAN_ONE_MODULE times such a playbook timed at
the same moment (a wait is one task: a module's watch, or a task's until loop);
that no traceback reached the user, and that nothing was created or changed: namespaces,
ResourceClaims, ResourceClaimTemplates, DeviceClasses, node labels and cordons, and
`helm list -A` are the same after the run as before it (cluster_state, one function for every
case). Most cases share one ansible-playbook run, a host each (case_batch.py; the cluster is
compared around the run, and when it changed each case runs again alone to name the culprit);
upgrade.yml's cases and roles that run a task once per play keep a run of their own.

Classes: connection (kubeconfig, context, host, TLS, proxy), half_applied (roles given
several items or names Helm refuses), credentials (module_defaults that Helm cannot take,
refused tokens), refuse (zero counts, malformed versions, versions not offered, names
twice, non-bool selectors, hosts not in the inventory) and slow (waits that cannot
succeed). test_case_count keeps the count honest.
"""

import collections
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import pytest

import case_batch
from bad_input_cases import ALONE_ROLES, CASES, CLASSES, HOST_TOKEN, OPERATOR, SECRET, WITH_SLICES
from conftest import run_playbook

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TIME_BOUND = 15.0
# A bad input is "fast" when it fails before any wait, and a wait is one task: so no task of
# its run may take TIME_BOUND (upgrade.yml's cases run several plays before they fail, which on
# a loaded machine together took over 20 s). On a loaded two-core machine one module run alone
# can take 10 s, so a task over TIME_BOUND is compared with a good one-module playbook run right
# after it; the waits these cases guard against last minutes.
SLOWER_THAN_ONE_MODULE = 3.0


# ----- fixtures ----------------------------------------------------------------------------------------------------


def _closed_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


@pytest.fixture(scope="module")
def inputs():
    """The values the cases refer to: the lab's server, token and CA, files that are not
    kubeconfigs, a closed port, the stand-in charts, inventories."""
    tmp = tempfile.mkdtemp(prefix="it-bad-input-")
    with open(os.environ["KUBECONFIG"]) as handle:
        lab = json.load(handle)
    port = _closed_port()
    values = {"tmp": tmp, "server": lab["clusters"][0]["cluster"]["server"],
              "token": lab["users"][0]["user"]["token"], "ca": lab["clusters"][0]["cluster"]["certificate-authority"],
              "missing": os.path.join(tmp, "no-such-file"), "closed_port": str(port),
              "closed": "https://127.0.0.1:%d" % port, "textfile": os.path.join(tmp, "notes.txt"),
              "badyaml": os.path.join(tmp, "broken.yaml"), "closed_kubeconfig": os.path.join(tmp, "closed.kubeconfig"),
              "charts": os.path.join(tmp, "charts")}
    with open(values["textfile"], "w") as handle:
        handle.write("not a kubeconfig, just notes\n")
    with open(values["badyaml"], "w") as handle:
        handle.write("apiVersion: v1\nclusters: [\n  - name: x\n    cluster: {server: \n")
    closed = json.loads(json.dumps(lab))
    closed["clusters"][0]["cluster"]["server"] = values["closed"]
    with open(values["closed_kubeconfig"], "w") as handle:
        json.dump(closed, handle)
    subprocess.run([sys.executable, os.path.join(ROOT, "tests", "fixtures", "charts", "chart_repo.py"), "build",
                    values["charts"]], check=True, capture_output=True)
    values["inventories"] = {}
    for name, worker in (("worker", "node-b"), ("stranger", "node-x")):
        path = os.path.join(tmp, name + ".yml")
        with open(path, "w") as handle:
            # cp1 stands for node-a, the control plane a path with hops needs in the inventory.
            control_plane = {"cp1": {"ansible_connection": "local", "cluster_upgrade_node_name": "node-a"}}
            json.dump({"all": {"hosts": {"localhost": {"ansible_connection": "local"}},
                               "children": {"kube_control_plane": {"hosts": control_plane},
                                            "kube_node": {"hosts": {worker: {"ansible_connection": "local"}}}}}},
                      handle)
        values["inventories"][name] = path
    yield values
    shutil.rmtree(tmp)


@pytest.fixture(scope="module", autouse=True)
def _remove_what_a_failed_case_left(custom):
    """A case that fails by changing the cluster must not break the next ones (or other tests)."""
    yield
    for item in custom.list_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses")["items"]:
        if item["metadata"]["name"].startswith("it-bad-input-"):
            custom.delete_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses", item["metadata"]["name"])


def fill(value, values):
    """The case's placeholders ({server}, {missing}, ...) replaced by the fixture's values."""
    if isinstance(value, str):
        for key, replacement in values.items():
            if isinstance(replacement, str):
                value = value.replace("{%s}" % key, replacement)
        return value
    if isinstance(value, dict):
        return dict((k, fill(v, values)) for k, v in value.items())
    if isinstance(value, list):
        return [fill(v, values) for v in value]
    return value


def cluster_state(core, custom, apps=None):
    """Everything a bad input must leave alone, in one comparable value."""
    state = {"namespaces": sorted(n.metadata.name for n in core.list_namespace().items
                                  if n.status.phase == "Active")}
    for plural in ("resourceclaims", "resourceclaimtemplates"):
        items = custom.list_cluster_custom_object("resource.k8s.io", "v1", plural)["items"]
        state[plural] = sorted("%s/%s" % (i["metadata"]["namespace"], i["metadata"]["name"]) for i in items)
    classes_now = custom.list_cluster_custom_object("resource.k8s.io", "v1", "deviceclasses")["items"]
    state["deviceclasses"] = dict((c["metadata"]["name"], {"labels": c["metadata"].get("labels") or {},
                                                           "spec": c.get("spec")}) for c in classes_now)
    state["nodes"] = dict((n.metadata.name, {"labels": n.metadata.labels or {},
                                             "unschedulable": bool(n.spec.unschedulable)})
                          for n in core.list_node().items)
    helm = subprocess.run(["helm", "list", "-A", "-o", "json"], capture_output=True, text=True, check=True)
    state["helm"] = sorted((r["name"], r["namespace"], r["revision"], r["status"]) for r in json.loads(helm.stdout))
    return state


def last_failure(report):
    """The message of the run's last failed task (the one the user reads), with loop items' messages."""
    failed = []
    for play in report["plays"]:
        for task in play["tasks"]:
            for host, result in task["hosts"].items():
                if result.get("failed"):
                    failed.append((task["task"]["name"], host, result))
    return failure_message(failed)


def failure_message(failed):
    """The last of [(task name, host, result)] failed, and its message with its loop items'."""
    assert failed, "the run did not fail"
    name, host, result = failed[-1]
    messages = [str(result.get("msg", ""))] + [str(r.get("msg", "")) for r in result.get("results") or []
                                               if r.get("failed")]
    return name, host, result, " ".join(m for m in messages if m)


def alone(item):
    """Cases that keep an ansible-playbook run of their own: upgrade.yml with its inventory, and
    roles that run a task once per play (case_batch.py says why)."""
    return item.kind == "upgrade" or item.target in ALONE_ROLES


def run_case(item, values):
    env = fill(item.env, values)
    extra = []
    if item.kind == "upgrade":
        extra = ["-e", json.dumps(fill(item.args, values))]
        playbook, inventory = item.target, values["inventories"][item.inventory]
    else:
        play = {"hosts": "localhost", "gather_facts": False, "connection": "local"}
        if item.defaults is not None:
            play["module_defaults"] = {"group/dra.gpu.k8s": fill(item.defaults, values)}
        if item.kind == "module":
            play["tasks"] = [{"name": "run", item.target: fill(item.args, values)}]
        else:
            play["roles"] = [{"role": item.target, "vars": fill(item.args, values)}]
        playbook, inventory = [play], None
    return run_playbook(playbook, inventory, extra, env=env)


def run_batch(items, values, core, custom):
    """The cases in one ansible-playbook run (case_batch.py), the cluster compared before and
    after it. When it changed, the cases that changed it are named (below).
    Returns {case id: (failed tasks, seconds its longest task took, change or None, output)}."""
    before = cluster_state(core, custom)
    cases = dict((item.id, case_batch.case_tasks(item.kind, item.target, fill(item.args, values),
                                                 fill(item.defaults, values), fill(item.env, values)))
                 for item in items)
    rc, stderr, report, per_host = case_batch.run_cases(cases)
    after = cluster_state(core, custom)
    changes = {}
    if after != before:
        # The cases that said they changed something; else each case alone, from the state the
        # batch left (a case that only creates what the batch already created shows no change
        # then: such a case said "changed" in the batch); else all of them.
        change = _difference(before, after)
        changes = dict((item.id, change) for item in items
                       if any(task[1].get("changed") for task in per_host[item.id]))
        for item in items if not changes else ():
            alone_before = cluster_state(core, custom)
            run_case(item, values)
            alone_after = cluster_state(core, custom)
            if alone_after != alone_before:
                changes[item.id] = _difference(alone_before, alone_after)
        changes = changes or dict((item.id, "the batch of cases changed the cluster, no case alone did: %s"
                                   % change) for item in items)
    output = json.dumps(report) + stderr
    outcomes = {}
    for item in items:
        tasks = per_host[item.id]
        failed = [(task[0], item.id, task[1]) for task in tasks if task[1].get("failed")]
        outcomes[item.id] = (failed, max((task[2] for task in tasks), default=0.0), changes.get(item.id), output)
    return outcomes


@pytest.fixture(scope="module")
def batch(inputs, core, custom):
    """The cases without published devices, in one run."""
    return run_batch([c for c in CASES if not alone(c) and c.id not in WITH_SLICES], inputs, core, custom)


@pytest.fixture(scope="module")
def batch_with_slices(inputs, core, custom, plugin_everywhere):
    """The cases seen wrong only against published devices, in one run, the plugin publishing."""
    return run_batch([c for c in CASES if not alone(c) and c.id in WITH_SLICES], inputs, core, custom)


TIMINGS = {}


def one_module_playbook_seconds(values):
    """Wall time of a playbook with one good dra.gpu module that connects (input_check), now."""
    play = {"hosts": "localhost", "gather_facts": False, "connection": "local",
            "tasks": [{"name": "run", "dra.gpu.input_check": {"role": "preflight", "inputs": {"preflight_min_version": "1.35"}}}]}
    started = time.monotonic()
    rc, report, stderr = run_playbook([play])
    assert rc == 0, "the one-module baseline failed: %s %s" % (json.dumps(report)[-1000:], stderr[-1000:])
    return time.monotonic() - started


@pytest.mark.parametrize("item", CASES, ids=[c.id for c in CASES])
def test_bad_input(item, inputs, core, custom, request):
    if alone(item):
        if item.id in WITH_SLICES:
            request.getfixturevalue("plugin_everywhere")
        before = cluster_state(core, custom)
        rc, report, stderr = run_case(item, inputs)
        after = cluster_state(core, custom)
        elapsed = max((case_batch.task_seconds(t) for play in report["plays"] for t in play["tasks"]), default=0.0)
        assert rc != 0, "the run succeeded: %s" % json.dumps(report)[-2000:]
        task, host, result, message = last_failure(report)
        change = _difference(before, after) if after != before else None
        output = json.dumps(report) + stderr
    else:
        outcomes = request.getfixturevalue("batch_with_slices" if item.id in WITH_SLICES else "batch")
        failed, elapsed, change, output = outcomes[item.id]
        task, host, result, message = failure_message(failed)
    TIMINGS[item.id] = elapsed
    for words in fill(item.words, inputs):
        assert words in message, "%r not in the message of %r: %s" % (words, task, message)
    # A crash shows as MODULE FAILURE with module_stderr, or a traceback in "exception" (2.19
    # sets "(traceback unavailable)" there for every handled failure).
    assert "Traceback" not in message + str(result.get("exception", "")) and "module_stderr" not in result \
        and "MODULE FAILURE" not in message, message
    if elapsed >= TIME_BOUND:
        one_module = one_module_playbook_seconds(inputs)
        assert elapsed < SLOWER_THAN_ONE_MODULE * one_module, "a task took %.1fs, %.1f times a good one-module " \
            "playbook run just after it (%.1fs): %s" % (elapsed, elapsed / one_module, one_module, message)
    assert change is None, "the run changed the cluster: %s" % change
    assert SECRET not in output, "a password or token reached the output"


def _difference(before, after):
    return dict((key, {"before": before[key], "after": after.get(key)}) for key in before if before[key] != after.get(key))


def test_case_count():
    counts = collections.Counter(c.klass for c in CASES)
    slowest = dict((k, max(((TIMINGS[c.id], c.id) for c in CASES if c.klass == k and c.id in TIMINGS),
                           default=None)) for k in CLASSES)
    print("bad-input cases: %d (%s); slowest per class: %s" % (
        len(CASES), ", ".join("%s %d" % (k, counts[k]) for k in CLASSES),
        ", ".join("%s %s %.1fs" % (k, v[1], v[0]) for k, v in slowest.items() if v) or "not run"))
    assert len(CASES) >= 60 and all(counts[k] for k in CLASSES)
    assert len(set(c.id for c in CASES)) == len(CASES)


def test_module_defaults_reach_every_step_of_a_role_helm_included(inputs, core, custom):
    """Credentials only in module_defaults, KUBECONFIG pointing at a file that is not a
    kubeconfig: every step of gpu_operator (plan, labels, Helm, waits) and its removal must use
    the user's connection; one step falling back to the environment would fail on that file."""
    defaults = fill(HOST_TOKEN, inputs)
    env = {"KUBECONFIG": inputs["badyaml"]}
    play = {"hosts": "localhost", "gather_facts": False, "connection": "local",
            "module_defaults": {"group/dra.gpu.k8s": defaults},
            "roles": [{"role": "dra.gpu.gpu_operator", "vars": fill(dict(OPERATOR, gpu_operator_timeout=120,
                                                                         gpu_operator_slice_timeout=120), inputs)}]}
    try:
        rc, report, stderr = run_playbook([play], env=env)
        assert rc == 0, json.dumps(report)[-3000:] + stderr[-2000:]
        releases = [r[0] for r in cluster_state(core, custom)["helm"]]
        assert "gpu-operator" in releases and "nvidia-dra-driver-gpu" in releases
    finally:
        play["roles"][0]["vars"]["gpu_operator_state"] = "absent"
        rc, report, stderr = run_playbook([play], env=env)
        for namespace in ("gpu-operator", "nvidia-dra-driver-gpu"):
            try:
                core.delete_namespace(namespace)
            except Exception:  # noqa: BLE001 - already gone
                pass
    assert rc == 0, json.dumps(report)[-3000:]
    state = cluster_state(core, custom)
    assert not [r for r in state["helm"] if r[0] in ("gpu-operator", "nvidia-dra-driver-gpu")]
    assert not any("nvidia.com/dra-kubelet-plugin" in n["labels"] for n in state["nodes"].values())
