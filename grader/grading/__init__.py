"""Stage 4, grading: a rubric (data) says which checks count for how much; the engine runs them in dependency
order against one submission and names the likely mistake; the result is a `Grade`, words left to the reports."""

DEFAULT_RUBRIC = "chapter5"  # the rubric every command grades with when none is named (kept import-free here)
