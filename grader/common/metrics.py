"""The round's metrics as pure functions (docs/architecture.md, "A round"; docs/rules.md §5).

Every function here takes plain numbers and returns plain numbers, so `arena round` and
`arena verify` compute a round's figures with the same code from the same per-game outcomes.
Rates are rounded to `DIGITS` decimals and Elo to one, so a recomputation compares exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

DIGITS = 6
ELO_DIGITS = 1
ELO_SCALE = 400.0
ELO_BASE = 1000.0
# The z of a two-sided 95% interval.
Z95 = 1.959963984540054
ENDINGS = ("no_moves", "turn_limit", "forfeit", "fault")


class MetricError(ValueError):
    """An argument a metric cannot be computed from: `argument` names it (e.g. "checkpoints",
    "p"), `value` is what was given. A results file being verified reaches these functions
    with its own numbers, so this is bad input, not only a caller's bug."""

    def __init__(self, argument: str, value: object, message: str):
        super().__init__(message)
        self.argument, self.value = argument, value


def rnd(x: float) -> float:
    """A rate as stored: rounded to DIGITS decimals (and -0.0 made 0.0)."""
    return round(x, DIGITS) + 0.0


@dataclass(frozen=True)
class Tally:
    """Wins, draws and losses of one side over some games."""

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        """Match points: 1 a win, 1/2 a draw, 0 a loss."""
        return self.wins + 0.5 * self.draws

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.wins + other.wins, self.draws + other.draws, self.losses + other.losses)

    def add(self, result: str) -> Tally:
        """This tally plus one game whose `result` is "win", "draw" or "loss"."""
        if result == "win":
            return Tally(self.wins + 1, self.draws, self.losses)
        if result == "draw":
            return Tally(self.wins, self.draws + 1, self.losses)
        if result == "loss":
            return Tally(self.wins, self.draws, self.losses + 1)
        raise MetricError("result", result, f"a game result is win, draw or loss, got {result!r}")


def win_draw_rates(tally: Tally) -> tuple[float, float]:
    """(win rate, draw rate) of a tally; draws are never folded into the win rate. 0 games -> 0, 0."""
    if tally.games == 0:
        return 0.0, 0.0
    return rnd(tally.wins / tally.games), rnd(tally.draws / tally.games)


@dataclass(frozen=True)
class Sae:
    """Skill-acquisition efficiency over the window [b0, b_max]; `value` is None without a window."""

    value: float | None
    b0: int | None
    b_max: int | None


def sae_window(checkpoints: list[int]) -> tuple[int, int] | None:
    """(b0, b_max): the first and last non-zero checkpoints, or None when there are fewer than two."""
    nonzero = [b for b in checkpoints if b > 0]
    if len(nonzero) < 2:
        return None
    return nonzero[0], nonzero[-1]


def sae(checkpoints: list[int], win_rates: list[float]) -> Sae:
    """Area under win rate over ln(budget) between the first and last non-zero checkpoints
    (trapezoids), divided by ln(b_max / b0). The 0 checkpoint (zero-shot) is outside the window
    because ln 0 is not defined."""
    if len(checkpoints) != len(win_rates):
        raise MetricError("win_rates", win_rates, f"{len(checkpoints)} checkpoints but {len(win_rates)} win rates")
    if any(b >= a for a, b in zip(checkpoints[1:], checkpoints)):
        raise MetricError("checkpoints", checkpoints, f"checkpoints must increase strictly, got {checkpoints}")
    window = sae_window(checkpoints)
    if window is None:
        return Sae(None, None, None)
    b0, b_max = window
    points = [(math.log(b), w) for b, w in zip(checkpoints, win_rates) if b > 0]
    area = sum((x1 - x0) * (y0 + y1) / 2 for (x0, y0), (x1, y1) in zip(points, points[1:]))
    return Sae(rnd(area / math.log(b_max / b0)), b0, b_max)


def mean(values: list[float]) -> float:
    """The arithmetic mean; raises on an empty list (a caller decides what no data means)."""
    if not values:
        raise MetricError("values", values, "mean of no values")
    return math.fsum(values) / len(values)


def spread(values: list[float]) -> float | None:
    """Population standard deviation of per-environment values (robustness); None for none."""
    if not values:
        return None
    m = mean(values)
    return rnd(math.sqrt(math.fsum((v - m) ** 2 for v in values) / len(values)))


