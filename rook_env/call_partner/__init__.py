"""``rook_env.call_partner``: the public name of call-your-partner Rook (:mod:`rook_env.games.call_partner`).

``rook_env.call_partner.env(players=5)`` / ``raw_env(...)`` and the names below are that package's.
"""

from rook_env.games.call_partner import *  # noqa: F401,F403
from rook_env.games.call_partner import __all__  # noqa: F401
