# dra.gpu: the two commands a user needs are `make demo` and `make test`.
# Everything else here is a step those two take, usable on its own.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := $(CURDIR)/.venv
VENV_BIN := $(VENV)/bin
STAMP := $(VENV)/.bootstrap-stamp
COLLECTIONS := $(CURDIR)/build/collections
LAB := $(VENV_BIN)/python $(CURDIR)/lab/lab.py

# The test suite runs its own lab beside the demo's (other state directory and ports),
# so `make test` never disturbs a lab a user is looking at.
TEST_LAB_PORT_BASE ?= 26500
# Its main lab runs the oldest supported minor, 1.35.4, where the collection's refusals of what
# 1.35 lacks are tested; the tests of what 1.36+ serves start a 1.37.2 lab beside it
# (tests/integration/labs/old_lab.py, NEW_VERSION).
TEST_LAB_K8S_VERSION ?= 1.35.4
TEST_LAB := LAB_STATE_DIR=$(CURDIR)/.lab/test LAB_PORT_BASE=$(TEST_LAB_PORT_BASE) LAB_DRIVER_MODE=plugin \
            LAB_K8S_VERSION=$(TEST_LAB_K8S_VERSION)
# The demo's lab runs the simulated driver in plugin mode: a node publishes its GPUs once
# the gpu_operator role has put the DRA kubelet plugin on it, as on a real cluster.
DEMO_LAB := LAB_DRIVER_MODE=$${LAB_DRIVER_MODE:-plugin}
DEMO_CHARTS := $(CURDIR)/.lab/charts
DEMO_REPORT := $(CURDIR)/.lab/report
# The node lab (real kubeadm nodes in systemd-nspawn machines): its own state directory and
# bridge (dgl<N>, 10.231.<N>.0/24) per use, so the tests' never meets a user's.
TEST_NODE_LAB_NET ?= 1
TEST_NODE_LAB := NODE_LAB_STATE_DIR=$(CURDIR)/.lab/node-test NODE_LAB_NET=$(TEST_NODE_LAB_NET) \
                 NODE_LAB_MIRROR_ROOT=$(CURDIR)/.lab/test-mirror

export ANSIBLE_COLLECTIONS_PATH := $(COLLECTIONS)
export ANSIBLE_FORCE_COLOR ?= 0

.PHONY: help bootstrap role-variables lab-build lab-up lab-down lab-status lab-env node-lab-up node-lab-down demo test real-charts real-plugin \
        sanity lint units integration integration-apiserver integration-nodes benchmarks collection docs ee clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

bootstrap: $(STAMP) $(COLLECTIONS)/ansible_collections/dra/gpu ## Create the virtualenv and make dra.gpu resolvable

