# HOSTILE (garbage return): returns a string. Expected: `output_shape` fails ("returned str").
def scaled_dot_product_attention(q, k, v, causal: bool = True):
    return "out, weights"
