# halluscope: `make demo` and `make test` are the two set-up commands (see README.md).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
CORES ?= $(shell nproc 2>/dev/null || echo 2)
STAMP := $(VENV)/.installed
# llama.cpp is compiled for one pinned instruction set (x86-64-v3: AVX2, FMA, F16C, no AVX-512),
# never -march=native: other SIMD kernels round differently and flip greedy near-ties, so a
# native build on another CPU writes other bytes (README "What reproduces where").
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_CPU_ALL_VARIANTS=OFF -DGGML_BACKEND_DL=OFF -DGGML_SSE42=ON \
    -DGGML_AVX=ON -DGGML_F16C=ON -DGGML_FMA=ON -DGGML_AVX2=ON \
    -DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF \
    -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF \
    -DGGML_AMX_BF16=OFF -DGGML_LLAMAFILE=ON -DGGML_OPENMP=ON -DGGML_BLAS=OFF
LLAMA_CPP_VERSION := $(shell sed -n 's/^llama_cpp_python==//p' requirements.lock)

.PHONY: install install-llama system-deps plots-offline demo test lint paper report-full profiles llm500 dvc-yaml bench clean slurm-test

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# The pinned llama.cpp build, once per version and set of CMake arguments (the stamp's name
# carries both): compiled from source, never a cached wheel built for another CPU.
LLAMA_STAMP := $(VENV)/.llama-$(LLAMA_CPP_VERSION)-$(shell echo '$(LLAMA_CMAKE_ARGS)' | cksum | cut -d' ' -f1)
$(LLAMA_STAMP): $(BIN)/python
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --no-cache-dir --no-binary llama-cpp-python \
	    --force-reinstall --no-deps llama-cpp-python==$(LLAMA_CPP_VERSION)
	rm -f $(VENV)/.llama-*
	touch $@

# Pinned install; torch==2.13.0 so pip takes the CPU build. Re-run when the lock changes.
$(STAMP): $(LLAMA_STAMP) requirements.lock pyproject.toml
	$(BIN)/pip install --upgrade pip
	$(BIN)/pip install torch==2.13.0
	$(BIN)/pip install -r requirements.lock
	$(BIN)/pip install --no-deps -e .
	$(BIN)/python -m compileall -q src
	touch $(STAMP)

install: $(STAMP)

# Rebuild llama-cpp-python with the pinned instruction set (e.g. after a natively tuned build
# was installed by hand: the pipeline refuses one, naming the features that differ).
install-llama:
	rm -f $(VENV)/.llama-*
	$(MAKE) $(LLAMA_STAMP)

# The Debian packages the pipeline and the tests call outside Python: pdflatex (the report and
# its build test), Java (METEOR 1.5 for NOPE), git (DVC), npm (the plotting libraries of
# `dvc plots show`), qemu-user (the tests' emulated AMD CPU, tests/test_kernel_pinning.py). Installed when run as root (or with sudo), otherwise named with the one
# command that installs them.
TEX_PACKAGES := texlive-latex-base texlive-latex-recommended texlive-latex-extra \
    texlive-fonts-recommended
# Only the packages of the programs that are missing: a machine whose Node.js came from
# elsewhere keeps its npm (Debian's npm package would replace that Node.js).
system-deps:
	@missing=""; packages=""; \
	command -v pdflatex >/dev/null || { missing="$$missing pdflatex"; packages="$$packages $(TEX_PACKAGES)"; }; \
	command -v java >/dev/null || { missing="$$missing java"; packages="$$packages default-jre-headless"; }; \
	command -v git >/dev/null || { missing="$$missing git"; packages="$$packages git"; }; \
	command -v npm >/dev/null || { missing="$$missing npm"; packages="$$packages npm"; }; \
	command -v qemu-x86_64 >/dev/null || { missing="$$missing qemu-x86_64"; packages="$$packages qemu-user"; }; \
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

plots-offline: $(PLOTS_HTML)

# `dvc commit` rewrites dvc.lock with this machine's hashes; scripts/compare_lock.py then says
# whether they are the committed ones (README "What reproduces where"), naming any that differ.
# compileall: every job is a new Python process; with bytecode cached for src/ (pip does it for
# site-packages) none of the ~200 demo jobs compiles halluscope's modules again, even where
# PYTHONDONTWRITEBYTECODE is set (it stops writing .pyc files, not reading them).
demo: system-deps $(STAMP) $(PLOTS_HTML)
	$(BIN)/python -m compileall -q src
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake --cores $(CORES) results/tables/ all
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/dvc commit --force --quiet
	$(BIN)/python scripts/compare_lock.py