$(STAMP): tests/requirements.txt requirements.txt
	@test -x $(VENV_BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(VENV_BIN)/pip install --quiet --disable-pip-version-check -r tests/requirements.txt
	@touch $@
	@echo "bootstrap: virtualenv ready at $(VENV)"

$(COLLECTIONS)/ansible_collections/dra/gpu:
	@mkdir -p $(COLLECTIONS)/ansible_collections/dra
	@ln -sfn $(CURDIR) $@

lab-build: bootstrap ## Compile etcd, helm and Kubernetes $$LAB_K8S_VERSION (cached)
	@$(LAB) build

lab-up: bootstrap ## Start the lab (default: Kubernetes 1.37.2, driver mode plugin)
	@$(LAB) up

lab-down: ## Stop the lab and remove its run state
	@if [ -x $(VENV_BIN)/python ]; then $(LAB) down; else echo "lab: nothing to stop (no virtualenv)"; fi

lab-status: ## Show the lab's components
	@$(LAB) status

lab-env: ## Print export lines: eval "$$(make -s lab-env)"
	@$(LAB) env --venv-bin $(VENV_BIN)

node-lab-up: bootstrap ## Start the node lab: kubeadm 1.34.4 on a systemd-nspawn node (root)
	@lab/host-packages.sh
	@$(LAB) node-up

node-lab-down: ## Stop the node lab and remove all it created
	@if [ -x $(VENV_BIN)/python ]; then $(LAB) node-down; else echo "node-lab: nothing to stop (no virtualenv)"; fi

demo: bootstrap ## Start a lab, run playbooks/site.yml, then playbooks/demo.yml (a claim, sharing, packing, a migration; removed again)
	@$(DEMO_LAB) $(LAB) up
	@eval "$$($(DEMO_LAB) $(LAB) env --venv-bin $(VENV_BIN))" && \
	  $(VENV_BIN)/python tests/fixtures/charts/chart_repo.py build $(DEMO_CHARTS) >/dev/null && \
	  DRA_GPU_LAB_CHARTS=$(DEMO_CHARTS) ansible-playbook -i playbooks/inventory/lab.yml playbooks/site.yml && \
	  ansible-playbook -i playbooks/inventory/lab.yml playbooks/demo.yml && \
	  ansible-playbook -i playbooks/inventory/lab.yml playbooks/report.yml -e report_dir=$(DEMO_REPORT) \
	    -e report_cluster_name=lab
	@echo "demo: the GPU usage report (who holds which GPU, what is idle, what each DeviceClass can still get):"
	@echo "  $(DEMO_REPORT)/gpu-usage.html  (the same as Markdown: $(DEMO_REPORT)/gpu-usage.md)"
	@echo "demo: the lab keeps running with what site.yml installed; the demo's claims, pods and migrated Deployment are removed again."
	@echo "  eval \"\$$(make -s lab-env)\"      # kubectl, helm and ansible-playbook now talk to the lab"
	@echo "  kubectl get nodes,resourceslices,deviceclasses && kubectl get pods,resourceclaims -A"
	@echo "  ansible-playbook -i playbooks/inventory/lab.yml playbooks/demo.yml -e demo_keep=true"
	@echo "                                  # keeps a claim held by a pod to look at; run it without to remove"
	@echo "demo: stop it with: make lab-down"

test: bootstrap ## Run every test: sanity, lint, units, integration against the lab
	@tests/run-all.sh

sanity: bootstrap ## ansible-test sanity on a copy under build/ansible_collections
	@tests/ansible-test.sh sanity

lint: bootstrap ## ansible-lint (production profile)
	@PATH=$(VENV_BIN):$$PATH ansible-lint

role-variables: bootstrap ## Write each role's defaults/main.yml and README variable table from its meta/argument_specs.yml
	@$(VENV_BIN)/python tools/role_variables.py

docs: bootstrap ## Docs site of the modules and roles from their own docs (antsibull-docs lint, sphinx -W): build/docs-site/html
	@docs/site/build.sh

units: bootstrap ## Unit tests: ansible-test units, the lab's own unit tests, the built tarball's contents, the EE build context
	@if compgen -G "tests/unit/**/test_*.py" >/dev/null || compgen -G "tests/unit/plugins/*/test_*.py" >/dev/null; \
	  then tests/ansible-test.sh units; else echo "units: no plugin unit tests yet"; fi
	@$(VENV_BIN)/python -m pytest -q lab/tests
	@$(VENV_BIN)/python -m pytest -q -p no:cacheprovider tests/collection tests/benchmarks/test_stage_times.py
	@$(VENV_BIN)/python -m pytest -q -p no:cacheprovider tests/ee

collection: bootstrap ## Build the tarball into build/dist and install it into build/installed-collections
	@tests/collection/build-and-install.sh

integration: bootstrap ## Integration tests against fresh test labs (stopped afterwards): the two parts below
	@$(TEST_LAB) $(TEST_NODE_LAB) tests/integration/run.sh

integration-apiserver: bootstrap ## Its first part, no root: a fresh API-server test lab, pytest, molecule, the installed tarball
	@$(TEST_LAB) tests/integration/run-apiserver-lab.sh

integration-nodes: bootstrap ## Its second part, root: the node lab, its mirror, molecule node_upgrade, nothing left behind
	@$(TEST_LAB) $(TEST_NODE_LAB) tests/integration/run-node-lab.sh

benchmarks: bootstrap ## Run tests/benchmarks and print ratios
	@$(VENV_BIN)/python tests/benchmarks/run.py

# The execution environment (not in make test: about 10 minutes, more than the test budget in docs/testing.md has room for): the image built
# with podman from the example definition and the release tarball, then site.yml, migrate_workloads.yml
# and report.yml run in it with ansible-navigator (and report.yml with ansible-runner, laid out as
# AWX lays out a job) against a lab of its own, compared with a run outside. Root (podman).
EE_IMAGE ?= localhost/dra-gpu-ee:test
EE_LAB_STATE_DIR ?= $(CURDIR)/.lab/ee
# The demo's lab (the version playbooks/inventory/lab.yml is written for), on ports of its own.
EE_LAB := LAB_STATE_DIR=$(EE_LAB_STATE_DIR) LAB_PORT_BASE=$${EE_LAB_PORT_BASE:-30500} LAB_DRIVER_MODE=plugin \
          LAB_K8S_VERSION=$${EE_LAB_K8S_VERSION:-}

ee: bootstrap ## Build the execution-environment image (podman, no registry) and run the playbooks in it against a lab (root)
	@lab/host-packages.sh ee
	@$(VENV_BIN)/pip install --quiet --disable-pip-version-check -r tests/ee/requirements.txt -c tests/requirements.txt
	@EE_IMAGE=$(EE_IMAGE) tests/ee/build-image.sh
	@EE_IMAGE=$(EE_IMAGE) $(EE_LAB) $(VENV_BIN)/python -m pytest -q -p no:cacheprovider -s tests/ee/lab_ee.py

# NVIDIA's real charts (not in CI): git directories of NVIDIA/gpu-operator and
# kubernetes-sigs/dra-driver-nvidia-gpu; a lab of its own, stopped afterwards.
REAL_CHARTS_LAB := LAB_STATE_DIR=$(CURDIR)/.lab/real-charts-lab LAB_PORT_BASE=27400 LAB_DRIVER_MODE=plugin

real-charts: bootstrap ## Render NVIDIA's real charts with the role's values, check their images, run site.yml with them in a lab (OPERATOR_REPO=DIR DRA_REPO=DIR)
	@test -n "$(OPERATOR_REPO)" && test -n "$(DRA_REPO)" || { echo "real-charts: set OPERATOR_REPO and DRA_REPO to git directories of NVIDIA/gpu-operator and kubernetes-sigs/dra-driver-nvidia-gpu"; exit 2; }
	@$(REAL_CHARTS_LAB) $(LAB) up
	@eval "$$($(REAL_CHARTS_LAB) $(LAB) env --venv-bin $(VENV_BIN))" && \
	  $(VENV_BIN)/python tests/integration/real_charts.py --operator-repo "$(OPERATOR_REPO)" --dra-repo "$(DRA_REPO)" --lab; \
	  code=$$?; $(REAL_CHARTS_LAB) $(LAB) down; exit $$code

# NVIDIA's real kubelet plugin beside a lab (lab/labctl/realplugin): built from checkouts
# into the cache, never part of make test. DRA_REPO and TEST_INFRA_REPO name your checkouts
# (docs/testing.md says how to get them); there are no defaults.
REAL_PLUGIN_DIR ?= $(CURDIR)/.lab/real-plugin
REAL_PLUGIN_LAB := LAB_STATE_DIR=$(REAL_PLUGIN_DIR)/lab LAB_PORT_BASE=$${REAL_PLUGIN_PORT_BASE:-27900} LAB_DRIVER_MODE=plugin \
                   LAB_K8S_VERSION=$${REAL_PLUGIN_K8S_VERSION:-1.37.2} LAB_TOPOLOGY=$(REAL_PLUGIN_DIR)/topology.yml
REAL_PLUGIN_TOPOLOGIES := lab/topologies/default.yml lab/topologies/consumable-shares.yml lab/topologies/mixed-mig.yml
real-plugin: bootstrap ## NVIDIA's real gpu-kubelet-plugin (v0.4.1, main) on mock NVML publishes for lab nodes; compare with the simulator (root; DRA_REPO=DIR TEST_INFRA_REPO=DIR)
	@test -n "$(DRA_REPO)" || { echo "real-plugin: set DRA_REPO to a git directory of kubernetes-sigs/dra-driver-nvidia-gpu (with tag v0.4.1 and main)"; exit 2; }
	@test -n "$(TEST_INFRA_REPO)" || { echo "real-plugin: set TEST_INFRA_REPO to a git directory of NVIDIA/k8s-test-infra (pkg/gpu/mocknvml)"; exit 2; }
	@test "$$(id -u)" = 0 || { echo "real-plugin: run as root (each plugin process gets its own mount namespace for a fake sysfs)"; exit 2; }
	@mkdir -p $(REAL_PLUGIN_DIR)
	@cd lab && $(VENV_BIN)/python -m labctl.realplugin.run --union-topology $(REAL_PLUGIN_DIR)/topology.yml \
	  $(addprefix --topology $(CURDIR)/,$(REAL_PLUGIN_TOPOLOGIES))
	@$(REAL_PLUGIN_LAB) $(LAB) up
	@eval "$$($(REAL_PLUGIN_LAB) $(LAB) env --venv-bin $(VENV_BIN))" && cd lab && \
	  $(VENV_BIN)/python -m labctl.realplugin.run --dra-repo "$(DRA_REPO)" --test-infra-repo "$(TEST_INFRA_REPO)" \
	  --out $(REAL_PLUGIN_DIR)/run $(addprefix --topology $(CURDIR)/,$(REAL_PLUGIN_TOPOLOGIES)); \
	  code=$$?; cd $(CURDIR) && $(REAL_PLUGIN_LAB) $(LAB) down; exit $$code

clean: lab-down node-lab-down ## Remove the virtualenv, lab state and build output (not the Go/binary cache)
	@rm -rf $(VENV) .lab build tests/output
