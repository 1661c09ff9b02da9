# PhysKey — the two commands: `make demo` and `make test`. Everything else they need is installed here.
PYTHON ?= python3.11
# Blender 5.1 and later are Python 3.13 (bpy cp313): pyenv's interpreter where the machine has one.
PYTHON313 ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.13*/bin/python3.13) python3.13)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

# The other Blenders the end-to-end tests run on, each a bpy from PyPI in a venv of its own: the oldest
# the manifest claims (4.2 LTS, no slotted actions), the last 4.x (4.5 LTS, both action APIs) and the
# newest (Python 3.13). Blender 5.0.1 is the main venv's.
OTHER_BLENDERS := 4.2.23 4.5.15 5.2.3
BLENDER_VENVS := $(foreach v,$(OTHER_BLENDERS),.venv-blender-$(v)/.installed)
# The test files that drive Blender through the installed extension; on the other Blenders only their
# tests marked `every_blender` run (what differs by version: install, Action APIs, UI, Rigify, geometry).
BLENDER_TESTS := tests/test_extension.py tests/test_solve.py tests/test_own_rig.py \
  tests/test_bake.py tests/test_no_data_lost.py tests/test_panels.py tests/test_presets.py tests/test_contact_ui.py \
  tests/test_colliders.py tests/test_import_mjcf.py tests/test_rig.py tests/test_rig_custom.py \
  tests/test_joint_limits.py tests/test_ghosts.py tests/test_solve_from_here.py tests/test_end_to_end.py \
  tests/test_hits.py tests/test_live_preview.py

.PHONY: venv blenders demo test lint bench extension clean

venv: $(STAMP)

$(STAMP): requirements.txt
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; PhysKey needs Python 3.11 (bpy 5.0.1 is cp311 only)"; exit 2; }
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

blenders: $(BLENDER_VENVS)

# bpy 4.x wheels are cp311; 5.1+ cp313. numpy as the Blender bundles it (1.26 up to 5.0).
.venv-blender-%/.installed: Makefile
	@case "$*" in 4.*|5.0.*) py="$(PYTHON)"; np="numpy==1.26.4";; *) py="$(PYTHON313)"; np="numpy";; esac; \
	command -v $$py >/dev/null || { echo "error: $$py not found; bpy $* needs it (pyenv install 3.13)"; exit 2; }; \
	test -x .venv-blender-$*/bin/python || $$py -m venv .venv-blender-$*; \
	.venv-blender-$*/bin/python -m pip install --quiet --upgrade pip && \
	.venv-blender-$*/bin/python -m pip install --quiet "bpy==$*" "$$np" mujoco==4.0.0 pytest==9.0.3 pytest-xdist==3.8.0
	touch $@

# The main job: build the extension, install it into a sandboxed Blender (bpy), load the armchair
# stand-sit-stand preset, solve it with 3 seeds, keep the best, save out/demo.blend, render
# out/demo.mp4 and out/demo_contact_sheet.png.
demo: venv
	$(PY) tools/demo.py

# The whole suite on Blender 5.0, then the tests marked `every_blender` on each of the other Blenders;
# each run spread over the machine's cores (pytest-xdist), a test file's tests on one of them (its
# module fixtures made once).
TEST_WORKERS ?= auto
XDIST := -n $(TEST_WORKERS) --dist loadfile
test: venv lint blenders
	$(PY) -m pytest -q $(XDIST) --durations=15 tests
	@for v in $(OTHER_BLENDERS); do \
	  echo "== the Blender tests on Blender $$v"; \
	  .venv-blender-$$v/bin/python -m pytest -q -p no:cacheprovider $(XDIST) -m every_blender $(BLENDER_TESTS) \
	    || exit $$?; \
	done

# The project's own lint rules (pyproject.toml [tool.ruff]); part of `make test`.
lint: venv
	$(PY) -m ruff check .

# The Blender extension zip, built and validated with Blender's own tool (wheels cached in .cache/).
extension: venv
	$(PY) tools/build_extension.py

bench: venv
	$(PY) -m benchmarks.bench rollout --json

clean:
	rm -rf out dist build .pytest_cache .venv-blender-*
