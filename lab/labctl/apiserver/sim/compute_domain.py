"""SIMULATED: the devices NVIDIA's second DRA driver, compute-domain.nvidia.com, publishes.

NVIDIA's DRA chart runs it by default (``resources.computeDomains.enabled: true``) as the
``compute-domains`` container of the same kubelet-plugin pod that runs the GPU driver in its
``gpus`` container; the v26.7 operator's DaemonSet has the same two containers. Read in the
driver's source at v0.4.1 (cmd/compute-domain-kubelet-plugin): the plugin publishes, in a pool
named after its node, IMEX channel 0 and the compute-domain daemon 0 (the other channels are
left out on purpose), each with two attributes, ``type`` (string: channel | daemon) and ``id``
(int), and no capacity. Like the GPU driver it builds the slice from a map: no fixed order.
"""

DRIVER = "compute-domain.nvidia.com"
CONTAINER = "compute-domains"


def devices():
    return [{"name": "%s-0" % kind, "attributes": {"type": {"string": kind}, "id": {"int": 0}}}
            for kind in ("channel", "daemon")]
