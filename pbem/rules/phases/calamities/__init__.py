"""Phases 8 and 9: calamities (`selection`, `resolution`), one module or package per family of calamities.

`choosing` is the package's own bottom; a family never imports another.
"""
