"""Alignment variants: one module each, behind one contract (see registry.py)."""
from .registry import (REGISTRY, VariantInfo, can_run, cuda_available, get_variant,  # noqa: F401
                       list_variants, pick_auto, register)
