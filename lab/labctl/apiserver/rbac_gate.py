"""A gate in front of etcd for kube-apiserver's RBAC resources: holds its authorizer back.

`lab.py restart kube-apiserver --hold-rbac SECONDS` starts the API server with
``--etcd-servers-overrides`` sending the four RBAC resources through this gate, which
holds back every storage request for SECONDS and then forwards them to etcd unchanged. Until then the
real API server is exactly in the window a control-plane upgrade opens: it serves, its
RBAC informers cannot sync, so it answers 403 to every user that RBAC authorizes and its
/readyz fails (informer-sync, poststarthook/rbac/bootstrap-roles). Nothing is faked: the
window is the API server's own, held open for as long as a test needs it.

Run as ``python -m labctl.apiserver.rbac_gate --listen PORT --target PORT --hold-for SECONDS --state-dir DIR``
(the state directory only marks the process as this lab's).
"""

import argparse
import socket
import threading
import time

RBAC_RESOURCES = ("clusterroles", "clusterrolebindings", "roles", "rolebindings")


def apiserver_flags(gate_port):
    """The kube-apiserver flags that route the RBAC resources through the gate.

    Their watch cache is turned off as well: it would otherwise load them once while the
    server starts (which then waits for the gate), and serve the authorizer's informers
    from memory; without it the informers' lists go to storage, through the gate.
    """
    server = "http://127.0.0.1:%d" % gate_port
    overrides = ",".join("rbac.authorization.k8s.io/%s#%s" % (resource, server) for resource in RBAC_RESOURCES)
    no_cache = ",".join("%s.rbac.authorization.k8s.io#0" % resource for resource in RBAC_RESOURCES)
    return ["--etcd-servers-overrides=" + overrides, "--watch-cache-sizes=" + no_cache]


def _pump(source, sink, hold_until=None):
    """Copy bytes one way. ``hold_until``: the first chunk that carries a storage request
    (a key under /registry/) waits until that time, and everything after it with it."""
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            if hold_until is not None and b"/registry/" in data:
                time.sleep(max(0.0, hold_until - time.monotonic()))
                hold_until = None
            sink.sendall(data)
    except OSError:
        pass
    finally:
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _forward(client, target_port, hold_until):
    try:
        upstream = socket.create_connection(("127.0.0.1", target_port), timeout=5)
    except OSError:
        client.close()
        return
    upstream.settimeout(None)
    held = hold_until if time.monotonic() < hold_until else None
    threading.Thread(target=_pump, args=(client, upstream, held), daemon=True).start()
    threading.Thread(target=_pump, args=(upstream, client), daemon=True).start()


def serve(listen_port, target_port, hold_for):
    # The connections themselves go through at once: kube-apiserver dials its storage
    # while it starts and would wait for the gate (or give up) otherwise. What waits is
    # the first read or write of a stored object, which the authorizer's informers make
    # once the server serves.
    hold_until = time.monotonic() + hold_for
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", listen_port))
    server.listen(64)
    print("rbac gate: 127.0.0.1:%d -> etcd 127.0.0.1:%d, storage requests held for %.1fs"
          % (listen_port, target_port, hold_for), flush=True)
    while True:
        client, _address = server.accept()
        _forward(client, target_port, hold_until)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--listen", type=int, required=True)
    parser.add_argument("--target", type=int, required=True)
    parser.add_argument("--hold-for", type=float, required=True)
    parser.add_argument("--state-dir", required=True)
    args = parser.parse_args()
    serve(args.listen, args.target, args.hold_for)


if __name__ == "__main__":
    main()
