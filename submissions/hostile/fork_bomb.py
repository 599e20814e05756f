# HOSTILE: a fork bomb while the file loads: every process forks forever, ignoring failures.
# Expected: the process count is capped (the worker's uid has a process limit), `loads` fails ("timed out"),
# the machine stays usable, and afterwards none of its processes is alive (each child's pid is printed).
import os


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    return q, q


while True:
    try:
        pid = os.fork()
    except OSError:
        continue
    if pid:
        try:  # one write, so that lines of many processes never interleave; a full output file is no reason to stop
            os.write(1, f"HOSTILE-PID {pid}\n".encode())
        except OSError:
            pass
