"""The order language: one order per line, short verbs, forgiving names."""

from .language import Actor, OrderLine, Orders, canonical, parse_orders

__all__ = ["Actor", "OrderLine", "Orders", "canonical", "parse_orders"]
