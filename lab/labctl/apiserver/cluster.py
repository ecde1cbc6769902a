"""Bring the lab's control plane and simulator up and down as local processes."""

import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.request

from labctl import paths
from labctl.apiserver import build, config, pki, rbac_gate
from labctl.apiserver.processes import Component, ComponentDied, log_tail, wait_for
from labctl.apiserver.sim import report as sim_report

COMPONENT_ORDER = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "simulator")

# The controllers the lab needs: DRA's claim controller, what namespaces, service
# accounts and garbage collection rely on, and the workload controllers that roles
# deploy through (DaemonSets for driver plugins, Deployments for operators, Jobs, PDBs
# for drains). node-lifecycle is left out on purpose: simulated nodes do not heartbeat.
CONTROLLERS = (
    "resourceclaim-controller", "garbage-collector-controller", "namespace-controller",
    "serviceaccount-controller", "serviceaccount-token-controller",
    "root-ca-certificate-publisher-controller", "clusterrole-aggregation-controller",
    "deployment-controller", "replicaset-controller", "daemonset-controller",
    "statefulset-controller", "job-controller", "cronjob-controller", "ttl-after-finished-controller",
    "disruption-controller", "pod-garbage-collector-controller", "endpointslice-controller",
    "resourcequota-controller",
    # Evicts the pods of devices tainted NoExecute (a DeviceTaintRule, or a slice's taint):
    # what takes a GPU out of service in a 1.37 cluster (issue 30). Idle without device taints.
    "device-taint-eviction-controller",
)


def _say(message):
    print("lab: " + message, file=sys.stderr, flush=True)


def _state_file(cfg):
    return os.path.join(cfg.state_dir, "lab.json")


def saved_state(cfg):
    try:
        with open(_state_file(cfg)) as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


class SimulatorFailed(ComponentDied):
    """The simulator reported a failure: a slice the API server rejected, or its own crash."""


class SimulatorComponent(Component):
    """The simulator process, whose own report counts as much as its exit: in plugin mode it
    keeps serving the other nodes after the API server rejected one node's slices."""

    def __init__(self, run_dir, marker):
        super().__init__("simulator", run_dir, marker)
        self.report_file = os.path.join(run_dir, sim_report.FILE_NAME)

    def problem(self):
        return sim_report.describe(sim_report.read(self.report_file))

    def check_alive(self):
        problem = self.problem()
        if problem:
            raise SimulatorFailed("%s\n(simulator log: %s)" % (problem, self.log_file))
        super().check_alive()


def components(cfg):
    return {name: SimulatorComponent(cfg.run_dir, cfg.state_dir) if name == "simulator"
            else Component(name, cfg.run_dir, cfg.state_dir) for name in COMPONENT_ORDER}


def _kubeconfig_text(cfg, token, ca_file):
    return json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "dra-gpu-lab",
        "clusters": [{"name": "dra-gpu-lab", "cluster": {"server": cfg.server_url, "certificate-authority": ca_file}}],
        "users": [{"name": "lab-user", "user": {"token": token}}],
        "contexts": [{"name": "dra-gpu-lab", "context": {"cluster": "dra-gpu-lab", "user": "lab-user"}}],
    }, indent=2)


def _kubeconfig_paths(cfg):
    return {ident: cfg.kubeconfig if ident == "admin" else os.path.join(cfg.pki_dir, ident + ".kubeconfig")
            for ident in pki.TOKEN_USERS}


def _write_kubeconfigs(cfg, files):
    tokens = pki.tokens(files["tokens.csv"])
    paths_by_ident = _kubeconfig_paths(cfg)
    for ident, path in paths_by_ident.items():
        with open(path, "w") as handle:
            handle.write(_kubeconfig_text(cfg, tokens[ident], files["ca.crt"]))
        os.chmod(path, 0o600)
    return paths_by_ident


def _https_ok(url, ca_file, token=None):
    context = ssl.create_default_context(cafile=ca_file) if ca_file else ssl._create_unverified_context()
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request, context=context, timeout=2) as response:
        return response.status == 200


def _http_ok(url):
    with urllib.request.urlopen(url, timeout=2) as response:
        return response.status == 200


