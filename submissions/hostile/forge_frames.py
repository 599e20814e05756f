# HOSTILE: talks to the grader itself: on the first call it writes a forged reply frame straight into the
# worker's socket, announcing a 1 TB payload, then waits. Expected: `output_shape` fails ("broke the protocol"),
# the grader allocates nothing and carries on.
import os
import socket
import struct
import time


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    for fd in range(3, 64):
        try:
            s = socket.socket(fileno=os.dup(fd))
        except OSError:
            continue
        try:
            s.sendall(struct.pack("!IQ", 2, 1 << 40) + b"{}")
        except OSError:
            pass
    time.sleep(3600)
