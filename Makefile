# Two entry points that work on a fresh clone: `make demo` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.memplan-installed

.PHONY: demo test test-slow bench venv clean compat

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/memplan analyze fixtures/models/gpt2.py --batch-size 4 --seq-len 256 --device 910B3

test: $(STAMP)
	$(PY) -m pytest -q -n auto

test-slow: $(STAMP)
	$(PY) -m pytest -q -n auto -m slow

clean:
	rm -rf $(VENV) build *.egg-info

# Slow, never part of `make test`: one venv per torch version that torch_npu ships for (outside the
# repository, COMPAT_VENVS=/work/venvs by default), then the fixed check set in each.
compat: $(STAMP)
	bash benchmarks/compat_envs.sh
	$(PY) benchmarks/compat.py --pinned $(VENV) --unseen $(UNSEEN)