def _argv(cfg, name, bins, files, kubeconfigs, advertise):
    if name == "etcd":
        return [bins["etcd"], "--name=default", "--data-dir=" + os.path.join(cfg.state_dir, "etcd"),
                "--listen-client-urls=http://127.0.0.1:%d" % cfg.etcd_port,
                "--advertise-client-urls=http://127.0.0.1:%d" % cfg.etcd_port,
                "--listen-peer-urls=http://127.0.0.1:%d" % cfg.etcd_peer_port,
                "--initial-advertise-peer-urls=http://127.0.0.1:%d" % cfg.etcd_peer_port,
                "--initial-cluster=default=http://127.0.0.1:%d" % cfg.etcd_peer_port,
                "--listen-metrics-urls=", "--unsafe-no-fsync=true", "--log-level=warn"]
    if name == "kube-apiserver":
        return [bins["kube-apiserver"], "--etcd-servers=http://127.0.0.1:%d" % cfg.etcd_port,
                "--bind-address=127.0.0.1", "--secure-port=%d" % cfg.apiserver_port,
                "--advertise-address=" + advertise,
                "--tls-cert-file=" + files["apiserver.crt"], "--tls-private-key-file=" + files["apiserver.key"],
                "--client-ca-file=" + files["ca.crt"], "--token-auth-file=" + files["tokens.csv"],
                "--authorization-mode=Node,RBAC",
                "--service-account-issuer=https://kubernetes.default.svc",
                "--service-account-key-file=" + files["sa.key"],
                "--service-account-signing-key-file=" + files["sa.key"],
                "--service-cluster-ip-range=10.96.0.0/16", "--allow-privileged=true",
                "--cert-dir=" + os.path.join(cfg.state_dir, "apiserver-certs"),
                "--profiling=false", "--v=1"] + _gate_flags(cfg, apiserver=True)
    if name == "kube-controller-manager":
        kc = kubeconfigs["controller-manager"]
        return [bins["kube-controller-manager"], "--kubeconfig=" + kc,
                "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
                "--bind-address=127.0.0.1", "--secure-port=%d" % cfg.controller_manager_port,
                "--leader-elect=false", "--use-service-account-credentials=true",
                "--controllers=" + ",".join(CONTROLLERS),
                "--service-account-private-key-file=" + files["sa.key"], "--root-ca-file=" + files["ca.crt"],
                "--concurrent-gc-syncs=5", "--profiling=false", "--v=1"] + _gate_flags(cfg)
    if name == "kube-scheduler":
        kc = kubeconfigs["scheduler"]
        return [bins["kube-scheduler"], "--kubeconfig=" + kc,
                "--authentication-kubeconfig=" + kc, "--authorization-kubeconfig=" + kc,
                "--bind-address=127.0.0.1", "--secure-port=%d" % cfg.scheduler_port,
                "--leader-elect=false", "--profiling=false", "--v=1"] + _gate_flags(cfg)
    if name == "simulator":
        return [sys.executable, "-m", "labctl.apiserver.sim", "--kubeconfig", kubeconfigs["simulator"],
                "--topology", cfg.topology_file, "--driver-mode", cfg.driver_mode,
                "--kubelet-version", "v" + cfg.k8s_version, "--state-dir", cfg.state_dir] + (
                    ["--consumable-shares", cfg.consumable_shares] if cfg.consumable_shares else [])
    raise KeyError(name)


def _gate_flags(cfg, apiserver=False):
    """One --feature-gates for the control plane: DRA off (LAB_WITHOUT_DRA) and LAB_FEATURE_GATES."""
    gates = (["DynamicResourceAllocation=false"] if cfg.without_dra else []) + \
        (cfg.feature_gates.split(",") if cfg.feature_gates else [])
    flags = ["--feature-gates=" + ",".join(gates)] if gates else []
    return flags + (["--runtime-config=resource.k8s.io/v1=false"] if apiserver and cfg.without_dra else [])


def _readiness(cfg, name, files, tokens):
    if name == "etcd":
        return "etcd /health", lambda: _http_ok("http://127.0.0.1:%d/health" % cfg.etcd_port)
    if name == "kube-apiserver":
        return "kube-apiserver /readyz", lambda: _https_ok(cfg.server_url + "/readyz", files["ca.crt"], tokens["admin"])
    if name == "kube-controller-manager":
        return "kube-controller-manager /healthz", lambda: _https_ok(
            "https://127.0.0.1:%d/healthz" % cfg.controller_manager_port, None)
    if name == "kube-scheduler":
        return "kube-scheduler /healthz", lambda: _https_ok("https://127.0.0.1:%d/healthz" % cfg.scheduler_port, None)
    ready_file = os.path.join(cfg.run_dir, "simulator.ready")
    return "the simulator to register its nodes", lambda: os.path.exists(ready_file)


