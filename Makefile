# Two commands: `make demo` and `make test` (both set up everything first, idempotently).
SHELL := /bin/bash
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
APT_PACKAGES := xvfb xauth openbox xdotool x11-utils x11-xserver-utils dbus dbus-x11 at-spi2-core \
	python3-pyatspi gir1.2-atspi-2.0 chromium mousepad galculator featherpad gnome-calculator fonts-dejavu-core fonts-liberation2 \
	fonts-noto-cjk tesseract-ocr tesseract-ocr-eng shellcheck iproute2 libgl1 libglib2.0-0 python3-venv \
	x11vnc websockify novnc xtightvncviewer \
	ffmpeg graphviz mmdebstrap qemu-system-x86 qemu-utils e2fsprogs openssh-client wordnet-base
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: setup apt venv demo test bench train-detector lint clean osworld-golden osworld-apps

# OSWorld's apps (issue 20): ~140 packages, ~370 MB to download, ~1.2 GB installed (apt-get install -s),
# so not in APT_PACKAGES; tasks needing them report `needs-app APP` until `make osworld-apps` ran.
OSWORLD_APT := libreoffice-calc libreoffice-writer libreoffice-impress libreoffice-gtk3 gimp vlc thunderbird

setup: apt venv

apt:
	@missing=$$(dpkg-query -W -f='$${Package} $${Status}\n' $(APT_PACKAGES) 2>/dev/null | grep -v 'install ok installed' | cut -d' ' -f1; \
	  for p in $(APT_PACKAGES); do dpkg-query -W $$p >/dev/null 2>&1 || echo $$p; done); \
	missing=$$(echo $$missing | tr ' ' '\n' | sort -u | tr '\n' ' '); \
	if [ -n "$${missing// /}" ]; then \
	  echo "apt: installing $$missing"; \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing; \
	else echo "apt: all packages present"; fi

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check -e '.[dev,osworld]'
	@touch $@

demo: setup
	$(BIN)/cua demo

test: setup
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q tests

bench: setup
	@for b in benchmarks/*_bench.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done
	$(BIN)/python scripts/bench_table.py

train-detector: setup
	$(BIN)/pip install -q --disable-pip-version-check -e '.[dev,train]'
	$(BIN)/python -m cua.perception.detect_train

# OSWorld's reference metrics (desktop-env, no deps) in a throwaway venv -> tests/osworld/golden.jsonl
GOLDEN_VENV := build/osworld-golden-venv
osworld-apps:
	@SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $(OSWORLD_APT)

osworld-golden:
	@test -x $(GOLDEN_VENV)/bin/python || $(PY) -m venv $(GOLDEN_VENV)
	$(GOLDEN_VENV)/bin/pip install -q --disable-pip-version-check --no-deps desktop-env==1.0.2
	$(GOLDEN_VENV)/bin/pip install -q --disable-pip-version-check openpyxl pandas python-docx python-pptx \
	  pdfplumber pypdf PyPDF2 rapidfuzz imagehash scikit-image lxml cssselect beautifulsoup4 xmltodict \
	  tldextract formulas pymupdf mutagen odfpy opencv-python-headless pyyaml numpy scipy fastdtw librosa
	$(GOLDEN_VENV)/bin/python scripts/osworld_golden.py

lint: setup
	$(BIN)/ruff check cua skills recorder vm tests benchmarks
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
