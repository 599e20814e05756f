# HOSTILE (garbage return): out transposed, weights of one column. Expected: `output_shape` fails ("has shape").
def scaled_dot_product_attention(q, k, v, causal: bool = True):
    scores = q @ k.transpose(-2, -1)
    return v.transpose(-2, -1), scores[..., :1]
