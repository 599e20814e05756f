# HOSTILE (garbage return): returns None. Expected: `output_shape` fails ("returned NoneType"), the rest skipped.
def scaled_dot_product_attention(q, k, v, causal: bool = True):
    return None
