"""Agents that play Rook from their own observation (see agents/base.py)."""

from .base import Agent, legal_from, make_agent
from .random_agent import RandomAgent

__all__ = ["Agent", "RandomAgent", "legal_from", "make_agent"]
