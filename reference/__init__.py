"""Reference implementations of the graded exercises. Imported only by the grader process, never by workers."""
