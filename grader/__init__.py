"""attention-grader. In IPython or Jupyter, `%load_ext grader` adds `%attention_check`; `grader.check()` does the same
from code. Both import the grader only when called."""


def load_ipython_extension(ipython) -> None:
    from grader.frontends import jupyter

    jupyter.load(ipython)


def check(rubric: str | None = None):
    """Grade the cells of this notebook run so far; the report shows inline (see grader.frontends.jupyter)."""
    from grader.frontends import jupyter

    return jupyter.check(rubric)