def wilson(p: float, n: float, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion `p` observed over `n` trials; None for n = 0.
    `n` may be an effective number of trials (see standing_interval).

    `p` may come from match points (draws are halves), as the comparing-players note does."""
    if n <= 0:
        return None
    if not 0.0 <= p <= 1.0:
        raise MetricError("p", p, f"a proportion lies in [0, 1], got {p}")
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return rnd(max(0.0, centre - half)), rnd(min(1.0, centre + half))


# The standing's interval methods, as a results document names them. "wilson-games" is the
# first arena's (it counted every game, copies of one deterministic game too, as independent
# evidence and ignored which environments were drawn); rounds that carry no method used it.
# "environments-deff" is the second: each environment one observation, but where every
# environment gave the same score (no spread to measure) it fell back to every game, so eight
# scores of 1.0 over 1,120 games gave [0.995, 1.0]. "environments-floor" (the current one)
# counts the environments themselves there: copies of one deterministic game are never evidence.
INTERVAL_WILSON_GAMES = "wilson-games"
INTERVAL_ENVIRONMENTS = "environments-deff"
INTERVAL_ENVIRONMENTS_FLOOR = "environments-floor"
INTERVAL_METHODS = (INTERVAL_WILSON_GAMES, INTERVAL_ENVIRONMENTS, INTERVAL_ENVIRONMENTS_FLOOR)


def _t_abs_cdf(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with integer `df` (Abramowitz & Stegun 26.7.3 and 26.7.4)."""
    theta = math.atan(t / math.sqrt(df))
    s, c = math.sin(theta), math.cos(theta)
    term = acc = 1.0 if df % 2 == 0 else c
    for k in range(2 + df % 2, df - 1, 2):
        term *= c * c * (k - 1) / k
        acc += term
    if df % 2 == 0:
        return s * acc
    return 2 / math.pi * (theta + (s * acc if df > 1 else 0.0))


@cache
def t_quantile(df: int, level: float = 0.95) -> float:
    """The two-sided `level` quantile of Student's t with `df` degrees of freedom (2.364624 for 7)."""
    if df < 1:
        raise MetricError("df", df, f"Student's t needs at least 1 degree of freedom, got {df}")
    lo, hi = 0.0, 1e4
    for _ in range(100):  # bisection: exact to the last digit a rate is stored with, on any host
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _t_abs_cdf(mid, df) < level else (lo, mid)
    return (lo + hi) / 2


def standing_interval(env_scores: list[float], games: int, floor: bool = True) -> tuple[float, float]:
    """The standing's 95% interval, with each environment one observation.

    The standing is a mean over the environments drawn, so its error is the spread of the
    agent's scores across environments over their number; copies of one deterministic game
    move one environment's score once, however many there are. That variance gives an
    effective number of games, p(1 - p) / var (Korn and Graubard's design effect, never more
    than the games played), scaled by (z / t)^2 for the few environments (Student's t with
    n - 1 degrees of freedom); the interval is Wilson's at that effective number, so it stays
    inside [0, 1] and does not collapse at 0 or 1. Fewer than two environments: [0, 1].
    Where the environments show no spread (every score the same, or the standing at 0 or 1)
    there is no variance to turn into games: the environments are the evidence, one
    observation each (`floor`; False gives the "environments-deff" method's fall-back to every
    game, kept so that rounds published with it verify).
    `env_scores` are the environments' scores as published (faulted ones 0); `games` is the
    number of games they stand on."""
    n = len(env_scores)
    if n < 2 or games <= 0:
        return 0.0, 1.0
    p = min(1.0, max(0.0, mean(env_scores)))
    var = math.fsum((s - p) ** 2 for s in env_scores) / (n - 1) / n
    if var > 0 and 0 < p < 1:
        n_eff = min(float(games), p * (1 - p) / var)
    else:
        n_eff = float(min(n, games)) if floor else float(games)
    n_eff *= (Z95 / t_quantile(n - 1)) ** 2
    interval = wilson(p, n_eff)
    return (0.0, 1.0) if interval is None else interval


def standing(env_scores: list[float | None]) -> float | None:
    """Match points per game averaged over environments with equal weight.

    An entry is one environment's score; None marks an environment with no counted pairing
    game (every opponent void), which carries no weight. None when nothing counted."""
    counted = [s for s in env_scores if s is not None]
    return rnd(mean(counted)) if counted else None


def fit_elo(
    players: list[str], pairs: dict[tuple[str, str], Tally], anchor: str | None = None, prior_draws: float = 1.0
) -> dict[str, float | None]:
    """Elo ratings fitted to pairwise scores (Bradley-Terry by minorisation-maximisation).

    `pairs[(a, b)]` is a's tally against b (each unordered pair once). Every pair that met
    gets `prior_draws` virtual drawn games, which keeps an all-win or all-loss record finite
    without changing the order. Ratings are anchored so that `anchor` is 1000, or, without an
    anchor, so that their mean is 1000. A player who met nobody gets None. An ordering only.
    """
    met: dict[str, dict[str, tuple[float, float]]] = {p: {} for p in players}
    for (a, b), t in pairs.items():
        if a not in met or b not in met:
            raise MetricError("pairs", (a, b), f"pair ({a}, {b}) names a player not in the field")
        if t.games == 0:
            continue
        games = t.games + prior_draws
        met[a][b] = (t.points + prior_draws / 2, games)
        met[b][a] = (t.games - t.points + prior_draws / 2, games)
    rated = [p for p in players if met[p]]
    gamma = {p: 1.0 for p in rated}
    for _ in range(10000):
        new = {}
        for p in rated:
            score = math.fsum(s for s, _ in met[p].values())
            denom = math.fsum(n / (gamma[p] + gamma[q]) for q, (_, n) in met[p].items())
            new[p] = score / denom
        # Normalise by the geometric mean so the iteration cannot drift.
        g = math.exp(mean([math.log(v) for v in new.values()])) if new else 1.0
        new = {p: v / g for p, v in new.items()}
        change = max((abs(math.log(new[p] / gamma[p])) for p in rated), default=0.0)
        gamma = new
        if change < 1e-13:
            break
    ratings = {p: ELO_SCALE * math.log10(gamma[p]) for p in rated}
    if anchor is not None and anchor in ratings:
        shift = ELO_BASE - ratings[anchor]
    else:
        shift = ELO_BASE - (mean(list(ratings.values())) if ratings else 0.0)
    return {p: (round(ratings[p] + shift, ELO_DIGITS) + 0.0 if p in ratings else None) for p in players}


def endings_histogram(endings: list[str]) -> dict[str, int]:
    """How games ended: every kind of ENDINGS, in that order, with its count."""
    out = {kind: 0 for kind in ENDINGS}
    for e in endings:
        if e not in out:
            raise MetricError("endings", e, f"unknown ending {e!r} (one of {', '.join(ENDINGS)})")
        out[e] += 1
    return out


def generalisation_gap(public: float | None, scored: float | None) -> float | None:
    """Practice-tier figure minus scored-tier figure (positive: the agent does worse unseen)."""
    if public is None or scored is None:
        return None
    return rnd(public - scored)
