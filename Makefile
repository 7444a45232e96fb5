# Single entry point: `make setup`, `make demo` (main job), `make test`, `make bench`.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV ?= $(CURDIR)/.venv
BIN := $(VENV)/bin
COLLECTION_LINK := $(CURDIR)/.cache/collections/ansible_collections/aisbench/agent_runtime
export ANSIBLE_CONFIG := $(CURDIR)/ansible.cfg
export ANSIBLE_COLLECTIONS_PATH := $(CURDIR)/.cache/collections
export PATH := $(BIN):$(PATH)
export PY_COLORS := 0
export NO_COLOR := 1
# Tools (molecule, ansible-lint) install collections under ANSIBLE_HOME: keep that per checkout.
export ANSIBLE_HOME := $(CURDIR)/.cache/ansible-home
export ANSIBLE_FORCE_COLOR := 0

# Scenario order: the longest first, so the lanes (MOLECULE_LANES) end close together.
SCENARIO_ORDER := agents e2e registry docker_engine runtime_container runtime_image harbor_modules qemu_binfmt nightly_schedule nvidia_runtime preflight
MOLECULE_LANES ?= 2
SCENARIOS_PRESENT := $(notdir $(patsubst %/molecule.yml,%,$(wildcard molecule/*/molecule.yml)))
SCENARIOS ?= $(filter $(SCENARIOS_PRESENT),$(SCENARIO_ORDER)) $(sort $(filter-out $(SCENARIO_ORDER),$(SCENARIOS_PRESENT)))

.PHONY: help setup host venv collection images runtime-image-tar agent-toolchain-tars lint sanity unit integration molecule test bench demo status demo-clean clean \
  arm64-host arm64-disk arm64-images test-arm64 arm64-down

help:
	@echo "make setup    install host prerequisites (root), the virtualenv and the local images"
	@echo "make demo     provision a local target and run a nightly benchmark (the main job)"
	@echo "make test     setup, then lint + sanity + unit + integration (bad input) + every Molecule scenario ($(SCENARIOS))"
	@echo "make status   the health table of the demo target (after make demo)"
	@echo "make bench    performance benchmarks, written to docs/performance.md"
	@echo "make test-arm64  the collection on an emulated arm64 host (docs/arm64.md; not part of make test)"

setup: host venv images
	@echo "setup done: host engine, virtualenv, local images"

host:
	bash tests/host/prepare.sh

venv: $(VENV)/.installed collection

$(VENV)/.installed: requirements/test.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -r requirements/test.txt
	touch $@

collection:
	@mkdir -p $(dir $(COLLECTION_LINK))
	@ln -sfn $(CURDIR) $(COLLECTION_LINK)

images:
	bash tests/images/build.sh

# The L4 runtime image, built once on the host engine with the runtime_image role and exported as a tar:
# scenarios and the demo load it into their targets (runtime_image_source: load), as air-gapped sites do.
# A checkout that changes the image can build its own next to the shared one (IMAGES_DIR, RUNTIME_IMAGE_TAG; the
# runtime_container and e2e scenarios read both): see docs/development.md.
IMAGES_DIR ?= /var/tmp/aisbench-images
RUNTIME_IMAGE_TAG ?= 0.26.0
RUNTIME_IMAGE_TAR ?= $(IMAGES_DIR)/agent-runtime.tar
export AISBENCH_IMAGES_DIR := $(IMAGES_DIR)
export AISBENCH_RUNTIME_IMAGE_TAG := $(RUNTIME_IMAGE_TAG)
runtime-image-tar: venv images
	$(BIN)/ansible-playbook tests/images/runtime-image.yml -e runtime_image_export_path=$(RUNTIME_IMAGE_TAR) \
	  -e runtime_image_tag=$(RUNTIME_IMAGE_TAG) -e runtime_image_build_dir=$(IMAGES_DIR)/runtime-image

# The agent toolchains (L2: mini-swe-agent, qwen-coder, aider, openhands), baked once on the host engine with the
# baked_images role and exported as tars to $(AGENT_TOOLCHAINS_DIR); the agents scenario loads them (air-gapped style).
AGENT_TOOLCHAINS_DIR ?= /var/tmp/aisbench-images/agents
agent-toolchain-tars: venv images
	$(BIN)/ansible-playbook tests/images/agent-toolchains.yml -e baked_images_toolchain_export_dir=$(AGENT_TOOLCHAINS_DIR)

lint: venv
	$(BIN)/yamllint -s .
	$(BIN)/ansible-lint
	$(BIN)/python -m compileall -q plugins tests bench

# ansible-test sanity --local on a copy laid out as ansible_collections/aisbench/agent_runtime (tools/sanity.sh).
# Its per-test virtualenvs (pinned by ansible-core's own sanity requirements) are created once from PyPI, then the
# tests run offline. Known exceptions, each with its reason: tests/sanity/ignore-<ansible-core version>.txt.
SANITY_VENVS := $(CURDIR)/.cache/ansible-test-home/primed
sanity: venv $(SANITY_VENVS)
	bash tools/sanity.sh

$(SANITY_VENVS): $(VENV)/.installed tools/sanity.sh tools/sanity/get_pip_offline.py
	bash tools/sanity.sh --prime-venvs
	touch $@

# Pure tests only: a unit test that starts a process fails (tests/unit/conftest.py); those live in tests/integration.
unit: venv
	$(BIN)/pytest -q tests/unit

# Every test that starts a process (docs/development.md, "Tests"): ansible-playbook plays over the local connection
# (plays/), the host engine (docker/), the collection's scripts and tools (scripts/), headless chromium (browser/), and
# bad input (docs/bad_input.md): real ansible-playbook runs against a throw-away aisbench-badinput-* container, and
# Harbor in a container of the runtime image (aisbench/agent-runtime:$(RUNTIME_IMAGE_TAG), which runtime-image-tar
# builds on the host engine).
integration: venv images runtime-image-tar
	$(BIN)/pytest -q tests/integration

# Scenarios run in MOLECULE_LANES lanes (each takes the next one when its last ends; tests/run_scenarios.py):
# they mostly wait on engines, downloads and trials, so two lanes finish the suite sooner on two cores.
molecule: venv runtime-image-tar
	$(BIN)/python tests/run_scenarios.py --lanes $(MOLECULE_LANES) --log-dir .cache/molecule-logs \
	  --command '$(BIN)/molecule test -s {}' $(SCENARIOS)

# CI=true: a skipped test fails unless it is on the allow-list of tests/ci_skip_policy.py.
# Each part's time also goes to $(TEST_TIMES), which .ci/run prints last.
TEST_TIMES := $(CURDIR)/.cache/test-times.txt
# `make -n test` (the docs' command check) still runs the recipe's $(MAKE) line: its times then go nowhere.
TEST_TIMES_OUT := $(if $(findstring n,$(firstword -$(MAKEFLAGS))),/dev/null,$(TEST_TIMES))
test: export CI := true
test: setup
	@mkdir -p $(dir $(TEST_TIMES)); rm -f $(TEST_TIMES)
	@for part in lint sanity unit integration molecule; do start=$$(date +%s); rc=0; \
	  $(MAKE) --no-print-directory $$part || rc=$$?; \
	  echo "=== $$part: $$(( $$(date +%s) - start )) s (exit $$rc)" | tee -a $(TEST_TIMES_OUT); \
	  [ $$rc -eq 0 ] || exit $$rc; done

# The arm64 test host (docs/arm64.md): Debian 12 for arm64 under qemu-system-aarch64 (TCG), built from Debian's
# packages and cached by content under $(ARM64_DIR); site.yml provisions it over SSH, nightly.yml runs the x86_64 sample
# task images on it under qemu-user. Too slow for `make test` (times in docs/arm64.md): run it before resolving an
# issue that touches host roles. `make arm64-down` powers off a host kept with KEEP=1.
ARM64_DIR ?= /var/tmp/aisbench-arm64
# The arm64 runtime image's Harbor: its cross-build under qemu-user costs about an hour per Harbor version here, so it
# moves on its own (0.25.0 is supported, docs/harbor_modules.md).
ARM64_HARBOR_VERSION ?= 0.25.0
ARM64_RUNTIME_IMAGE_TAG ?= $(ARM64_HARBOR_VERSION)-arm64
export AISBENCH_ARM64_HARBOR_VERSION := $(ARM64_HARBOR_VERSION)
export AISBENCH_ARM64_DIR := $(ARM64_DIR)
arm64-host:
	bash tests/arm64/host-packages.sh

arm64-disk: arm64-host
	bash tests/arm64/build-disk.sh

arm64-images: venv images arm64-host
	bash tests/arm64/images.sh $(ARM64_RUNTIME_IMAGE_TAG)

test-arm64: setup arm64-host
	bash tests/arm64/run.sh $(ARM64_RUNTIME_IMAGE_TAG)

arm64-down:
	bash tests/arm64/vm.sh down

# BENCH_ARGS: more bench/run.py options (`$(BIN)/python bench/run.py --help`), e.g. BENCH_ARGS='--agent-attempts 1'.
BENCH_ARGS ?=
bench: venv images runtime-image-tar agent-toolchain-tars
	$(BIN)/python bench/run.py --runtime-image-tar $(RUNTIME_IMAGE_TAR) --runtime-image-tag $(RUNTIME_IMAGE_TAG) \
	  --images-dir $(IMAGES_DIR) $(BENCH_ARGS)

# Reports go to ./reports/<night>/ (fleet-report.md, .csv, .json, .html).
demo: setup runtime-image-tar
	$(BIN)/ansible-playbook -i inventories/local playbooks/demo.yml -e aisbench_nightly_report_dir=$(CURDIR)/reports

# The health of the demo target's layers (make demo first), as the quick start shows it.
status: venv
	$(BIN)/ansible-playbook -i inventories/local playbooks/status.yml

demo-clean:
	-docker rm -f -v aisbench-demo-1

clean:
	rm -rf .cache .pytest_cache
