# HOSTILE: writes to file descriptor 1 without end and does not catch the error when the output is full.
# Expected: `loads` fails with "output too large".
import os

while True:
    os.write(1, b"y" * (1 << 20))


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    return q, q
