"""What of a round's full record reaches the public `rounds/` folder, by tier.

docs/architecture.md, "Results, disclosure, site", says why.

The full record of a round (staff only) and its public projection have the same schema; a
projection only removes. For a tier whose rules are public everything but the agents' output
and fault details is published. For a tier whose rules are withheld the projection keeps the
per-game outcomes (who played whom, in which opaque environment, who won, how it ended), from
which every aggregate is recomputed, and drops what the rules could be read back from:
environment ids, names and specs, move lists, disc counts, game seeds and the round seed.
The final also orders its environments by a secret, so a label says nothing of identity.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from engine.tiers import TierError

# Keys of a game record that only a tier with public rules publishes.
RULE_BEARING_GAME_KEYS = ("seed", "moves", "forfeit", "termination", "black_discs", "white_discs")
RULE_BEARING_ENV_KEYS = ("id", "name", "spec")


@dataclass(frozen=True)
class Disclosure:
    """A projection profile. `rules`: the tier's rules (and all that reveals them) are public."""

    name: str
    rules: bool
    shuffled_labels: bool

    def describe(self) -> str:
        if self.name == "full":
            return "the full record: staff only, never in rounds/"
        if self.rules:
            return "rules public: environments, move lists and disc counts are published"
        text = "rules withheld: per-game outcomes only, environments by opaque label"
        if self.shuffled_labels:
            text += " in an order drawn from a secret"
        return text


PROFILES = {
    "full": Disclosure("full", rules=True, shuffled_labels=False),
    "open": Disclosure("open", rules=True, shuffled_labels=False),
    "staff": Disclosure("staff", rules=False, shuffled_labels=False),
    "final": Disclosure("final", rules=False, shuffled_labels=True),
}
# The profiles `profile_for` gives a round's public projection: every one but the staff's full record.
PUBLISHED = tuple(name for name in PROFILES if name != "full")


def profile_for(tier: str, ladder_rules_public: bool = False) -> Disclosure:
    """The public profile of a tier: public and paper are open; the ladder is staff-only unless
    the tier setting publishes its rules; the final withholds everything while it runs."""
    if tier in ("public", "paper"):
        return PROFILES["open"]
    if tier == "ladder":
        return PROFILES["open"] if ladder_rules_public else PROFILES["staff"]
    if tier == "final":
        return PROFILES["final"]
    raise TierError("tier", tier, f"unknown tier {tier!r}")


def project_games(games: list[dict], profile: Disclosure) -> list[dict]:
    """The game records as `profile` publishes them (key order kept): `games` itself when the
    profile publishes them whole, so a caller can tell that nothing was withheld."""
    if profile.rules:
        return games
    return [{k: v for k, v in game.items() if k not in RULE_BEARING_GAME_KEYS} for game in games]


def project_result(full: dict, profile: Disclosure) -> dict:
    """The results document as `profile` publishes it, from the full record's document."""
    out = copy.deepcopy(full)
    out["disclosure"] = {"profile": profile.name, "description": profile.describe()}
    if profile.rules:
        return out
    config = out["provenance"]["config"]
    config["seed"] = None
    config["env_ids"] = None
    for env in out["environments"]:
        for key in RULE_BEARING_ENV_KEYS:
            env[key] = None
        for agent in env["agents"]:
            agent["self_play"] = {"games": agent["self_play"]["games"]}
    return out


# -- Which rounds are private (docs/rules.md, "Rounds") ----------------------------------------
# One rule for every surface a number can reach: rounds/ on main, the site, comments, statuses,
# artifacts, logs. A private round is readable by its entrants (their sealed histories) and by
# staff (sealed to the arena's key) only.
MIN_ENVS_PUBLIC = 8
MIN_FIELD_PUBLIC = 8


def private_reasons(results: dict, published_final: str | None = None) -> list[str]:
    """Why the round of the results document `results` is private (empty: it is public): a
    requested run, fewer than 8 environments, a field under 8, or a final that staff have not
    published (`published_final` is the id of the one they have)."""
    info = results.get("round") or {}
    config = (results.get("provenance") or {}).get("config") or {}
    # The count the round's config records (a summary may leave the environments out).
    envs = (
        config["environments"]
        if isinstance(config.get("environments"), int)
        else len(results.get("environments") or [])
    )
    field = len(results.get("field") or [])
    reasons = []
    if config.get("requested"):
        reasons.append("a requested run: its numbers are its entrant's alone")
    if envs < MIN_ENVS_PUBLIC:
        reasons.append(f"played on {envs} environments, fewer than {MIN_ENVS_PUBLIC}")
    if field < MIN_FIELD_PUBLIC:
        reasons.append(f"a field of {field}, fewer than {MIN_FIELD_PUBLIC}")
    if info.get("tier") == "final" and info.get("id") != published_final:
        reasons.append("the final, until staff publish it")
    if info.get("private") and not reasons:
        reasons.append("recorded as private")
    return reasons