def up(cfg):
    started = time.monotonic()
    previous = saved_state(cfg)
    procs = components(cfg)
    if previous and any(c.running() for c in procs.values()):
        if previous.get("k8s_version") != cfg.k8s_version or previous.get("driver_mode") != cfg.driver_mode \
                or previous.get("topology_file") != cfg.topology_file \
                or previous.get("consumable_shares") != cfg.consumable_shares \
                or previous.get("feature_gates") != cfg.feature_gates:
            raise config.ConfigError(
                "a lab is already running with Kubernetes %s, driver mode %s, topology %s; "
                "run `make lab-down` first to start one with Kubernetes %s, driver mode %s, topology %s "
                "(LAB_CONSUMABLE_SHARES %s, running with %s; LAB_FEATURE_GATES %s, running with %s)"
                % (previous.get("k8s_version"), previous.get("driver_mode"), previous.get("topology_file"),
                   cfg.k8s_version, cfg.driver_mode, cfg.topology_file,
                   cfg.consumable_shares or "unset", previous.get("consumable_shares") or "unset",
                   cfg.feature_gates or "unset", previous.get("feature_gates") or "unset"))
    bins = build.build_all(cfg.k8s_version)
    os.makedirs(cfg.run_dir, exist_ok=True)
    advertise = (previous or {}).get("advertise_address") or config.advertise_address()
    files = pki.ensure(cfg.pki_dir, advertise)
    kubeconfigs = _write_kubeconfigs(cfg, files)
    tokens = pki.tokens(files["tokens.csv"])
    with open(_state_file(cfg), "w") as handle:
        json.dump({"k8s_version": cfg.k8s_version, "driver_mode": cfg.driver_mode,
                   "topology_file": cfg.topology_file, "consumable_shares": cfg.consumable_shares,
                   "feature_gates": cfg.feature_gates,
                   "advertise_address": advertise,
                   "bin_dirs": sorted({os.path.dirname(p) for p in bins.values()})}, handle, indent=2)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(paths.REPO_ROOT, "lab")
    waits = {"etcd": 60, "kube-apiserver": 120, "kube-controller-manager": 60, "kube-scheduler": 60,
             "simulator": 180}
    for name in COMPONENT_ORDER:
        component = procs[name]
        already = component.running()
        if not already:
            if name == "simulator":
                _remove_quietly(os.path.join(cfg.run_dir, "simulator.ready"))
                _remove_quietly(component.report_file)
            t0 = time.monotonic()
            component.start(_argv(cfg, name, bins, files, kubeconfigs, advertise), env=env)
        description, probe = _readiness(cfg, name, files, tokens)
        wait_for(description, probe, waits[name], components=[component])
        if not already:
            _say("%-24s ready in %.1fs" % (name, time.monotonic() - t0))
        else:
            _say("%-24s already running" % name)
    _say("lab is up (Kubernetes v%s, driver mode %s) in %.1fs; kubeconfig: %s"
         % (cfg.k8s_version, cfg.driver_mode, time.monotonic() - started, cfg.kubeconfig))
    _say('use it with: eval "$(make -s lab-env)"')


def _rbac_gate(cfg):
    return Component("rbac-gate", cfg.run_dir, cfg.state_dir)


def _https_answers(url, ca_file):
    """True once the server answers HTTPS at all, whatever the status (a 500 from /readyz too)."""
    try:
        return _https_ok(url, ca_file)
    except urllib.error.HTTPError:
        return True


