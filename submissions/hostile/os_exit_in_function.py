# HOSTILE: os._exit(0) inside the function: the worker vanishes mid-call with a "success" status.
# Expected: `output_shape` fails ("exited with status 0 ... while calling your function"), the rest skipped.
import os


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    os._exit(0)
