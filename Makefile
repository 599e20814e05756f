# Two commands do all the set-up on a fresh clone: `make grade` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: grade test bench clean

# torch==2.13.0 first: it is the CPU wheel on these machines' disk; a bare `torch` would pull a CUDA build.
$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[plots]'
	touch $(STAMP)

grade: $(STAMP)
	$(VENV)/bin/attention-grader grade submissions/chapter5 --rubric chapter5 --out grades/chapter5
	$(VENV)/bin/attention-grader grade submissions/masked_self_attention --rubric masked_self_attention --out grades/masked_self_attention

test: $(STAMP)
	$(VENV)/bin/pytest -q

bench: $(STAMP)
	$(PY) benchmarks/bench_check.py
	$(PY) benchmarks/bench_batch.py

clean:
	rm -rf $(VENV) grades *.egg-info
