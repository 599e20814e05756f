# Two commands do all the set-up on a fresh clone: `make grade` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: grade test bench clean

# torch==2.13.0 first: it is the CPU wheel on these machines' disk; a bare `torch` would pull a CUDA build.
$(STAMP): pyproject.toml setup.py attention_grader.pth
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dask,jupyter,test,courses]'  # the extras: `make test` runs the Dask back end and a real Jupyter kernel too
	touch $(STAMP)

# every bundled rubric grades the sample folder of the same name
grade: $(STAMP)
	@set -e; for r in rubrics/*.toml; do n=$$(basename $$r .toml); \
	  if [ -d submissions/$$n ]; then echo "== $$n"; $(VENV)/bin/attention-grader grade submissions/$$n --rubric $$n --out grades/$$n; fi; \
	done

# one pytest process per core; worksteal hands out contiguous runs of tests, so a sample graded for one test is
# mostly graded in the process that asks for it again (conftest's grade_of)
# compileall first: the suite starts hundreds of Python processes, and where PYTHONDONTWRITEBYTECODE is set (as it is
# on these machines) each of them would compile the grader's sources again
test: $(STAMP)
	$(PY) -m compileall -q grader tests
	$(VENV)/bin/pytest -q -n auto --dist worksteal

bench: $(STAMP)
	$(PY) benchmarks/bench.py

clean:
	rm -rf $(VENV) grades *.egg-info
