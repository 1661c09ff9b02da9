# PhysKey — the two commands: `make demo` and `make test`. Everything else they need is installed here.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv demo test lint bench extension clean

venv: $(STAMP)

$(STAMP): requirements.txt
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; PhysKey needs Python 3.11 (bpy 5.0.1 is cp311 only)"; exit 2; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# The main job: build the extension, install it into a sandboxed Blender (bpy), load the armchair
# stand-sit-stand preset, solve it with 3 seeds, keep the best, save out/demo.blend, render
# out/demo.mp4 and out/demo_contact_sheet.png.
demo: venv
	$(PY) tools/demo.py

test: venv lint
	$(PY) -m pytest -q tests

# The project's own lint rules (pyproject.toml [tool.ruff]); part of `make test`.
lint: venv
	$(PY) -m ruff check .

# The Blender extension zip, built and validated with Blender's own tool (wheels cached in .cache/).
extension: venv
	$(PY) tools/build_extension.py

bench: venv
	$(PY) -m solver bench rollout --json

clean:
	rm -rf out dist build .pytest_cache
