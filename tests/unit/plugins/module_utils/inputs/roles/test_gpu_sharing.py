from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.dra.gpu.plugins.module_utils.inputs.roles import gpu_sharing


def sharing(**values):
    return dict({"gpu_sharing_state": "present", "gpu_sharing_mig_timeout": 900, "gpu_sharing_classes": [],
                 "gpu_sharing_mig_nodes": [], "gpu_sharing_mig_layout": ""}, **values)


MIG_1G = {"name": "mig-1g", "strategy": "mig", "profile": "1g.10gb"}
MIG_3G = {"name": "mig-3g", "strategy": "mig", "profile": "3g.40gb"}


def test_sharing_class_problems_are_given_as_they_are():
    too_many = {"name": "a", "strategy": "mps", "mps": {"active_thread_percentage": 101}}
    found = gpu_sharing.problems(sharing(gpu_sharing_classes=[too_many]), [])
    assert len(found) == 1 and found[0].startswith("gpu_sharing_classes[0]") and "must be 0 to 100" in found[0]


def test_mig_nodes_need_a_layout_unless_one_profile_names_it():
    assert gpu_sharing.problems(sharing(gpu_sharing_classes=[MIG_1G], gpu_sharing_mig_nodes=["w1"]), []) == []
    found = gpu_sharing.problems(sharing(gpu_sharing_classes=[MIG_1G, MIG_3G], gpu_sharing_mig_nodes=["w1"]), [])
    assert found == ["gpu_sharing_mig_nodes is set but gpu_sharing_mig_layout is empty and the mig classes name 2 "
                     "profiles (1g.10gb, 3g.40gb), so no all-<profile> layout follows from them; set "
                     "gpu_sharing_mig_layout (for example all-balanced)"]


def test_gpu_sharing_claim_templates_are_checked_against_the_memory_classes():
    memory = {"name": "nvidia-gpu-memory", "strategy": "memory"}
    good = {"name": "gpu-8gi", "namespace": "team-a", "class": "nvidia-gpu-memory", "memory": "8Gi"}
    assert gpu_sharing.problems(sharing(gpu_sharing_classes=[memory], gpu_sharing_claim_templates=[good]), []) == []
    found = gpu_sharing.problems(sharing(gpu_sharing_classes=[memory], gpu_sharing_claim_templates=[
        dict(good, memory="eight")]), [])
    assert len(found) == 1 and found[0].startswith("gpu_sharing_claim_templates[0].memory is 'eight'")
    # state absent removes them whatever they say
    assert gpu_sharing.problems(sharing(gpu_sharing_state="absent", gpu_sharing_claim_templates=[
        dict(good, memory="eight")]), []) == []
    assert "name 0 profiles (no)" in gpu_sharing.problems(sharing(gpu_sharing_mig_nodes=["w1"]), [])[0]
    assert gpu_sharing.problems(sharing(gpu_sharing_classes=[MIG_1G, MIG_3G], gpu_sharing_mig_nodes=["w1"],
                                        gpu_sharing_mig_layout="all-balanced"), []) == []
    assert gpu_sharing.problems(sharing(gpu_sharing_classes=[MIG_1G, MIG_3G]), []) == []


def test_removing_sharing_checks_only_the_mig_settings():
    values = sharing(gpu_sharing_state="absent", gpu_sharing_classes=[{"strategy": "nonsense"}],
                     gpu_sharing_mig_nodes=["w1", "w1"], gpu_sharing_mig_timeout=0)
    found = gpu_sharing.problems(values, [])
    assert len(found) == 2
    assert found[0].startswith("gpu_sharing_mig_timeout is 0") and "gpu_sharing_mig_nodes names w1 more than once" in found[1]
