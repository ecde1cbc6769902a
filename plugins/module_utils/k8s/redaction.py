# -*- coding: utf-8 -*-
# Copyright: dra.gpu contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""What of a connection must never be printed, and text with it taken out.

Two layers, because a message is built in many places and a library's error text is not ours:
``url`` writes a URL's password as ``***`` wherever the collection echoes a URL
(``http://user:***@proxy:3128``), and ``secret_values`` lists every credential the
connection carries (tokens, passwords, client keys, the password in a proxy's or server's
URL, from options, ``K8S_AUTH_*`` variables and the kubeconfig that will be read) for
``client.kube_module`` to hand to Ansible's ``no_log_values``: Ansible then masks each one
in everything the module returns, ``-vvv``'s invocation included, whoever built the text.
Pure logic apart from reading the kubeconfig files the settings name.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import re

MASK = "***"

# scheme://user:password@ - the password is everything up to the last @ before the host.
_URL_PASSWORD = re.compile(r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#@:\s]*):(?P<password>[^/?#\s]*)@")
# scheme://token@ (no colon): a credential too, e.g. https://TOKEN@host.
_URL_TOKEN = re.compile(r"(?P<head>\b[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<token>[^/?#@:\s]+)@")

# Options whose whole value is a credential.
SECRET_OPTIONS = ("api_key", "password")
# Options whose value may be a URL with a password in it.
URL_OPTIONS = ("host", "proxy")
# Fields of a kubeconfig user entry that are credentials; nested maps (auth-provider's config,
# exec's env) are searched for these names too.
SECRET_USER_FIELDS = ("token", "password", "client-key-data", "access-token", "refresh-token", "id-token",
                      "client-secret", "idp-certificate-authority-data-secret")
# The shortest value worth masking: Ansible replaces each no_log value wherever it occurs, so a
# one-letter password would star out every word with that letter; such a password is masked in
# URLs (``text``) and by the option's own no_log, not as a free-standing string.
MIN_MASKED_LENGTH = 3


def url(value):
    """``value`` with any credentials in a URL written as ***; None and non-strings unchanged."""
    if not isinstance(value, str):
        return value
    value = _URL_PASSWORD.sub(lambda m: "%s:%s@" % (m.group("head"), MASK), value)
    return _URL_TOKEN.sub(lambda m: "%s%s@" % (m.group("head"), MASK), value)


def url_credentials(value):
    """The password (or token) written into a URL, and its decoded form, for masking."""
    if not isinstance(value, str):
        return []
    found = [m.group("password") for m in _URL_PASSWORD.finditer(value)]
    found += [m.group("token") for m in _URL_TOKEN.finditer(value)]
    try:
        from urllib.parse import unquote
    except ImportError:  # pragma: no cover - Python 2 is not supported by the collection
        unquote = None
    decoded = [unquote(f) for f in found] if unquote else []
    return [f for f in found + decoded if f]


def _user_secrets(user):
    """Credential values anywhere in a kubeconfig user entry (auth-provider, exec env included)."""
    found = []
    if isinstance(user, dict):
        for key, value in user.items():
            if key in SECRET_USER_FIELDS and isinstance(value, str):
                found.append(value)
            elif key == "env" and isinstance(value, list):  # exec plugin: [{name, value}]
                found += [e.get("value") for e in value if isinstance(e, dict) and isinstance(e.get("value"), str)
                          and any(w in str(e.get("name", "")).upper() for w in ("TOKEN", "SECRET", "PASSWORD", "KEY"))]
            elif isinstance(value, (dict, list)):
                found += _user_secrets(value)
    elif isinstance(user, list):
        for item in user:
            found += _user_secrets(item)
    return found


def kubeconfig_secrets(document):
    """Every credential in a kubeconfig document: each user's, and passwords in server URLs."""
    if not isinstance(document, dict):
        return []
    found = []
    for entry in document.get("users") or []:
        if isinstance(entry, dict):
            found += _user_secrets(entry.get("user"))
    for entry in document.get("clusters") or []:
        cluster = entry.get("cluster") if isinstance(entry, dict) else None
        if isinstance(cluster, dict):
            found += url_credentials(cluster.get("server")) + url_credentials(cluster.get("proxy-url"))
    return found


def _read_documents(setting_value):
    """The kubeconfig documents a setting names (an inline dict, or paths joined like KUBECONFIG);
    what cannot be read is skipped: connection_files.check_files reports it with the fix."""
    if isinstance(setting_value, dict):
        return [setting_value]
    documents = []
    try:
        import yaml
    except ImportError:  # pragma: no cover - PyYAML comes with ansible-core
        return documents
    for path in str(setting_value).split(os.pathsep):
        full = os.path.expanduser(path) if path else ""
        if not full or not os.path.isfile(full):
            continue
        try:
            with open(full) as handle:
                documents.append(yaml.safe_load(handle))
        except Exception:  # noqa: BLE001 - unreadable or not YAML: reported elsewhere, nothing to mask
            continue
    return documents


def secret_values(found, proxy_headers=None):
    """Every credential the settings (connection_settings.settings) and the proxy_headers option carry,
    for Ansible's no_log_values."""
    values = []
    for name in SECRET_OPTIONS:
        setting = found.get(name)
        if setting is not None and isinstance(setting.value, str):
            values.append(setting.value)
    for name in URL_OPTIONS:
        setting = found.get(name)
        if setting is not None:
            values += url_credentials(setting.value)
    for key in ("proxy_basic_auth", "basic_auth"):
        auth = (proxy_headers or {}).get(key)
        if isinstance(auth, str):
            values += [auth, auth.partition(":")[2]]
    # The kubeconfig that is read, and one that is named but not read (host and a token win).
    named = []
    for setting in (found.get("_kubeconfig"), found.get("kubeconfig")):
        if setting is not None and setting.value and all(setting is not s for s in named):
            named.append(setting)
    for setting in named:
        for document in _read_documents(setting.value):
            values += kubeconfig_secrets(document)
    return sorted(set(v for v in values if isinstance(v, str) and len(v) >= MIN_MASKED_LENGTH))
