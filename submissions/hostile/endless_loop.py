# HOSTILE: never returns. Expected: `output_shape` fails ("timed out after N s"), the rest skipped.
def scaled_dot_product_attention(q, k, v, causal: bool = True):
    while True:
        pass
