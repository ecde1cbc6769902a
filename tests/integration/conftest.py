"""Fixtures for tests against the running lab (KUBECONFIG from `lab.py env`)."""

import os
import uuid

import pytest
from kubernetes import client, config

from waiting import wait_for_object


@pytest.fixture(scope="session")
def api():
    if not os.environ.get("KUBECONFIG"):
        pytest.fail("KUBECONFIG is not set: run these tests through `make integration`, which starts the lab")
    return config.new_client_from_config(config_file=os.environ["KUBECONFIG"])


@pytest.fixture(scope="session")
def core(api):
    return client.CoreV1Api(api)


@pytest.fixture(scope="session")
def custom(api):
    return client.CustomObjectsApi(api)


@pytest.fixture
def namespace(core):
    name = "it-" + uuid.uuid4().hex[:8]
    core.create_namespace({"metadata": {"name": name}})
    # The service account controller adds "default" shortly after; pods need it.
    wait_for_object(core.list_namespaced_service_account, lambda sa: sa["metadata"]["name"] == "default",
                    "the default service account in " + name, timeout=30, namespace=name)
    yield name
    core.delete_namespace(name)
