"""The untrusted side of the boundary: what runs in a worker process, beside the student's code. It imports
torch and nothing secret (no reference, no rubric), and decides no verdict."""
