# HOSTILE: on the first call, starts a grandchild that calls setsid() and sleeps forever, then ends its own worker
# with os._exit(0): the grandchild is an orphan outside the worker's process group and session.
# Expected: `output_shape` fails ("exited with status 0"), and afterwards the grandchild is not alive (it prints
# "HOSTILE-PID <pid>").
import os
import time


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    child = os.fork()
    if child == 0:
        try:
            if os.fork() == 0:
                os.setsid()
                print("HOSTILE-PID", os.getpid(), flush=True)
                while True:
                    time.sleep(60)
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    time.sleep(0.2)  # let the grandchild print
    os._exit(0)
