"""The bad-input matrix of test_bad_input.py: each case a wrong input as a user types it, the
module, role or playbook it goes to, and the words its message must hold (the input and the fix).

Placeholders in braces ({server}, {missing}, {charts}, ...) are filled by test_bad_input.py's
``inputs`` fixture.
"""

import collections
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
UPGRADE = os.path.join(ROOT, "playbooks", "upgrade.yml")
CLASSES = ("connection", "half_applied", "credentials", "refuse", "slow")
PRODUCT = "device.attributes['gpu.nvidia.com'].productName"
# Cases whose input is only seen to be wrong against published devices.
WITH_SLICES = ("classes-non-bool-attribute", "class-non-bool-attribute", "wait-non-bool-attribute",
               "smoke-module-non-bool-attribute")
# Kubernetes estimates this at 12,785,859, over its limit of 1,000,000 (four loops over up to 32 attributes).
NESTED_LOOPS = "device.attributes.all(a, device.attributes.all(b, device.attributes.all(c, device.attributes.all(d, " \
    "a == d))))"
GOOD_CLASS = {"name": "it-bad-input-good", "selectors": ["device.driver == 'gpu.nvidia.com'"]}

# host_facts (in preflight) reads hosts once per play (run_once): these cases cannot share a play.
ALONE_ROLES = ("dra.gpu.preflight",)

Case = collections.namedtuple("Case", "id klass kind target args words env defaults inventory")


def case(id, klass, kind, target, args, words, env=None, defaults=None, inventory=None):
    assert klass in CLASSES
    return Case(id, klass, kind, target, args, words, env or {}, defaults, inventory)


def module(id, klass, name, args, words, **kw):
    return case(id, klass, "module", "dra.gpu." + name, args, words, **kw)


def role(id, klass, name, role_vars, words, **kw):
    return case(id, klass, "role", "dra.gpu." + name, role_vars, words, **kw)


def upgrade(id, klass, extra_vars, words, inventory="worker", **kw):
    return case(id, klass, "upgrade", UPGRADE, dict(UPGRADE_VARS, **extra_vars), words, inventory=inventory, **kw)


OPERATOR = {"gpu_operator_version": "v26.3.1", "gpu_operator_chart_source": "local",
            "gpu_operator_chart_dir": "{charts}", "gpu_operator_dra_nodes": ["node-b"], "gpu_operator_timeout": 60,
            "gpu_operator_slice_timeout": 60}
SMOKE = {"smoke_test_device_class": "it-bad-input-class", "smoke_test_timeout": 60, "smoke_test_slice_timeout": 60,
         "smoke_test_verify": "allocation"}
UPGRADE_VARS = {"cluster_upgrade_check_cgroups": False, "cluster_upgrade_available_versions": ["1.35.4"],
                "cluster_upgrade_target": "1.35"}
HOST_TOKEN = {"host": "{server}", "api_key": "{token}", "ca_cert": "{ca}"}
# A password or token the cases below put into a proxy URL, a server URL or K8S_AUTH_API_KEY:
# test_bad_input fails when it appears anywhere in a run's output (issue 33).
SECRET = "pw-issue33-never-printed"


def classes(*entries):
    return {"device_classes_list": [GOOD_CLASS] + list(entries)}


