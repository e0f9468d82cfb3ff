"""Alignment variants: one module each, behind one contract (see registry.py)."""
from .registry import REGISTRY, VariantInfo, get_variant, list_variants, pick_auto  # noqa: F401
