# HOSTILE: os._exit(3) while the file is being loaded (no exception to catch: the process is gone).
# Expected: `loads` fails ("exited ... during import").
import os

os._exit(3)


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    return q, q