CASES = [
    # ---- connection: one handled message from client.py, naming the setting and the fix --------------------------
    module("kubeconfig-missing", "connection", "resource_slice_info", {"kubeconfig": "{missing}"},
           ["kubeconfig ", "from the kubeconfig option", "does not exist", "set the kubeconfig option"]),
    module("kubeconfig-not-a-kubeconfig", "connection", "device_class",
           {"name": "it-x", "selectors": ["true"], "kubeconfig": "{textfile}"},
           ["is not a kubeconfig", "has no clusters and contexts", "set the kubeconfig option"]),
    module("kubeconfig-broken-yaml", "connection", "upgrade_plan", {"target": "1.35", "kubeconfig": "{badyaml}"},
           ["is not a kubeconfig: it is not valid YAML (line 3)", "set the kubeconfig option"]),
    module("kubeconfig-a-directory", "connection", "dra_readiness", {"kubeconfig": "{tmp}"},
           ["is a directory, not a kubeconfig file", "set the kubeconfig option"]),
    module("context-not-in-kubeconfig", "connection", "node_wait",
           {"names": ["node-a"], "context": "prod", "timeout": 300},
           ["context 'prod'", "whose contexts are: dra-gpu-lab", "set context to one of them"]),
    module("context-not-in-kubeconfig-env", "connection", "resource_slice_info", {},
           ["context 'staging'", "K8S_AUTH_CONTEXT", "set context"], env={"K8S_AUTH_CONTEXT": "staging"}),
    module("closed-port", "connection", "resource_slice_wait",
           {"driver": "gpu.nvidia.com", "host": "{closed}", "api_key": "{token}", "ca_cert": "{ca}"},
           ["nothing answers at {closed}", "host option", "To fix: check host"]),
    module("closed-port-in-kubeconfig", "connection", "gpu_operator_plan",
           {"version": "v26.3.1", "kubeconfig": "{closed_kubeconfig}"},
           ["nothing answers at {closed}", "the server of context", "To fix"]),
    module("tls-without-ca", "connection", "claim_smoke_check", {"host": "{server}", "api_key": "{token}"},
           ["does not trust", "host option", "set ca_cert"]),
    module("ca-cert-missing", "connection", "node_wait",
           {"names": ["node-a"], "host": "{server}", "api_key": "{token}", "ca_cert": "{missing}"},
           ["ca_cert {missing}", "does not exist", "set ca_cert"]),
    module("proxy-down", "connection", "dra_readiness", {"proxy": "http://127.0.0.1:{closed_port}"},
           ["the proxy http://127.0.0.1:{closed_port}", "proxy option", "correct proxy"]),
    module("proxy-password-down", "connection", "dra_readiness",
           {"proxy": "http://alice:%s@127.0.0.1:{closed_port}" % SECRET},
           ["the proxy http://alice:***@127.0.0.1:{closed_port}", "proxy option", "correct proxy"]),
    module("proxy-password-variable-down", "connection", "resource_slice_info", {},
           ["the proxy http://alice:***@127.0.0.1:{closed_port}", "K8S_AUTH_PROXY", "correct proxy"],
           env={"K8S_AUTH_PROXY": "http://alice:%s@127.0.0.1:{closed_port}" % SECRET}),
    module("host-password-unresolvable", "connection", "gpu_workload_info",
           {"host": "https://admin:%s@no-such-host.invalid:6443" % SECRET, "api_key": "x"},
           ["https://admin:***@no-such-host.invalid:6443", "cannot be resolved", "correct host"]),
    module("host-not-a-url", "connection", "resource_slice_info", {"host": "not a url", "api_key": "x"},
           ["is not a URL", "write host like https://"]),
    module("host-unresolvable", "connection", "device_class",
           {"name": "it-x", "host": "https://no-such-host.invalid:6443", "api_key": "x"},
           ["cannot be resolved", "correct host"]),
    module("kubeconfig-env-missing", "connection", "resource_slice_info", {},
           ["K8S_AUTH_KUBECONFIG", "does not exist", "set K8S_AUTH_KUBECONFIG"],
           env={"K8S_AUTH_KUBECONFIG": "{missing}"}),
    module("kubeconfig-variable-missing", "connection", "upgrade_plan", {"target": "1.35"},
           ["environment variable KUBECONFIG", "does not exist", "set KUBECONFIG"], env={"KUBECONFIG": "{missing}"}),
    role("role-device-classes-context", "connection", "device_classes", classes(),
         ["context 'prod'", "set context"], defaults={"context": "prod"}),
    role("role-gpu-operator-kubeconfig-missing", "connection", "gpu_operator", OPERATOR,
         ["from the kubeconfig option", "does not exist", "To fix"],
         defaults={"kubeconfig": "{missing}"}),
    role("role-smoke-test-closed-port", "connection", "smoke_test", SMOKE,
         ["nothing answers at {closed}", "check the server in that kubeconfig"],
         defaults={"kubeconfig": "{closed_kubeconfig}"}),
    role("role-preflight-tls-without-ca", "connection", "preflight", {},
         ["does not trust", "set ca_cert"], defaults={"host": "{server}", "api_key": "{token}"}),
    upgrade("role-cluster-upgrade-kubeconfig-missing", "connection", {},
            ["environment variable KUBECONFIG", "does not exist"], env={"KUBECONFIG": "{missing}"}),

    # ---- credentials: the user's connection reaches every step, Helm included, or the run stops first ----------
    module("token-refused", "credentials", "gpu_operator_plan",
           {"version": "v26.3.1", "host": "{server}", "api_key": "not-a-token", "ca_cert": "{ca}"},
           ["refused the token from the api_key option", "401 Unauthorized", "valid bearer token in api_key"]),
    role("role-device-classes-token-refused", "credentials", "device_classes", classes(),
         ["refused the token", "api_key"], defaults=dict(HOST_TOKEN, api_key="not-a-token")),
    role("role-smoke-test-token-refused", "credentials", "smoke_test", SMOKE,
         ["refused the token", "api_key"], defaults=dict(HOST_TOKEN, api_key="not-a-token")),
    role("role-gpu-operator-client-cert", "credentials", "gpu_operator", OPERATOR,
         ["client_cert, client_key", "cannot reach Helm", "pass kubeconfig"],
         defaults=dict(HOST_TOKEN, client_cert="{ca}", client_key="{ca}")),
    role("role-gpu-operator-proxy", "credentials", "gpu_operator", OPERATOR,
         ["proxy", "cannot reach Helm"], defaults=dict(HOST_TOKEN, proxy="http://127.0.0.1:3128")),
    role("role-device-classes-proxy-password", "credentials", "device_classes", classes(),
         ["proxy", "http://alice:***@127.0.0.1:3128", "proxy_basic_auth", "K8S_AUTH_PROXY"],
         defaults={"proxy": "http://alice:%s@127.0.0.1:3128" % SECRET}),
    role("role-device-classes-host-password", "credentials", "device_classes", classes(),
         ["host", "https://admin:***@127.0.0.1:6443", "api_key"],
         defaults={"host": "https://admin:%s@127.0.0.1:6443" % SECRET, "api_key": "x"}),
    role("role-gpu-operator-token-helm-cannot-use", "credentials", "gpu_operator", OPERATOR,
         ["Helm cannot reach the cluster", "the environment variable K8S_AUTH_API_KEY", "unset K8S_AUTH_API_KEY",
          "nothing was changed"],
         env={"K8S_AUTH_API_KEY": SECRET}),
    role("role-gpu-operator-context-and-validate-certs", "credentials", "gpu_operator", OPERATOR,
         ["context and validate_certs", "kubernetes.core.helm refuses", "drop validate_certs"],
         defaults={"context": "dra-gpu-lab", "validate_certs": False}),
    role("role-gpu-operator-token-refused", "credentials", "gpu_operator", OPERATOR,
         ["refused the token", "api_key"], defaults=dict(HOST_TOKEN, api_key="not-a-token")),

    # ---- half-applied: roles check every item first, then change ---------------------------------------------------
    role("classes-bad-cel-after-good", "half_applied", "device_classes",
         classes({"name": "it-bad-input-cel", "selectors": ["device.driver =="]}),
         ["it-bad-input-cel", "none was applied", "Fix those entries of device_classes_list"]),
    role("classes-no-match-after-good", "half_applied", "device_classes",
         classes({"name": "it-bad-input-nomatch", "selectors": ["device.driver == 'nvidia.com'"],
                  "require_match": True}),
         ["it-bad-input-nomatch", "would match no device", "none was applied"]),
    role("classes-bad-name-after-good", "half_applied", "device_classes",
         classes({"name": "Bad_Name", "selectors": ["true"]}),
         ["device_classes_list[1] (Bad_Name).name", "not a valid DeviceClass name", "nothing was changed"]),
    role("classes-bad-config-after-good", "half_applied", "device_classes",
         classes({"name": "it-bad-input-cfg", "config": [{"driver": "gpu.nvidia.com"}]}),
         ["device_classes_list[1] (it-bad-input-cfg).config[0]", "opaque: {driver"]),
    role("classes-extended-resource-after-good", "half_applied", "device_classes",
         classes({"name": "it-bad-input-ext", "selectors": ["true"], "extended_resource_name": "example.com/gpu"}),
         ["it-bad-input-ext", "DRAExtendedResource", "Remove extended_resource_name", "none was applied"]),
    role("classes-bad-label-after-good", "half_applied", "device_classes",
         classes({"name": "it-bad-input-lbl", "labels": {"team": {"a": 1}}}),
         ["device_classes_list[1] (it-bad-input-lbl).labels", "label values are strings"]),
    role("operator-bad-namespace", "half_applied", "gpu_operator", dict(OPERATOR, gpu_operator_namespace="GPU_Operator"),
         ["gpu_operator_namespace is 'GPU_Operator'", "not a valid namespace name", "nothing was changed"]),
    role("operator-bad-release-name", "half_applied", "gpu_operator",
         dict(OPERATOR, gpu_operator_release_name="GPU-Operator"),
         ["gpu_operator_release_name is 'GPU-Operator'", "Helm refuses as a release name"]),
    role("operator-long-driver-namespace", "half_applied", "gpu_operator",
         dict(OPERATOR, gpu_operator_dra_driver_namespace="n" * 64),
         ["gpu_operator_dra_driver_namespace", "at most 63"]),
    role("operator-long-driver-release", "half_applied", "gpu_operator",
         dict(OPERATOR, gpu_operator_dra_driver_release_name="r" * 54),
         ["gpu_operator_dra_driver_release_name", "at most 53"]),
    role("operator-same-release-twice", "half_applied", "gpu_operator",
         dict(OPERATOR, gpu_operator_dra_driver_namespace="gpu-operator",
              gpu_operator_dra_driver_release_name="gpu-operator"),
         ["gpu_operator_release_name and gpu_operator_dra_driver_release_name", "another name"]),
    role("operator-unknown-node", "half_applied", "gpu_operator", dict(OPERATOR, gpu_operator_dra_nodes=["node-b", "node-x"]),
         ["gpu_operator_dra_nodes names node-x", "not a GPU node", "node-a, node-b"]),
    role("operator-unknown-version", "half_applied", "gpu_operator", dict(OPERATOR, gpu_operator_version="v99.1.0"),
         ["v99.1.0", "pin one of those with gpu_operator_version"]),
    role("operator-chart-dir-missing", "half_applied", "gpu_operator", dict(OPERATOR, gpu_operator_chart_dir="{missing}"),
         ["chart_dir", "{missing}"]),
    role("operator-refused-values", "half_applied", "gpu_operator",
         dict(OPERATOR, gpu_operator_version="v26.7.0", gpu_operator_dra_mode="standalone",
              gpu_operator_values={"gpuCluster": {"deployCR": True}}),
         ["refused before installing anything", "gpuCluster.deployCR"]),
    role("operator-bad-image-registry", "half_applied", "gpu_operator",
         dict(OPERATOR, gpu_operator_image_registry="https://registry.example.com"),
         ["gpu_operator_image_registry", "without a scheme"]),
    upgrade("upgrade-host-not-a-node", "half_applied", {},
            ["inventory host node-x (node name node-x) is not a node of the cluster", "cluster_upgrade_node_name",
             "Nothing was changed"], inventory="stranger"),

    # ---- refuse: accepted before, refused now -------------------------------------------------------------------
    role("smoke-count-zero", "refuse", "smoke_test", dict(SMOKE, smoke_test_count=0),
         ["smoke_test_count is 0", "at least 1"]),
    role("smoke-pods-negative", "refuse", "smoke_test", dict(SMOKE, smoke_test_pods=-1),
         ["smoke_test_pods is -1", "at least 1"]),
    role("smoke-timeout-zero", "refuse", "smoke_test", dict(SMOKE, smoke_test_timeout=0),
         ["smoke_test_timeout is 0", "at least 1"]),
    role("smoke-slice-timeout-negative", "refuse", "smoke_test", dict(SMOKE, smoke_test_slice_timeout=-5),
         ["smoke_test_slice_timeout is -5", "at least 1"]),
    role("smoke-alternatives-twice", "refuse", "smoke_test",
         dict(SMOKE, smoke_test_first_available=[{"name": "big"}, {"name": "big", "count": 2}]),
         ["smoke_test_first_available names big more than once", "remove or rename"]),
    role("smoke-bad-namespace", "refuse", "smoke_test", dict(SMOKE, smoke_test_namespace="Smoke_Test"),
         ["smoke_test_namespace is 'Smoke_Test'", "not a valid namespace name"]),
    role("smoke-bad-min-memory", "refuse", "smoke_test", dict(SMOKE, smoke_test_expect={"min_memory": "lots"}),
         ["smoke_test_expect.min_memory is 'lots'", "like 16Gi"]),
    module("smoke-module-count-zero", "refuse", "claim_smoke_check", {"count": 0},
           ["count is 0", "at least 1"]),
    module("smoke-module-alternative-count", "refuse", "claim_smoke_check",
           {"first_available": [{"name": "a", "count": 0}]}, ["first_available[0].count is 0", "at least 1"]),
    module("smoke-module-non-bool-selector", "refuse", "claim_smoke_check", {"selectors": ["device.driver"]},
           ["selectors[0] 'device.driver' gives a string", "not true or false", "compare the value"]),
    module("smoke-module-bad-namespace", "refuse", "claim_smoke_check", {"namespace": "UPPER"},
           ["namespace is 'UPPER'", "lowercase"]),
    module("wait-min-devices-zero", "refuse", "resource_slice_wait", {"driver": "gpu.nvidia.com", "min_devices": 0},
           ["min_devices is 0", "at least 1"]),
    module("wait-per-node-negative", "refuse", "resource_slice_wait",
           {"driver": "gpu.nvidia.com", "nodes": ["node-a"], "min_devices_per_node": -1},
           ["min_devices_per_node is -1", "at least 1"]),
    module("wait-timeout-zero", "refuse", "resource_slice_wait", {"driver": "gpu.nvidia.com", "timeout": 0},
           ["timeout is 0", "at least 1"]),
    module("wait-non-bool-selector", "refuse", "resource_slice_wait",
           {"driver": "gpu.nvidia.com", "selector": "device.driver", "timeout": 300},
           ["selector 'device.driver' gives a string", "not true or false", "compare the value"]),
    module("info-bad-node-selector", "refuse", "resource_slice_info", {"node_selector": "a=b=c"},
           ["node_selector is 'a=b=c'", "not a label selector", "key=value"]),
    module("class-non-bool-selector", "refuse", "device_class", {"name": "it-bad-input-nonbool",
                                                                 "selectors": ["device.driver"]},
           ["selectors[0] 'device.driver' gives a string", "compare the value"]),
    # What the API server's CEL compiler refuses, refused locally before any evaluation (issue 33): a result
    # that is not a bool, a library function given a list, a cost far over the server's limit.
    module("class-quantity-result", "refuse", "device_class", {"name": "it-bad-input-cel", "selectors": ["quantity('1')"]},
           ["selectors[0]", "gives a quantity, not true or false", "the API server refuses it"]),
    module("class-is-quantity-of-a-list", "refuse", "device_class",
           {"name": "it-bad-input-cel", "selectors": ["isQuantity(['16Gi'])"]},
           ["found no matching overload for 'isQuantity' applied to '(list(string))'", "isQuantity(string)"]),
    module("wait-is-semver-of-a-list", "refuse", "resource_slice_wait",
           {"driver": "gpu.nvidia.com", "selector": "isSemver([1]) || true", "timeout": 300},
           ["found no matching overload for 'isSemver'", "would be refused by the API server"]),
    module("class-over-cost-limit", "refuse", "device_class", {"name": "it-bad-input-cel", "selectors": [NESTED_LOOPS]},
           ["exceeds the API server's limit of 1000000", "too complex", "name attributes directly"]),
    module("class-bad-name", "refuse", "device_class", {"name": "GPU_Class", "selectors": ["true"]},
           ["name is 'GPU_Class'", "not a valid DeviceClass name"]),
    role("classes-named-twice", "refuse", "device_classes",
         {"device_classes_list": [GOOD_CLASS, dict(GOOD_CLASS, selectors=["true"])]},
         ["device_classes_list names it-bad-input-good more than once", "remove or rename"]),
    # An attribute's value is not a bool, but the API server types attributes as dynamic and
    # accepts it: the published devices show it (these cases run with the driver's slices).
    role("classes-non-bool-attribute", "refuse", "device_classes",
         classes({"name": "it-bad-input-nonbool", "selectors": [PRODUCT]}),
         ["it-bad-input-nonbool", "gives a string (NVIDIA A10)", "not true or false", "none was applied"]),
    module("class-non-bool-attribute", "refuse", "device_class", {"name": "it-bad-input-nonbool",
                                                                  "selectors": [PRODUCT]},
           ["selectors[0] %r gives a string" % PRODUCT, "compare the value"]),
    module("wait-non-bool-attribute", "refuse", "resource_slice_wait",
           {"driver": "gpu.nvidia.com", "selector": PRODUCT, "timeout": 300},
           ["selector %r gives a string (NVIDIA A10)" % PRODUCT, "not true or false"]),
    module("smoke-module-non-bool-attribute", "refuse", "claim_smoke_check",
           {"first_available": [{"name": "a10", "selectors": [PRODUCT]}], "timeout": 300},
           ["first_available[0].selectors[0] %r gives a string" % PRODUCT, "compare the value"]),
    module("node-wait-timeout-zero", "refuse", "node_wait", {"names": ["node-a"], "timeout": 0},
           ["timeout is 0", "at least 1"]),
    module("node-wait-bad-version", "refuse", "node_wait", {"names": ["node-a"], "kubelet_version": "1.3x"},
           ["kubelet_version is '1.3x'", "not a Kubernetes version", "1.35 or 1.35.4"]),
    module("node-wait-names-twice", "refuse", "node_wait", {"names": ["node-a", "node-a"]},
           ["names names node-a more than once"]),
    module("plan-target-malformed", "refuse", "upgrade_plan", {"target": "1.3x"},
           ["target is '1.3x'", "not a Kubernetes version", "or latest"]),
    module("plan-target-patch-x", "refuse", "upgrade_plan", {"target": "1.35.x"},
           ["target is '1.35.x'", "not a Kubernetes version"]),
    module("plan-available-malformed", "refuse", "upgrade_plan",
           {"target": "1.35", "available_versions": ["1.35.4", "banana"]},
           ["available_versions[1] is 'banana'", "like 1.35.4"]),
    module("plan-dra-min-malformed", "refuse", "upgrade_plan", {"target": "1.35", "dra_min_version": "1.3x"},
           ["dra_min_version is '1.3x'"]),
    module("readiness-min-malformed", "refuse", "dra_readiness", {"min_version": "1.3x"},
           ["min_version is '1.3x'", "not a Kubernetes version"]),
    module("operator-plan-min-malformed", "refuse", "gpu_operator_plan",
           {"version": "v26.3.1", "min_kubernetes_version": "1.3x"},
           ["min_kubernetes_version is '1.3x'", "not a Kubernetes version"]),
    module("operator-plan-helm-timeout-zero", "refuse", "gpu_operator_plan", {"version": "v26.3.1", "helm_timeout": 0},
           ["helm_timeout is 0", "at least 1"]),
    role("preflight-min-malformed", "refuse", "preflight", {"preflight_min_version": "1.3x"},
         ["preflight_min_version is '1.3x'", "not a Kubernetes version"]),
    role("preflight-host-not-in-inventory", "refuse", "preflight", {"preflight_gpu_hosts": ["gpu-node-9"]},
         ["preflight_gpu_hosts names gpu-node-9", "not in the inventory", "add it to the inventory"]),
    role("operator-min-malformed", "refuse", "gpu_operator", dict(OPERATOR, gpu_operator_min_kubernetes_version="1.3x"),
         ["gpu_operator_min_kubernetes_version is '1.3x'"]),
    role("operator-timeout-zero", "refuse", "gpu_operator", dict(OPERATOR, gpu_operator_timeout=0),
         ["gpu_operator_timeout is 0", "at least 1"]),
    role("operator-slice-timeout-negative", "refuse", "gpu_operator", dict(OPERATOR, gpu_operator_slice_timeout=-1),
         ["gpu_operator_slice_timeout is -1", "at least 1"]),
    role("operator-nodes-twice", "refuse", "gpu_operator", dict(OPERATOR, gpu_operator_dra_nodes=["node-b", "node-b"]),
         ["gpu_operator_dra_nodes names node-b more than once"]),
    upgrade("upgrade-target-malformed", "refuse", {"cluster_upgrade_target": "1.3x"},
            ["cluster_upgrade_target is '1.3x'", "1.35 or 1.35.4 or latest"]),
    upgrade("upgrade-patch-not-offered", "refuse", {"cluster_upgrade_target": "1.35.9"},
            ["1.35.9 is not offered by the package repository (it offers 1.35.4", "choose an offered version",
             "Nothing was changed"]),
    upgrade("upgrade-minor-not-offered", "refuse", {"cluster_upgrade_target": "1.36"},
            ["the package repository offers no 1.36 version", "Nothing was changed"]),
    upgrade("upgrade-available-without-patch", "refuse", {"cluster_upgrade_available_versions": ["1.35"]},
            ["cluster_upgrade_available_versions[0] is '1.35'", "needs a patch version"]),
    upgrade("upgrade-dra-min-malformed", "refuse", {"cluster_upgrade_dra_min_version": "1.3x"},
            ["cluster_upgrade_dra_min_version is '1.3x'"]),
    upgrade("upgrade-api-host-not-in-inventory", "refuse", {"cluster_upgrade_api_host": "control-host"},
            ["cluster_upgrade_api_host names control-host", "not in the inventory"]),
    upgrade("upgrade-drain-timeout-zero", "refuse", {"cluster_upgrade_drain_timeout": 0},
            ["cluster_upgrade_drain_timeout is 0", "at least 1"]),
    upgrade("upgrade-retry-delay-zero", "refuse", {"cluster_upgrade_drain_retry_delay": 0},
            ["cluster_upgrade_drain_retry_delay is 0", "at least 1"]),
    upgrade("upgrade-ready-timeout-negative", "refuse", {"cluster_upgrade_node_ready_timeout": -1},
            ["cluster_upgrade_node_ready_timeout is -1", "at least 1"]),
    upgrade("upgrade-repo-url-without-minor", "refuse", {"cluster_upgrade_repo_url": "https://mirror.example.com/k8s"},
            ["cluster_upgrade_repo_url", "without {minor}", "v{minor}"]),

    # ---- slow: what no wait can fix fails at once, not at the timeout ---------------------------------------------
    module("node-wait-unknown-node", "slow", "node_wait", {"names": ["node-x"], "timeout": 300},
           ["node-x is not a node of the cluster", "node-a, node-b", "check the name"]),
    module("node-wait-one-unknown-of-two", "slow", "node_wait", {"names": ["node-a", "node-x"], "timeout": 300},
           ["node-x is not a node of the cluster"]),
    module("smoke-module-no-node-matches", "slow", "claim_smoke_check",
           {"node_selector": {"pool": "training"}, "timeout": 300},
           ["node_selector pool=training matches no node", "correct node_selector"]),
    role("smoke-role-no-node-matches", "slow", "smoke_test",
         dict(SMOKE, smoke_test_node_selector={"pool": "training"}, smoke_test_timeout=300),
         ["smoke_test_node_selector pool=training matches no node", "Correct smoke_test_node_selector"]),
    role("smoke-role-wait-selector-no-node", "slow", "smoke_test",
         dict(SMOKE, smoke_test_wait_node_selector="pool=training", smoke_test_slice_timeout=300),
         ["smoke_test_wait_node_selector pool=training matches no node", "nothing was changed",
          "kubectl get nodes -l 'pool=training'"]),
    module("wait-unknown-node", "slow", "resource_slice_wait",
           {"driver": "gpu.nvidia.com", "nodes": ["node-x"], "timeout": 300},
           ["nodes names node-x, which is not a node of the cluster", "correct the name"]),
    module("wait-selector-no-node", "slow", "resource_slice_wait",
           {"driver": "gpu.nvidia.com", "node_selector": "pool=training", "timeout": 300},
           ["no node matches node_selector 'pool=training'"]),
]
