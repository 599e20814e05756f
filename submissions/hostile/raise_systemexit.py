# HOSTILE: raises SystemExit inside the function (a naive grader in the same process would stop).
# Expected: `output_shape` fails ("called sys.exit(3)"), the rest skipped.
def scaled_dot_product_attention(q, k, v, causal: bool = True):
    raise SystemExit(3)
