"""Stage 1, submission: from what a student handed in (a .py file, a notebook, a folder) to Python source and the
name of its entry point, read and never run."""
