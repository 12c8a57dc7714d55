"""The table drawn as an image: ``render_mode="rgb_array"`` (numpy ``uint8``, H x W x 3).

A drawing module: it knows cards and a :class:`Scene` (plain data: what is on the table, per
absolute seat), not the rules of any game. :func:`draw_scene` draws a scene: seats around an
ellipse (any number of seats; the viewer at the bottom, play going clockwise: left, across, right),
the current trick in the middle; with fixed teams the auction, contract and trump top left,
counters, tricks and scores top right, the nest bottom left, the last trick bottom right; without
(call-your-partner, 4 to 6 seats) a side panel with the same and per-seat figures. Cards are filled
with their colour (red, yellow, green, black) with the rank large; the Rook Bird is white with a
blue bird mark.

The scenes of a game's states and observations are built in :mod:`rook_env.core.render`
(:func:`~rook_env.core.render.spectator_scene`, :func:`~rook_env.core.render.seat_scene`), which also
draws them: :func:`~rook_env.core.render.draw_table` (the spectator view, what ``env.render()`` returns
with ``rgb_array``) and :func:`~rook_env.core.render.draw_seat_view` (what one seat may know). The
command line that writes a PNG is :mod:`rook_env.cli.render_image`.

Pillow is an optional extra: ``pip install "rook_env[render]"``. Importing this module works
without it; drawing raises :class:`RenderDependencyError` naming the extra.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Sequence

import numpy as np
from gymnasium.error import DependencyNotInstalled

from .deck import COLOUR_NAMES, DeckLayout as Layout
from .optional import MissingDependency, require

INSTALL_HINT = 'pip install "rook_env[render]"'

# Canvas and card geometry (pixels).
WIDTH, HEIGHT = 1000, 700
CARD_W, CARD_H = 40, 56  # a card in a hand
CARD_STEP = 34  # widest step between the cards of a hand; it shrinks to fit the box (14 cards: 13 * 21 + 40)
TRICK_W, TRICK_H = 50, 70  # a card of the current trick
SMALL_W, SMALL_H = 30, 42  # nest, discards, last trick
SEAT_W, SEAT_H = 330, 96  # a seat's box: name line + hand row
# Tables without fixed teams (call-your-partner, 4 to 6 seats): the table on the left, a side panel
# with the auction, contract, call and per-seat figures on the right (1000 + 344 = 1344; multiples
# of 16 for video encoders).
PANEL_WIDTH, PANEL_HEIGHT = 1344, 768
TABLE_W = 1000  # the table's part of that canvas
PANEL_SEAT_W = 360  # wider seat boxes: a bidder may hold 18 cards
ROOK_FACE = (250, 250, 245)

BG = (22, 92, 52)  # the cloth
BOX = (14, 66, 36)
TEXT = (240, 240, 230)
DIM = (170, 200, 175)
HIGHLIGHT = (255, 215, 64)  # the seat to act
CARD_EDGE = (225, 225, 225)  # light, so overlapped black cards stay apart
BACK = (40, 60, 140)
BACK_LINE = (90, 115, 200)
ROOK_BLUE = (30, 110, 200)
# Card faces: (fill, rank text) per colour id; chosen so the rank reads at a glance on each fill.
FACE = {
    0: ((205, 35, 40), (255, 255, 255)),  # red
    1: ((250, 200, 30), (20, 20, 20)),  # yellow
    2: ((30, 150, 70), (255, 255, 255)),  # green
    3: ((25, 25, 25), (255, 255, 255)),  # black
}
SWATCH = {c: FACE[c][0] for c in FACE}
SECRET = (255, 140, 200)  # a partner only the spectator knows of


@dataclass(frozen=True)
class Geometry:
    """Where things go: the canvas, the table's part of it, the seat boxes, the ring of the trick."""

    width: int
    height: int
    table_w: int  # the table's width (the whole canvas, or the part left of the side panel)
    seat_w: int
    ring: tuple[int, int]  # the trick's ring: (x, y) radii


CORNERS = Geometry(WIDTH, HEIGHT, WIDTH, SEAT_W, (150, 115))  # fixed teams: the figures in the corners
PANEL = Geometry(PANEL_WIDTH, PANEL_HEIGHT, TABLE_W, PANEL_SEAT_W, (130, 105))  # no teams: a side panel


def geometry(scene: "Scene") -> Geometry:
    """The layout of a scene: corners for fixed teams, a side panel otherwise."""
    return CORNERS if scene.teams else PANEL


