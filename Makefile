# halluscope: `make demo` and `make test` are the two set-up commands (see README.md).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= $(shell nproc 2>/dev/null || echo 2)
# The install's marker is named by the lock files' contents, not dated by their mtimes: a
# checkout or a pull (which dates every file it writes) must not reinstall an unchanged lock.
STAMP := $(VENV)/.installed-$(shell cat requirements.lock pyproject.toml 2>/dev/null | cksum | cut -d' ' -f1)
# llama.cpp is compiled for one pinned instruction set (x86-64-v3: AVX2, FMA, F16C, no AVX-512),
# never -march=native: other SIMD kernels round differently and flip greedy near-ties, so a
# native build on another CPU writes other bytes (docs/reproducibility.md).
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DGGML_BACKEND_DL=OFF -DGGML_SSE42=ON \
    -DGGML_AVX=ON -DGGML_F16C=ON -DGGML_FMA=ON -DGGML_AVX2=ON \
    -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF \
    -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF \
    -DGGML_AMX_BF16=OFF -DGGML_LLAMAFILE=ON -DGGML_OPENMP=ON -DGGML_BLAS=OFF
LLAMA_CPP_VERSION := $(shell sed -n 's/^llama_cpp_python==//p' requirements.lock)

.PHONY: help install install-llama install-vlm system-deps plots-offline demo test lint paper report-full profiles llm500 bench clean slurm-test

# `make` alone lists the targets: each target's line ends with `## what it does`.
help: ## this list
	@awk -F ':.*## ' '/^[a-z0-9%-]+:.*## / {printf "  make %-13s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The pinned llama.cpp build, compiled once per machine: the wheel is kept outside the
# virtualenv under a key of the version and the exact CMake arguments, so a second clone installs
# it without compiling. scripts/llama_wheel.py checks a cached wheel before reuse (its recorded
# flags equal these, its sha256 the recorded one); a wheel built with other flags is never taken.
# Never -march=native and never PyPI's binaries: other SIMD kernels flip greedy near-ties.
LLAMA_KEY := $(LLAMA_CPP_VERSION)-$(shell echo '$(LLAMA_CMAKE_ARGS)' | cksum | cut -d' ' -f1)
LLAMA_WHEELS ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/halluscope/llama-wheels
LLAMA_STAMP := $(VENV)/.llama-$(LLAMA_KEY)
$(LLAMA_STAMP): $(BIN)/python
	@$(PYTHON) scripts/llama_wheel.py check "$(LLAMA_WHEELS)/$(LLAMA_KEY)" '$(LLAMA_CMAKE_ARGS)' \
	  || { rm -rf "$(LLAMA_WHEELS)/$(LLAMA_KEY).tmp" && \
	       CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip wheel --no-cache-dir --no-binary llama-cpp-python \
	         --no-deps -w "$(LLAMA_WHEELS)/$(LLAMA_KEY).tmp" llama-cpp-python==$(LLAMA_CPP_VERSION) && \
	       $(PYTHON) scripts/llama_wheel.py record "$(LLAMA_WHEELS)/$(LLAMA_KEY)" '$(LLAMA_CMAKE_ARGS)'; }
	$(BIN)/pip install --force-reinstall --no-deps "$$($(PYTHON) scripts/llama_wheel.py path "$(LLAMA_WHEELS)/$(LLAMA_KEY)" '$(LLAMA_CMAKE_ARGS)')"
	rm -f $(VENV)/.llama-*
	touch $@

# Pinned install; torch==2.13.0 so pip takes the CPU build. Re-run when the lock changes.
$(STAMP): $(LLAMA_STAMP)
	$(BIN)/pip install --upgrade pip
	$(BIN)/pip install torch==2.13.0
	$(BIN)/pip install -r requirements.lock
	$(BIN)/pip install --no-deps -e .
	$(BIN)/python -m compileall -q src
	rm -f $(VENV)/.installed*
	touch $(STAMP)

install: $(STAMP) ## the pinned virtualenv .venv (llama.cpp compiled once per machine)

