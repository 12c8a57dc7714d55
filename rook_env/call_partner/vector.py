"""Call-your-partner's batched engine, :class:`rook_env.vector.call_partner.CallPartnerVectorEnv`
(``RookVectorEnv(num_envs, game="call_partner", ...)``); this path is kept for existing imports."""

from __future__ import annotations

from ..vector.call_partner import CallPartnerVectorEnv

__all__ = ["CallPartnerVectorEnv"]
