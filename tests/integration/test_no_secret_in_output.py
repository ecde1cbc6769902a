"""No credential in any output, -vvv included, and one connection for every step (issue 33).

Each run is ansible-playbook as a user starts it, with the default callback at -vvv (which
prints every task's invocation), against the lab; its whole stdout and stderr must not hold
any of the secrets in play: a proxy's password, a kubeconfig's token, client key and
basic-auth password, a token in K8S_AUTH_API_KEY. Runs that fail and runs that succeed.

The kubeconfigs here are the lab's, rewritten: one with a client certificate (signed by the
lab's CA, user kubernetes-admin in system:masters) beside the admin token and a basic-auth
password, one with a token the API server refuses. The proxy is a small CONNECT proxy in this
process, so that a proxy with a password in its URL carries real requests.
"""

import json
import os
import select
import socket
import socketserver
import subprocess
import tempfile
import threading

import pytest
import yaml

from conftest import lab_client_certificate
from test_bad_input import _closed_port, cluster_state

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROXY_PASSWORD = "pr0xy-Pa55-issue33"
BASIC_PASSWORD = "basic-Pa55-issue33"
BAD_TOKEN = "refused-token-issue33-0123456789"


class _Tunnel(socketserver.StreamRequestHandler):
    """HTTP CONNECT, then bytes both ways until either side closes."""

    def handle(self):
        request = self.rfile.readline().decode("latin-1").split()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass  # the headers: a password the client might send here is not printed by anyone
        self.server.seen.append(request)
        if len(request) < 2 or request[0] != "CONNECT":
            self.wfile.write(b"HTTP/1.1 405 Method Not Allowed\r\n\r\n")
            return
        host, _sep, port = request[1].rpartition(":")
        upstream = socket.create_connection((host, int(port)), timeout=30)
        self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        self.wfile.flush()
        sockets = [self.connection, upstream]
        try:
            while True:
                readable, _w, _x = select.select(sockets, [], [], 30)
                if not readable:
                    return
                for sock in readable:
                    data = sock.recv(65536)
                    if not data:
                        return
                    (upstream if sock is self.connection else self.connection).sendall(data)
        finally:
            upstream.close()


