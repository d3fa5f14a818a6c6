"""Semantics-preserving transformations of benchmark samples (τf, τv, τt) and their checks."""

from srlib.transforms.variants import KINDS, Variant, Variants, make_variants, make_variants_many

__all__ = ["KINDS", "Variant", "Variants", "make_variants", "make_variants_many"]