# The fast tests first (a failure shows in minutes), then the whole-DAG tests (marked slow).
# One pytest-xdist worker per core, each test file on one worker (its module fixtures are built
# once); the workers share one demo build (tests/conftest.py). Most tests run one process at a
# time (dvc, snakemake -n, a model on one thread), so a second worker fills the second core.
TEST_WORKERS ?= $(CORES)
PYTEST := PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m pytest -q -n $(TEST_WORKERS) \
    --dist loadfile --no-loadscope-reorder
test: system-deps $(STAMP) $(PLOTS_HTML)
	$(BIN)/python -m compileall -q src
	$(PYTEST) -m "not slow"
	$(PYTEST) -m slow

# profiles/slurm on a single-node SLURM cluster started here (Debian's slurm-wlm and munge,
# installed as root): the demo through sbatch, checked against a local run, then the cluster is
# stopped (tests/test_slurm_cluster.py; 40-47 min on 2 cores shared with other work, and
# 20 min on the merged code at load 1-2.8, see README). CI runs it after `make test`.
slurm-test: system-deps $(STAMP)
	scripts/slurm_cluster.sh install
	$(BIN)/python -m compileall -q src
	HALLUSCOPE_SLURM_TEST=1 PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python -m pytest -q -s -rA \
	    tests/test_slurm_cluster.py; status=$$?; scripts/slurm_cluster.sh stop; exit $$status

lint: $(STAMP)
	$(BIN)/ruff check src tests scripts timings
	$(BIN)/ruff format --check src tests scripts timings
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake --lint

SNAKEMAKE := PATH="$(abspath $(BIN)):$$PATH" $(BIN)/snakemake --cores $(CORES)
# Snakemake's message for malformed --configfile YAML has no line: check the profiles first.
CHECK := $(BIN)/halluscope check-params

# The reproduction report: the demo plus every other profile that has run (see README).
paper: demo
	$(SNAKEMAKE) results/paper/report.pdf
	@echo "results/paper/report.pdf"

# The real-data profiles (each writes only its own results/<area>/<profile>/ folders).
profiles: $(STAMP)
	$(CHECK) config/profiles/pope-captions.yaml config/profiles/trihe-gqa.yaml
	$(CHECK) config/profiles/phd-ccs.yaml
	$(SNAKEMAKE) --configfile config/profiles/pope-captions.yaml -- results/tables/ all
	$(SNAKEMAKE) --configfile config/profiles/trihe-gqa.yaml -- results/tables/ all
	$(SNAKEMAKE) --configfile config/profiles/phd-ccs.yaml -- results/tables/ all

# The paper's LLM-augmented extraction on the first 500 images, beside rule + lexicon on the
# same images (table llm_comparison; about 45 minutes on 2 cores, see README).
llm500: $(STAMP)
	$(CHECK) config/profiles/pope-captions-500.yaml config/profiles/pope-captions-llm500.yaml
	$(SNAKEMAKE) --configfile config/profiles/pope-captions-500.yaml -- results/tables/ all
	$(SNAKEMAKE) --configfile config/profiles/pope-captions-llm500.yaml -- results/tables/ all

# Any one profile of config/profiles/ (`make profile-phd-ccs`): a benchmark's profile needs no
# target of its own.
profile-%: $(STAMP)
	$(CHECK) config/profiles/$*.yaml
	$(SNAKEMAKE) --configfile config/profiles/$*.yaml -- results/tables/ all

# The full report: all four profiles, then the paper with all four sections.
report-full: profiles paper

dvc-yaml: $(STAMP)
	$(BIN)/python scripts/write_dvc_yaml.py

bench: $(STAMP)  # bench_chair and bench_profiles need ../shared/data (or a mirror)
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python timings/bench_caos.py
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python timings/bench_paper_scale.py
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python timings/bench_pipeline.py
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python timings/bench_backends.py
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python timings/bench_chair.py
	PATH="$(abspath $(BIN)):$$PATH" $(BIN)/python timings/bench_profiles.py

clean:
	rm -rf results logs .snakemake
