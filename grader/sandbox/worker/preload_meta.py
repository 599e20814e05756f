"""Preloaded into the fork server when many workers will be forked from it (batch grading, the test suite): they
then inherit torch's meta kernels already imported, instead of each importing them."""

from grader.sandbox.worker import warm

warm.warm_meta()