# Rebuild llama-cpp-python with the pinned instruction set (e.g. after a natively tuned build
# was installed by hand: the pipeline refuses one, naming the features that differ).
install-llama: ## recompile llama-cpp-python with the pinned instruction set
	rm -f $(VENV)/.llama-*
	$(MAKE) $(LLAMA_STAMP)

# What real VLM families need beside the pinned torch on a GPU machine: torchvision built for that
# torch (the video processors of Qwen2/2.5/3-VL, LLaVA-OneVision, SmolVLM, InternVL load it),
# num2words (SmolVLM) and accelerate (weights straight onto the GPU): pyproject's `vlm` extra,
# pinned. `make install`, `make test` and CI never install it.
install-vlm: $(STAMP) ## add torchvision, num2words, accelerate for real VLMs (GPU machine)
	$(BIN)/pip install -e '.[vlm]'

# The Debian packages the pipeline and the tests call outside Python: pdflatex (the report and
# its build test), Java (METEOR 1.5 for NOPE), git (DVC), npm (the plotting libraries of
# `dvc plots show`), qemu-user (the tests' emulated AMD CPU, tests/test_kernel_pinning.py),
# chromium (the tests that render pages headless). Installed when run as root (or with sudo),
# otherwise named with the one command that installs them.
TEX_PACKAGES := texlive-latex-base texlive-latex-recommended texlive-latex-extra \
    texlive-fonts-recommended
# Only the packages of the programs that are missing: a machine whose Node.js came from
# elsewhere keeps its npm (Debian's npm package would replace that Node.js).
system-deps: ## the Debian packages: pdflatex, Java, git, npm, qemu-user, chromium
	@missing=""; packages=""; \
	command -v pdflatex >/dev/null || { missing="$$missing pdflatex"; packages="$$packages $(TEX_PACKAGES)"; }; \
	command -v java >/dev/null || { missing="$$missing java"; packages="$$packages default-jre-headless"; }; \
	command -v git >/dev/null || { missing="$$missing git"; packages="$$packages git"; }; \
	command -v npm >/dev/null || { missing="$$missing npm"; packages="$$packages npm"; }; \
	command -v qemu-x86_64 >/dev/null || { missing="$$missing qemu-x86_64"; packages="$$packages qemu-user"; }; \
	command -v chromium >/dev/null || { missing="$$missing chromium"; packages="$$packages chromium"; }; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then SUDO=sudo; else \
	    echo "missing:$$missing; install them with: sudo apt-get install -y$$packages" >&2; exit 1; fi; \
	  echo "installing Debian packages for:$$missing"; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$packages; \
	fi

# `dvc plots show` writes a page whose plotting libraries (vega, vega-lite, vega-embed, pinned in
# envs/plots/package-lock.json) are inlined from this template (.dvc/config plots.html_template):
# DVC's own page loads them from a CDN and stays blank offline.
PLOTS_HTML := .dvc/plots/offline.html
$(PLOTS_HTML): envs/plots/package.json envs/plots/package-lock.json scripts/write_plots_html.py | system-deps
	npm ci --prefix envs/plots --no-audit --no-fund --ignore-scripts --loglevel=error
	$(PYTHON) scripts/write_plots_html.py

plots-offline: $(PLOTS_HTML) ## the offline page template of `dvc plots show`

# `dvc commit` rewrites dvc.lock with this machine's hashes; scripts/compare_lock.py then says
# whether they are the committed ones (docs/reproducibility.md), naming any that differ.
# compileall: every job is a new Python process; with bytecode cached for src/ (pip does it for
# site-packages) none of the ~200 demo jobs compiles halluscope's modules again, even where
# PYTHONDONTWRITEBYTECODE is set (it stops writing .pyc files, not reading them).
demo: system-deps $(STAMP) $(PLOTS_HTML) ## set-up command 1: install, build the demo, check dvc.lock
	$(BIN)/python -m compileall -q src
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake --cores $(CORES) results/tables/ all
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc commit --force --quiet
	$(BIN)/python scripts/compare_lock.py

