# HOSTILE (garbage return): returns an object on which every attribute access, str() and repr() raises, even
# __class__. Expected: `output_shape` fails with the error, the worker and the grader carry on.
class Booby:
    def __getattribute__(self, name):
        raise RuntimeError(f"no {name} for you")

    def __str__(self):
        raise RuntimeError("no str")

    def __repr__(self):
        raise RuntimeError("no repr")


def scaled_dot_product_attention(q, k, v, causal: bool = True):
    return Booby()
