"""What did a playbook leave in the cluster? Its namespaces, pods and claims against a list
taken before it ran.

    python cluster_objects.py snapshot FILE                       before the playbook
    python cluster_objects.py compare FILE --allow-namespace NS   after it; prints JSON

compare prints {"new": [...], "gone": [...], "allowed": [...]}: objects that exist now and
did not before, outside the namespaces allowed to appear (those of the GPU Operator role,
with everything in them, which go to "allowed"); and objects that existed before and do not
now. Objects being deleted when the snapshot was taken (a namespace an earlier test removes
without waiting) may go without counting. The cluster is the one KUBECONFIG names.
"""

import argparse
import json
import sys

from kubernetes import client, config

PAGE = 500


def _pages(api, list_fn, *args):
    """Every item of a list call, page by page, as the API's JSON (camelCase) dicts."""
    items, token = [], None
    while True:
        kwargs = {"limit": PAGE}
        if token:
            kwargs["_continue"] = token
        page = api.sanitize_for_serialization(list_fn(*args, **kwargs))
        items += page["items"]
        token = (page.get("metadata") or {}).get("continue")
        if not token:
            return items


def _meta(item, key):
    return (item.get("metadata") or {}).get(key)


def objects():
    """{"Kind/namespace/name": terminating} for every namespace, pod, ResourceClaim and
    ResourceClaimTemplate; an object is terminating when it or its namespace is being deleted."""
    api = config.new_client_from_config()
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    namespaces = {_meta(n, "name"): bool(_meta(n, "deletionTimestamp")) for n in _pages(api, core.list_namespace)}
    found = {"Namespace/" + name: terminating for name, terminating in namespaces.items()}
    listed = [("Pod", _pages(api, core.list_pod_for_all_namespaces))]
    for kind, plural in (("ResourceClaim", "resourceclaims"), ("ResourceClaimTemplate", "resourceclaimtemplates")):
        listed.append((kind, _pages(api, custom.list_cluster_custom_object, "resource.k8s.io", "v1", plural)))
    for kind, items in listed:
        for item in items:
            namespace = _meta(item, "namespace")
            terminating = bool(_meta(item, "deletionTimestamp")) or namespaces.get(namespace, False)
            found["%s/%s/%s" % (kind, namespace, _meta(item, "name"))] = terminating
    return found


def _namespace_of(key):
    kind, rest = key.split("/", 1)
    return rest if kind == "Namespace" else rest.split("/", 1)[0]


def compare(before, now, allowed_namespaces):
    new = sorted(key for key in now if key not in before)
    return {
        "new": [key for key in new if _namespace_of(key) not in allowed_namespaces],
        "allowed": [key for key in new if _namespace_of(key) in allowed_namespaces],
        "gone": sorted(key for key, terminating in before.items() if key not in now and not terminating),
    }


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=["snapshot", "compare"])
    parser.add_argument("file")
    parser.add_argument("--allow-namespace", action="append", default=[])
    args = parser.parse_args(argv)
    if args.action == "snapshot":
        with open(args.file, "w") as handle:
            json.dump(objects(), handle, indent=1, sort_keys=True)
        return 0
    with open(args.file) as handle:
        before = json.load(handle)
    print(json.dumps(compare(before, objects(), set(args.allow_namespace))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