class RenderDependencyError(DependencyNotInstalled, ImportError):
    """Pillow is missing (gymnasium's error for a missing render dependency, and an ``ImportError``)."""


def require_pillow() -> Any:
    """The ``PIL`` modules used here; raises :class:`RenderDependencyError` naming the extra when missing."""
    try:
        require("PIL")  # the package first: a submodule imported before would hide its absence
        return require("PIL.Image"), require("PIL.ImageDraw"), require("PIL.ImageFont")
    except MissingDependency as exc:
        raise RenderDependencyError(
            f"render_mode='rgb_array' draws with Pillow, which is not installed; run: {INSTALL_HINT}"
        ) from exc


@lru_cache(maxsize=None)
def _font(size: int) -> Any:
    _, _, ImageFont = require_pillow()
    try:
        return ImageFont.load_default(size=size)  # Pillow >= 10.1 with FreeType: no font files needed
    except TypeError:  # older Pillow: the fixed bitmap font
        return ImageFont.load_default()


# ------------------------------------------------------------------------------------ the scene
@dataclass
class Scene:
    """What is on the table, per absolute seat. A hand is a list of card ids (face up) or an int
    (that many backs); the nest and discards are card lists, an int (backs) or None (not shown)."""

    layout: Layout
    n_seats: int
    bottom: int  # the seat drawn at the bottom (the viewer)
    title: str
    phase: str
    to_act: int | None
    dealer: int
    hands: list[list[int] | int]
    auction: list[tuple[int, str]]  # (seat, "pass" / "85" / "redeal") in order, or grouped per seat
    bidder: int | None
    contract: int | None
    trump: int | None
    trick: list[tuple[int, int]]  # (seat, card) in play order
    last_trick: list[tuple[int, int]] | None
    last_winner: int | None
    nest: list[int] | int | None
    nest_label: str
    discards: list[int] | int | None
    nest_has_counters: bool
    counters: list[int]  # per team (0 = seats 0, 2); per seat when ``teams`` is False
    tricks_won: list[int]
    scores: list[int]
    tricks_left: int
    notes: list[str] = field(default_factory=list)
    call: str | None = None  # the named trump call when it is not just a colour: "green low", "no trump high"
    # Tables without fixed teams (call-your-partner): per-seat figures and a side panel instead of
    # the corners, so that five or six seats fit around the table.
    teams: bool = True
    rook: str | None = None  # "high" / "low": the Rook Bird's rank, once chosen
    called: list[int] = field(default_factory=list)  # the called card(s)
    partners: list[int] = field(default_factory=list)  # seats the viewer knows to be the bidder's partners
    secret_partners: list[int] = field(default_factory=list)  # partners not yet revealed (spectator only)
    partners_text: str | None = None  # one line on the partnership ("P3, revealed", "unknown to P1", ...)
    nest_announced: bool = False  # the "nest holds counters" announcement was made (drawn either way)


def seat_centres(n: int, bottom: int = 0, geo: Geometry = CORNERS) -> list[tuple[float, float, float]]:
    """(x, y, angle) of each absolute seat's box centre: seats on an ellipse, ``bottom`` at the
    bottom and play going clockwise (the next seat on the viewer's left)."""
    cx, cy = geo.table_w / 2, geo.height / 2
    rx, ry = geo.table_w / 2 - geo.seat_w / 2 - 5, geo.height / 2 - SEAT_H / 2 - 22
    out = []
    for s in range(n):
        ang = math.pi / 2 + 2 * math.pi * ((s - bottom) % n) / n
        out.append((cx + rx * math.cos(ang), cy + ry * math.sin(ang), ang))
    return out


def draw_scene(scene: Scene) -> np.ndarray:
    """Draw a :class:`Scene` as an (H, W, 3) ``uint8`` array (:func:`geometry` gives its size)."""
    Image, ImageDraw, _ = require_pillow()
    geo = geometry(scene)
    img = Image.new("RGB", (geo.width, geo.height), BG)
    d = ImageDraw.Draw(img)
    centres = seat_centres(scene.n_seats, scene.bottom, geo)
    _draw_seats(d, scene, centres, geo.seat_w)
    _draw_trick(d, scene, centres, geo)
    if scene.teams:
        _draw_corners(d, scene)
    else:
        _draw_panel(d, scene, geo)
    return np.asarray(img, dtype=np.uint8).copy()


