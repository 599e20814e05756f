# HOSTILE: an hour inside a C call (no Python bytecode runs, so no Python-level timer can interrupt it).
# Expected: `output_shape` fails ("timed out after N s").
import time


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    time.sleep(3600)
