# HOSTILE: raises KeyboardInterrupt inside the function (pytest would take it for Ctrl-C and stop the session).
# Expected: `output_shape` fails ("KeyboardInterrupt"), the rest skipped, pytest finishes normally.
def scaled_dot_product_attention(q, k, v, causal: bool = True):
    raise KeyboardInterrupt
