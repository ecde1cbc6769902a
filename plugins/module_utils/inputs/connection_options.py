# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Connection options a role's later steps would take badly, refused before the role changes anything (pure logic).

Not a role's variables but the connection options dra.gpu.input_check is given (a task option
or module_defaults for group/dra.gpu.k8s), which reach the role's kubernetes.core steps too:
those Helm cannot take, and a password written into the proxy or host URL that
kubernetes.core would print. Each function returns the list of its problems, one sentence each.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.k8s import redaction

# Connection options kubernetes.core.helm does not take, and the pairs it refuses: with
# group/dra.gpu.k8s extended to kubernetes.core's k8s and helm groups, these would reach
# Helm from module_defaults and fail there, after the nodes were labelled.
NOT_FOR_HELM = ("client_cert", "client_key", "proxy", "no_proxy", "proxy_headers", "username", "password",
                "persist_config", "impersonate_user", "impersonate_groups")
HELM_EXCLUSIVE = (("context", "ca_cert"), ("context", "validate_certs"))
# Roles with kubernetes.core steps (k8s_info, k8s_drain, k8s_exec, k8s, helm): those modules print
# their options at -vvv, and proxy and host are not no_log there, so a password written into
# either URL as an option would reach the output; the dra.gpu modules mask it themselves.
WITH_KUBERNETES_CORE_STEPS = ("cluster_upgrade", "device_classes", "gpu_operator")


def helm_connection(connection_params):
    """Connection options that would reach Helm (module_defaults for group/dra.gpu.k8s) but that
    kubernetes.core.helm cannot take: refused before the role changes anything."""
    given = [o for o in NOT_FOR_HELM if connection_params.get(o) not in (None, "", [], {})]
    found = []
    if given:
        found.append(
            "the connection option%s %s (a task option or module_defaults for group/dra.gpu.k8s) cannot reach Helm: "
            "kubernetes.core.helm takes only kubeconfig, context, host, api_key, ca_cert and validate_certs, and the "
            "role installs the charts with it; put %s into a kubeconfig and pass kubeconfig (and context) instead"
            % ("s" if len(given) > 1 else "", ", ".join(given), "them" if len(given) > 1 else "it"))
    for first, second in HELM_EXCLUSIVE:
        if connection_params.get(first) and connection_params.get(second) is not None:
            found.append(
                "the connection options %s and %s are set together, which kubernetes.core.helm refuses; drop %s and "
                "keep it in the kubeconfig of that context (certificate-authority, insecure-skip-tls-verify)"
                % (first, second, second))
    return found


def credentials_in_urls(connection_params, skip=()):
    """A password written into the proxy or host URL given as an option: refused in roles whose
    kubernetes.core steps would print it, with the two ways that keep it out of the output.
    ``skip``: options refused already for another reason (gpu_operator's NOT_FOR_HELM)."""
    found = []
    for option in [o for o in redaction.URL_OPTIONS if o not in skip]:
        value = connection_params.get(option)
        if redaction.url_credentials(value):
            found.append(
                "the connection option %s (a task option or module_defaults for group/dra.gpu.k8s) carries a password "
                "in its URL (%s); this role's kubernetes.core steps print their %s option at -vvv, so the password "
                "would appear in the output. To fix: %s" % (option, redaction.url(value), option, (
                    "write proxy without it and put user:password into proxy_headers: {proxy_basic_auth: ...}, "
                    "which every module masks, or set K8S_AUTH_PROXY in the environment instead"
                    if option == "proxy" else "connect with a token (api_key) or a kubeconfig instead")))
    return found


def problems(role, connection_params):
    """What ``role``'s later steps would take badly of the connection options: for gpu_operator,
    those Helm cannot take; for the roles with kubernetes.core steps, a password in a URL (an
    option Helm cannot take already is not named twice)."""
    found = []
    if role == "gpu_operator":
        found += helm_connection(connection_params)
    if role in WITH_KUBERNETES_CORE_STEPS:
        found += credentials_in_urls(connection_params, skip=NOT_FOR_HELM if role == "gpu_operator" else ())
    return found
