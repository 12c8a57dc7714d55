"""Agents that play Rook from their own observation (see agents/base.py)."""