# The fast tests first (a failure shows in minutes), then the whole-DAG tests (marked slow),
# which end by listing their 20 longest tests (where make test's time goes).
# One pytest-xdist worker per core, each test file on one worker (its module fixtures are built
# once); the workers share one demo build (tests/conftest.py). Most tests run one process at a
# time (dvc, snakemake -n, a model on one thread), so a second worker fills the second core.
TEST_WORKERS ?= $(CORES)
PYTEST := PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m pytest -q -n $(TEST_WORKERS) \
    --dist loadfile --no-loadscope-reorder
test: system-deps $(STAMP) $(PLOTS_HTML) ## set-up command 2: install, run the whole test suite
	$(BIN)/python -m compileall -q src
	$(PYTEST) -m "not slow"
	$(PYTEST) -m slow --durations=20

# profiles/slurm on a single-node SLURM cluster started here (Debian's slurm-wlm and munge,
# installed as root): the demo through sbatch, checked against a local run, then the cluster is
# stopped (tests/test_slurm_cluster.py; docs/slurm.md). CI runs it after `make test`.
slurm-test: system-deps $(STAMP) ## the demo through SLURM on a one-node cluster started here
	scripts/slurm_cluster.sh install
	$(BIN)/python -m compileall -q src
	HALLUSCOPE_SLURM_TEST=1 PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m pytest -q -s -rA \
	    tests/test_slurm_cluster.py; status=$$?; scripts/slurm_cluster.sh stop; exit $$status

lint: $(STAMP) ## ruff and snakemake --lint
	$(BIN)/ruff check src tests scripts timings
	$(BIN)/ruff format --check src tests scripts timings
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake --lint

SNAKEMAKE := PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake --cores $(CORES)
# Snakemake's message for malformed --configfile YAML has no line: check the profiles first.
CHECK := $(BIN)/halluscope check-params

# The reproduction report: the demo plus every other profile that has run
# (docs/reproduction-report.md).
paper: demo ## the reproduction report results/paper/report.pdf
	$(SNAKEMAKE) results/paper/report.pdf
	@echo "results/paper/report.pdf"

# The real-data profiles (each writes only its own results/<area>/<profile>/ folders).
profiles: $(STAMP) ## the real-data profiles pope-captions, trihe-gqa, phd-ccs
	$(CHECK) config/profiles/pope-captions.yaml config/profiles/trihe-gqa.yaml
	$(CHECK) config/profiles/phd-ccs.yaml
	$(SNAKEMAKE) --configfile config/profiles/pope-captions.yaml -- results/tables/ all
	$(SNAKEMAKE) --configfile config/profiles/trihe-gqa.yaml -- results/tables/ all
	$(SNAKEMAKE) --configfile config/profiles/phd-ccs.yaml -- results/tables/ all

# The paper's LLM-augmented extraction on the first 500 images, beside rule + lexicon on the
# same images (table llm_comparison; docs/performance.md).
llm500: $(STAMP) ## pope-captions with and without the LLM extractor, 500 images
	$(CHECK) config/profiles/pope-captions-500.yaml config/profiles/pope-captions-llm500.yaml
	$(SNAKEMAKE) --configfile config/profiles/pope-captions-500.yaml -- results/tables/ all
	$(SNAKEMAKE) --configfile config/profiles/pope-captions-llm500.yaml -- results/tables/ all

# Any one profile of config/profiles/ (`make profile-phd-ccs`): a benchmark's profile needs no
# target of its own.
profile-%: $(STAMP) ## one profile of config/profiles/, e.g. make profile-phd-ccs
	$(CHECK) config/profiles/$*.yaml
	$(SNAKEMAKE) --configfile config/profiles/$*.yaml -- results/tables/ all

# The full report: all four profiles, then the paper with all four sections.
report-full: profiles paper ## every real-data profile, then the report with all sections

# bench_chair and bench_profiles read ../shared/data (or a mirror).
bench: $(STAMP) ## the timing scripts of timings/ (docs/performance.md)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python timings/bench_caos.py
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python timings/bench_paper_scale.py
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python timings/bench_pipeline.py
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python timings/bench_backends.py
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python timings/bench_chair.py
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python timings/bench_profiles.py

clean: ## remove results/, logs/ and .snakemake/
	rm -rf results logs .snakemake