class _Proxy(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


@pytest.fixture(scope="module")
def proxy():
    server = _Proxy(("127.0.0.1", 0), _Tunnel)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def secrets_in_play():
    """Kubeconfigs full of secrets, and the list of every secret that must never be printed."""
    with open(os.environ["KUBECONFIG"]) as handle:
        lab = yaml.safe_load(handle)
    tmp = tempfile.mkdtemp(prefix="it-no-secret-")
    cert_data, key_data = lab_client_certificate(os.path.join(os.path.dirname(os.environ["KUBECONFIG"]), "pki"))
    token = lab["users"][0]["user"]["token"]
    files = {}
    for name, user in (("everything", {"token": token, "username": "admin", "password": BASIC_PASSWORD,
                                       "client-certificate-data": cert_data, "client-key-data": key_data}),
                       ("refused", {"token": BAD_TOKEN + "-kubeconfig"})):
        config = json.loads(json.dumps(lab))
        config["users"][0]["user"] = user
        files[name] = os.path.join(tmp, name + ".kubeconfig")
        with open(files[name], "w") as handle:
            json.dump(config, handle)
    # The lab's admin token counts too: the kubeconfig that carries it must not print it.
    yield {"files": files, "secrets": [PROXY_PASSWORD, BASIC_PASSWORD, key_data, BAD_TOKEN, token]}
    subprocess.run(["rm", "-rf", tmp], check=False)


def run_vvv(play, env=None):
    """ansible-playbook -vvv with the default callback; (rc, everything it printed)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as handle:
        yaml.safe_dump([play], handle)
    full_env = dict(os.environ, ANSIBLE_STDOUT_CALLBACK="default", ANSIBLE_LOCALHOST_WARNING="false",
                    ANSIBLE_INVENTORY_UNPARSED_WARNING="false", ANSIBLE_NOCOLOR="1", **(env or {}))
    proc = subprocess.run(["ansible-playbook", "-vvv", "-e", "ansible_python_interpreter=" + os.sys.executable,
                           handle.name], capture_output=True, text=True, env=full_env, check=False, timeout=600)
    os.unlink(handle.name)
    return proc.returncode, proc.stdout + proc.stderr


def assert_no_secret(output, secrets):
    for secret in secrets:
        assert secret not in output, "a secret (%s...) is in the output near: %s" % (
            secret[:6], output[max(0, output.find(secret) - 300):output.find(secret) + 50])


def play_of(tasks=None, roles=None, defaults=None):
    play = {"hosts": "localhost", "gather_facts": False, "connection": "local"}
    if defaults:
        play["module_defaults"] = {"group/dra.gpu.k8s": defaults}
    if tasks:
        play["tasks"] = tasks
    if roles:
        play["roles"] = roles
    return play


def test_a_proxy_that_does_not_answer_is_named_without_its_password(secrets_in_play):
    port = _closed_port()
    rc, output = run_vvv(play_of(tasks=[{"name": "readiness", "dra.gpu.dra_readiness": {
        "proxy": "http://alice:%s@127.0.0.1:%d" % (PROXY_PASSWORD, port)}}]))
    assert rc != 0 and "the proxy http://alice:***@127.0.0.1:%d" % port in output, output[-3000:]
    assert_no_secret(output, secrets_in_play["secrets"])


def test_a_proxy_variable_and_a_kubeconfig_full_of_secrets_on_a_good_run(secrets_in_play, proxy):
    before = len(proxy.seen)
    rc, output = run_vvv(play_of(tasks=[
        {"name": "readiness", "dra.gpu.dra_readiness": {}},
        {"name": "slices", "dra.gpu.resource_slice_info": {"output": "summary"}}]),
        env={"K8S_AUTH_PROXY": "http://alice:%s@127.0.0.1:%d" % (PROXY_PASSWORD, proxy.server_address[1]),
             "KUBECONFIG": secrets_in_play["files"]["everything"]})
    assert rc == 0, output[-3000:]
    assert len(proxy.seen) > before, "the modules did not go through the proxy"
    assert_no_secret(output, secrets_in_play["secrets"])


def test_roles_at_vvv_with_the_kubeconfig_in_module_defaults(secrets_in_play):
    rc, output = run_vvv(play_of(roles=[{"role": "dra.gpu.preflight"}],
                                 defaults={"kubeconfig": secrets_in_play["files"]["everything"]}))
    assert rc == 0, output[-3000:]
    assert_no_secret(output, secrets_in_play["secrets"])


def test_a_refused_kubeconfig_token_is_not_printed(secrets_in_play):
    rc, output = run_vvv(play_of(tasks=[{"name": "slices", "dra.gpu.resource_slice_info": {}}]),
                         env={"KUBECONFIG": secrets_in_play["files"]["refused"]})
    assert rc != 0 and "401 Unauthorized" in output, output[-3000:]
    assert_no_secret(output, secrets_in_play["secrets"])


def test_a_proxy_password_in_module_defaults_is_refused_where_kubernetes_core_would_print_it(
        secrets_in_play, proxy, core, custom):
    before = cluster_state(core, custom)
    rc, output = run_vvv(play_of(
        roles=[{"role": "dra.gpu.device_classes",
                "vars": {"device_classes_list": [{"name": "it-no-secret", "selectors": ["true"]}]}}],
        defaults={"proxy": "http://alice:%s@127.0.0.1:%d" % (PROXY_PASSWORD, proxy.server_address[1])}))
    assert rc != 0 and "proxy_basic_auth" in output and "http://alice:***@127.0.0.1" in output, output[-3000:]
    assert cluster_state(core, custom) == before
    assert_no_secret(output, secrets_in_play["secrets"])


def test_a_token_helm_cannot_use_stops_gpu_operator_before_any_change(secrets_in_play, core, custom, tmp_path):
    """The issue's case: a refused token in K8S_AUTH_API_KEY beside a valid kubeconfig. The
    Kubernetes client that kubernetes.core builds keeps the kubeconfig's token (it writes
    api_key under a key the client reads only when no kubeconfig set one), so every
    Kubernetes step connects; Helm is handed the variable's token and is refused. The role
    must stop before the first node label."""
    charts = str(tmp_path / "charts")
    subprocess.run([os.sys.executable, os.path.join(ROOT, "tests", "fixtures", "charts", "chart_repo.py"), "build",
                    charts], check=True, capture_output=True)
    before = cluster_state(core, custom)
    rc, output = run_vvv(play_of(roles=[{"role": "dra.gpu.gpu_operator", "vars": {
        "gpu_operator_version": "v26.3.1", "gpu_operator_chart_source": "local", "gpu_operator_chart_dir": charts,
        "gpu_operator_dra_nodes": ["node-b"], "gpu_operator_timeout": 60, "gpu_operator_slice_timeout": 60}}]),
        env={"K8S_AUTH_API_KEY": BAD_TOKEN})
    assert rc != 0, output[-3000:]
    assert "Helm cannot reach the cluster" in output and "the environment variable K8S_AUTH_API_KEY" in output \
        and "unset K8S_AUTH_API_KEY" in output and "nothing was changed" in output, output[-3000:]
    assert cluster_state(core, custom) == before, "the role changed the cluster"
    assert_no_secret(output, secrets_in_play["secrets"])
