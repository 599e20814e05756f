"""`python -m grader.sandbox.worker.walls ARGS`: the walls probe in a throwaway process (`confinement` runs it), so
that the walls it raises for real stay out of the grader; its answer is one JSON line on stdout."""

import json
import sys

from grader.sandbox.worker.walls.probe import probe

print(json.dumps(probe(**json.loads(sys.argv[1]))))
