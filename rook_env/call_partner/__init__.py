"""Call-your-partner Rook for 4, 5 or 6 players (RULES.md section C)."""