def _draw_seats(d: Any, scene: Scene, centres: list[tuple[float, float, float]], seat_w: int) -> None:
    """Each seat: a box with the name line (seat, team or role, dealer, bidder, to act) and the hand."""
    L = scene.layout
    f_small, f_mid = _font(13), _font(15)
    for s, (x, y, _ang) in enumerate(centres):
        x0, y0 = int(x - seat_w / 2), int(y - SEAT_H / 2)
        acting = scene.to_act == s
        d.rounded_rectangle((x0, y0, x0 + seat_w, y0 + SEAT_H), 8, fill=BOX,
                            outline=HIGHLIGHT if acting else BOX, width=3)
        tags = [f"P{s}", f"team {s & 1}"] if scene.teams else [f"P{s}"]
        if s == scene.dealer:
            tags.append("dealer")
        if s == scene.bidder:
            tags.append(f"bidder {scene.contract}")
        if s in scene.partners:
            tags.append("partner")
        if acting:
            tags.append("to act")
        line = "  ".join(tags)
        d.text((x0 + 8, y0 + 5), line, font=f_mid, fill=HIGHLIGHT if acting else TEXT)
        if s in scene.secret_partners:  # spectator information, in its own colour
            d.text((x0 + 8 + d.textlength(line + "  ", font=f_mid), y0 + 5), "secret partner", font=f_mid,
                   fill=SECRET)
        hand = scene.hands[s]
        count = hand if isinstance(hand, int) else len(hand)
        d.text((x0 + seat_w - 8, y0 + 6), f"{count} cards", font=f_small, fill=DIM, anchor="ra")
        step = min(CARD_STEP, (seat_w - 16 - CARD_W) // max(1, count - 1))
        row_w = (count - 1) * step + CARD_W if count else 0
        cx0, cy0 = int(x - row_w / 2), y0 + 30
        for i in range(count):
            pos = (cx0 + i * step, cy0)
            if isinstance(hand, int):
                _card_back(d, pos, CARD_W, CARD_H)
            else:
                _card(d, L, hand[i], pos, CARD_W, CARD_H)


def _draw_trick(d: Any, scene: Scene, centres: list[tuple[float, float, float]], geo: Geometry) -> None:
    """The current trick in the middle, each card pushed toward the seat that played it."""
    mx, my = geo.table_w / 2, geo.height / 2
    rx, ry = geo.ring
    d.ellipse((mx - rx, my - ry, mx + rx, my + ry), outline=(40, 120, 72), width=2)
    for s, c in scene.trick:
        ang = centres[s][2]
        px, py = mx + 62 * math.cos(ang) - TRICK_W / 2, my + 52 * math.sin(ang) - TRICK_H / 2
        _card(d, scene.layout, c, (int(px), int(py)), TRICK_W, TRICK_H)
    if not scene.trick:
        word = {"bid": "bidding", "discard": "discarding", "trump": "naming trump", "rook": "ranking the Rook",
                "call": "calling a partner", "over": "hand over"}
        d.text((mx, my), word.get(scene.phase, "next trick"), font=_font(18), fill=DIM, anchor="mm")


def _auction_lines(scene: Scene) -> list[str]:
    """One line per seat with its bids and passes, then the (high) bid."""
    per_seat: dict[int, list[str]] = {}
    for s, word in scene.auction:
        per_seat.setdefault(s, []).append(word)
    lines = [f"P{s}: {' '.join(per_seat.get(s, [])) or '-'}" for s in range(scene.n_seats)]
    if scene.contract is not None:
        verb = "high bid" if scene.phase == "bid" else "contract"
        lines.append(f"{verb}: {scene.contract} by P{scene.bidder}")
    return lines


def _trump_swatch(d: Any, trump: int, x: int, y: int) -> None:
    f_mid = _font(15)
    d.text((x, y + 2), "trump:", font=f_mid, fill=TEXT)
    d.rounded_rectangle((x + 60, y, x + 160, y + 22), 5, fill=SWATCH[trump], outline=TEXT)
    d.text((x + 110, y + 11), COLOUR_NAMES[trump], font=f_mid, fill=FACE[trump][1], anchor="mm")


def _draw_corners(d: Any, scene: Scene) -> None:
    """Fixed teams, four seats: the auction, contract and trump top left; counters, tricks and
    scores per team top right; the nest and discards bottom left; the last trick bottom right."""
    L = scene.layout
    f_small, f_mid, f_big = _font(13), _font(15), _font(18)
    lines = [(scene.title, f_big, TEXT), (f"phase: {scene.phase}", f_mid, TEXT)]
    lines += [(text, f_mid, TEXT) for text in _auction_lines(scene)]
    y = 8
    for text, font, col in lines:
        d.text((10, y), text, font=font, fill=col)
        y += font.size + 5 if hasattr(font, "size") else 16
    if scene.trump is not None:
        _trump_swatch(d, scene.trump, 10, y)
        y += 28
    if scene.call and (scene.trump is None or scene.call != COLOUR_NAMES[scene.trump]):  # low / no-trump calls
        d.text((10, y), f"call: {scene.call}", font=f_mid, fill=TEXT)
        y += 22
    if scene.nest_has_counters:
        d.text((10, y), "announced: nest holds counters", font=f_small, fill=HIGHLIGHT)

    # Top right: counters, tricks, scores.
    rx = WIDTH - 10
    rows = [
        ("", "team 0", "team 1"),
        ("counters", *map(str, scene.counters)),
        ("tricks", *map(str, scene.tricks_won)),
        ("score", *map(str, scene.scores)),
    ]
    for i, (name, a, b) in enumerate(rows):
        yy = 10 + i * 22
        d.text((rx - 190, yy), name, font=f_mid, fill=DIM)
        d.text((rx - 75, yy), a, font=f_mid, fill=TEXT, anchor="ra")
        d.text((rx, yy), b, font=f_mid, fill=TEXT, anchor="ra")
    d.text((rx, 10 + 4 * 22), f"tricks left: {scene.tricks_left}", font=f_small, fill=DIM, anchor="ra")

    # Bottom left: the nest (and the discards). Bottom right: the last trick.
    y = HEIGHT - 2 * (SMALL_H + 22) - 4
    for label, cards in ((scene.nest_label, scene.nest), ("discards", scene.discards)):
        if cards is None:
            continue
        d.text((10, y), label, font=f_small, fill=DIM)
        _small_row(d, L, cards, 10, y + 17)
        y += SMALL_H + 22
    if scene.last_trick:
        x0 = WIDTH - 10 - (len(scene.last_trick) * (SMALL_W + 4))
        y = HEIGHT - SMALL_H - 26
        d.text((x0, y - 2), f"last trick, won by P{scene.last_winner}", font=f_small, fill=DIM)
        for i, (s, c) in enumerate(scene.last_trick):
            _card(d, L, c, (x0 + i * (SMALL_W + 4), y + 16), SMALL_W, SMALL_H)
    for i, note in enumerate(scene.notes):
        d.text((WIDTH / 2, HEIGHT - 14 - 16 * i), note, font=f_small, fill=HIGHLIGHT, anchor="mm")


def _draw_panel(d: Any, scene: Scene, geo: Geometry) -> None:
    """No fixed teams (4 to 6 seats): everything but the seats and the trick in a side panel, top
    to bottom: the view, phase and dealer; the auction; contract, trump, the Rook's rank; the
    called card(s) and what the viewer knows of the partners; the nest announcement; points,
    tricks and scores per seat; the nest and discards; the last trick; notes."""
    L = scene.layout
    f_small, f_mid, f_big = _font(13), _font(15), _font(18)
    x0 = geo.table_w + 8
    d.rounded_rectangle((geo.table_w, 6, geo.width - 6, geo.height - 6), 10, fill=BOX)
    y = 14
    d.text((x0 + 6, y), scene.title, font=f_big, fill=TEXT)
    y += 24
    d.text((x0 + 6, y), f"phase: {scene.phase}    dealer: P{scene.dealer}", font=f_mid, fill=TEXT)
    y += 24
    for text in _auction_lines(scene):
        d.text((x0 + 6, y), text, font=f_mid, fill=TEXT)
        y += 19
    y += 4
    if scene.trump is not None:
        _trump_swatch(d, scene.trump, x0 + 6, y)
        if scene.rook is not None:
            d.text((x0 + 180, y + 2), f"Rook {scene.rook}", font=f_mid, fill=TEXT)
        y += 28
    if scene.called:
        d.text((x0 + 6, y + 12), "called:", font=f_mid, fill=TEXT)
        for i, c in enumerate(scene.called):
            _card(d, L, c, (x0 + 70 + i * (SMALL_W + 4), y), SMALL_W, SMALL_H)
        y += SMALL_H + 6
    if scene.partners_text:
        col = SECRET if scene.secret_partners else TEXT
        d.text((x0 + 6, y), f"partners: {scene.partners_text}", font=f_mid, fill=col)
        y += 22
    if scene.nest_announced:
        word = "holds" if scene.nest_has_counters else "holds no"
        d.text((x0 + 6, y), f"announced: the nest {word} counters", font=f_small,
               fill=HIGHLIGHT if scene.nest_has_counters else DIM)
        y += 20
    # Per seat: points taken, tricks, game score.
    y += 4
    cols = ((x0 + 150, "points"), (x0 + 225, "tricks"), (x0 + 310, "score"))
    for x, name in cols:
        d.text((x, y), name, font=f_small, fill=DIM, anchor="ra")
    y += 18
    for s in range(scene.n_seats):
        d.text((x0 + 6, y), f"P{s}", font=f_mid, fill=TEXT)
        for (x, _), value in zip(cols, (scene.counters[s], scene.tricks_won[s], scene.scores[s])):
            d.text((x, y), str(value), font=f_mid, fill=TEXT, anchor="ra")
        y += 19
    d.text((x0 + 6, y), f"tricks left: {scene.tricks_left}", font=f_small, fill=DIM)
    y += 22
    for label, cards in ((scene.nest_label, scene.nest), ("discards", scene.discards)):
        if cards is None:
            continue
        d.text((x0 + 6, y), label, font=f_small, fill=DIM)
        _small_row(d, L, cards, x0 + 6, y + 17)
        y += SMALL_H + 22
    if scene.last_trick:
        d.text((x0 + 6, y), f"last trick, won by P{scene.last_winner}", font=f_small, fill=DIM)
        for i, (s, c) in enumerate(scene.last_trick):
            _card(d, L, c, (x0 + 6 + i * (SMALL_W + 4), y + 17), SMALL_W, SMALL_H)
        y += SMALL_H + 22
    for note in scene.notes:
        d.text((x0 + 6, y), note, font=f_small, fill=HIGHLIGHT)
        y += 16


def _small_row(d: Any, L: Layout, cards: Sequence[int] | int, x: int, y: int) -> None:
    n = cards if isinstance(cards, int) else len(cards)
    for i in range(n):
        pos = (x + i * (SMALL_W + 3), y)
        if isinstance(cards, int):
            _card_back(d, pos, SMALL_W, SMALL_H)
        else:
            _card(d, L, cards[i], pos, SMALL_W, SMALL_H)


def _card(d: Any, L: Layout, card: int, pos: tuple[int, int], w: int, h: int) -> None:
    x, y = pos
    size = max(11, int(h * 0.3))  # "14" stays inside the visible strip of an overlapped card
    if card == L.rook:
        d.rounded_rectangle((x, y, x + w, y + h), 4, fill=ROOK_FACE, outline=ROOK_BLUE, width=2)
        # A bird mark: body, head and beak, then the word.
        bx, by = x + w * 0.55, y + h * 0.62
        r = w * 0.2
        d.ellipse((bx - r, by - r * 0.75, bx + r, by + r * 0.75), fill=ROOK_BLUE)
        d.ellipse((bx + r * 0.5, by - r * 1.5, bx + r * 1.3, by - r * 0.7), fill=ROOK_BLUE)
        d.polygon([(bx + r * 1.25, by - r * 1.2), (bx + r * 1.8, by - r * 1.05), (bx + r * 1.25, by - r * 0.9)],
                  fill=(230, 150, 20))
        d.text((x + w / 2, y + 3), "ROOK", font=_font(max(9, int(w * 0.27))), fill=ROOK_BLUE, anchor="ma")
        return
    fill, ink = FACE[L.card_colour[card]]
    d.rounded_rectangle((x, y, x + w, y + h), 4, fill=fill, outline=CARD_EDGE, width=1)
    d.text((x + 3, y + 2), str(L.card_rank[card]), font=_font(size), fill=ink)
    if L.card_points[card]:  # counters get a dot (bottom left: visible on an overlapped card)
        r = max(2, w // 12)
        d.ellipse((x + 4, y + h - 4 - 2 * r, x + 4 + 2 * r, y + h - 4), fill=ink)


def _card_back(d: Any, pos: tuple[int, int], w: int, h: int) -> None:
    x, y = pos
    d.rounded_rectangle((x, y, x + w, y + h), 4, fill=BACK, outline=(230, 230, 230), width=1)
    d.rounded_rectangle((x + 4, y + 4, x + w - 4, y + h - 4), 3, outline=BACK_LINE, width=1)
