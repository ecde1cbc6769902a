from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.inputs import connection_options


# ----- connection options Helm cannot take ----------------------------------------------------

def test_helm_connection_options():
    assert connection_options.helm_connection({"kubeconfig": "/k", "context": "c"}) == []
    found = connection_options.helm_connection({"client_cert": "/c", "client_key": "/k"})
    assert "client_cert, client_key" in found[0] and "cannot reach Helm" in found[0]
    found = connection_options.helm_connection({"context": "c", "validate_certs": False})
    assert "context and validate_certs" in found[0]


def test_one_option_helm_cannot_take_is_named_in_the_singular():
    found = connection_options.helm_connection({"proxy": "http://p:3128", "username": "", "password": None})
    assert len(found) == 1
    assert found[0].startswith("the connection option proxy (a task option")
    assert "put it into a kubeconfig" in found[0]


def test_context_and_ca_cert_are_refused_together_but_not_alone():
    found = connection_options.helm_connection({"context": "c", "ca_cert": "/ca.pem"})
    assert found == ["the connection options context and ca_cert are set together, which kubernetes.core.helm refuses; "
                     "drop ca_cert and keep it in the kubeconfig of that context (certificate-authority, "
                     "insecure-skip-tls-verify)"]
    assert connection_options.helm_connection({"ca_cert": "/ca.pem", "validate_certs": True}) == []
    assert connection_options.helm_connection({"context": None, "validate_certs": False}) == []


# ----- a password in a URL that kubernetes.core would print -----------------------------------

def test_a_password_in_a_proxy_or_host_option_is_refused_naming_the_way_out():
    options = {"proxy": "http://bob:pr0xy-pw@p:3128", "host": "https://h:6443"}
    found = connection_options.credentials_in_urls(options)
    assert len(found) == 1 and "proxy" in found[0] and "http://bob:***@p:3128" in found[0]
    assert "proxy_basic_auth" in found[0] and "K8S_AUTH_PROXY" in found[0] and "pr0xy-pw" not in found[0]
    found = connection_options.credentials_in_urls({"host": "https://admin:adm1n@h:6443"})
    assert "https://admin:***@h:6443" in found[0] and "api_key" in found[0]
    assert connection_options.credentials_in_urls({"proxy": "http://p:3128", "host": None}) == []
    assert connection_options.credentials_in_urls({"proxy": "http://b:pw@p:1"}, skip=("proxy",)) == []


# ----- which role gets which check ------------------------------------------------------------

def test_each_role_gets_the_checks_of_its_later_steps_and_a_password_is_named_once():
    options = {"proxy": "http://bob:pw@p:3128", "host": "https://admin:adm1n@h:6443"}
    helm = connection_options.problems("gpu_operator", options)
    # proxy: Helm cannot take it at all (named once, there); host: its password would be printed
    assert len(helm) == 2 and "cannot reach Helm" in helm[0] and "the connection option host" in helm[1]
    for role in ("cluster_upgrade", "device_classes"):
        found = connection_options.problems(role, options)
        assert [f.split(" (")[0] for f in found] == ["the connection option host", "the connection option proxy"]
    assert connection_options.problems("smoke_test", options) == []