def restart(cfg, name, hold_rbac=0):
    """Stop and start one component of a running lab (tests use it to restart the API server).

    ``hold_rbac`` seconds (kube-apiserver only): the new API server's RBAC storage goes
    through labctl.apiserver.rbac_gate, which holds its requests back that long, and this returns as soon as the server
    answers at all, i.e. inside the window in which it refuses authorized requests.
    """
    if name not in COMPONENT_ORDER:
        raise config.ConfigError("unknown component %r; components: %s" % (name, ", ".join(COMPONENT_ORDER)))
    if hold_rbac and name != "kube-apiserver":
        raise config.ConfigError("--hold-rbac applies to kube-apiserver only (got %s)" % name)
    state = saved_state(cfg)
    if not state:
        raise config.ConfigError("no lab to restart a component of; run `make lab-up` first")
    component = components(cfg)[name]
    # Killed after a short grace, as a kubelet replacing a static pod would: kube-apiserver
    # drains its watches for longer than a test should wait.
    component.stop(timeout=3.0)
    if name == "simulator":
        _remove_quietly(component.report_file)
    gate = _rbac_gate(cfg)
    gate.stop()
    t0 = time.monotonic()
    bins = build.build_all(state["k8s_version"], quiet=True)
    files = pki.ensure(cfg.pki_dir, state["advertise_address"])
    kubeconfigs = _kubeconfig_paths(cfg)
    env = dict(os.environ, PYTHONPATH=os.path.join(paths.REPO_ROOT, "lab"))
    argv = _argv(cfg, name, bins, files, kubeconfigs, state["advertise_address"])
    if hold_rbac:
        gate.start([sys.executable, "-m", "labctl.apiserver.rbac_gate", "--listen", str(cfg.rbac_gate_port),
                    "--target", str(cfg.etcd_port), "--hold-for", str(hold_rbac), "--state-dir", cfg.state_dir],
                   env=env)
        component.start(argv + rbac_gate.apiserver_flags(cfg.rbac_gate_port), env=env)
        wait_for("kube-apiserver to answer HTTPS", lambda: _https_answers(cfg.server_url + "/readyz", files["ca.crt"]),
                 120, components=[component, gate])
        _say("kube-apiserver restarted in %.1fs; its RBAC storage is held back for %ss" % (
            time.monotonic() - t0, hold_rbac))
        return
    component.start(argv, env=env)
    description, probe = _readiness(cfg, name, files, pki.tokens(files["tokens.csv"]))
    wait_for(description, probe, 120, components=[component])
    _say("%s restarted in %.1fs" % (name, time.monotonic() - t0))


def _remove_quietly(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def down(cfg):
    procs = components(cfg)
    stopped = []
    for name in reversed(COMPONENT_ORDER):
        if procs[name].stop():
            stopped.append(name)
    if _rbac_gate(cfg).stop():
        stopped.append("rbac-gate")
    _say("stopped %s" % (", ".join(stopped) if stopped else "nothing (no lab process was running)"))
    if os.environ.get("LAB_KEEP_STATE") != "1":
        import shutil
        for sub in ("etcd", "apiserver-certs"):
            shutil.rmtree(os.path.join(cfg.state_dir, sub), ignore_errors=True)
        # Logs stay until the next `up` (they are appended to, with a start marker), so a
        # failed test run can still be read afterwards.
        _remove_quietly(os.path.join(cfg.run_dir, "simulator.ready"))
        _remove_quietly(_state_file(cfg))


def status(cfg):
    """Print each component's state; returns 0 when everything runs."""
    state = saved_state(cfg)
    procs = components(cfg)
    if not state and not any(c.running() for c in procs.values()):
        print("lab: not started (run `make lab-up`)")
        return 3
    healthy = True
    print("lab: Kubernetes v%s, driver mode %s, topology %s" % (
        state.get("k8s_version"), state.get("driver_mode"), state.get("topology_file")))
    for name in COMPONENT_ORDER:
        pid = procs[name].pid()
        if pid:
            print("  %-24s running (pid %d)" % (name, pid))
        else:
            healthy = False
            print("  %-24s NOT RUNNING; last lines of %s:" % (name, procs[name].log_file))
            for line in log_tail(procs[name].log_file, 15).splitlines():
                print("      " + line)
    problem = procs["simulator"].problem()
    if problem:
        healthy = False
        print("  simulator reports:")
        for line in problem.splitlines():
            print("      " + line)
    if healthy:
        print("  kubeconfig: %s" % cfg.kubeconfig)
    return 0 if healthy else 1


def env_lines(cfg, venv_bin):
    state = saved_state(cfg) or {}
    bin_dirs = state.get("bin_dirs") or [
        os.path.join(paths.k8s_build_dir(cfg.k8s_version), "bin"),
        os.path.join(paths.tool_build_dir("helm", build.HELM_VERSION), "bin"),
        os.path.join(paths.tool_build_dir("etcd", build.ETCD_VERSION), "bin"),
    ]
    path = ":".join(bin_dirs + [venv_bin, os.environ.get("PATH", "")])
    collections = os.path.join(paths.REPO_ROOT, "build", "collections")
    return [
        "export KUBECONFIG=%s" % _quote(cfg.kubeconfig),
        "export PATH=%s" % _quote(path),
        "export ANSIBLE_COLLECTIONS_PATH=%s" % _quote(collections),
    ]


def _quote(value):
    return "'" + value.replace("'", "'\"'\"'") + "'"


__all__ = ["up", "down", "status", "env_lines", "ComponentDied", "SimulatorFailed"]
