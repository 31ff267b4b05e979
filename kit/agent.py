"""Your agent. Replace the insides; keep the class name and the four methods.

The arena imports this file, builds `Agent()` once per environment (a fresh process every
time: nothing survives from one environment to the next) and calls, in this order:

    prepare(env_info)            once, before anything else
    act(obs, action_mask)        whenever it is your turn and you have a legal move
    observe_outcome(outcome)     after each of your budget (self-play) games, and only those
    freeze()                     once, when the budget is spent; act() goes on after it

Games you are told nothing about are mixed in: the measurement games against a random
opponent (at 0, 100, 500, 1000 and 2000 games used) and, after freeze(), the games against
the other agents of the round. You cannot tell them apart from the inside.

The grader runs this file with Python 3.11, numpy and the standard library, nothing else
(see README.md for the exact versions). Anything you print goes to your log, never to the
game. Files you ship beside agent.py (JSON, CSV, .npz) are in the current directory; /tmp
is the only place you may write.
"""

from __future__ import annotations

import numpy as np


class Agent:
    """A random legal mover that keeps the evidence a learning agent would learn from."""

    def prepare(self, env_info: dict) -> None:
        """The board you will play, and nothing about its rules.

        env_info = {
            "rows": int, "cols": int,            # 6..12 each
            "obstacles": [[row, col], ...],      # cells nobody can ever play; they block runs
            "interaction_budget": int,           # self-play games you get here (2000 in a round)
            "env_index": 0, "env_count": 1,      # always 0 and 1: they say nothing about the tier
        }
        Never the capture rule, never the win condition: those are what you work out by playing.
        Time allowed: see the limits table in README.md ("start and prepare()").
        """
        self.rows = int(env_info["rows"])
        self.cols = int(env_info["cols"])
        self.obstacles = {(int(r), int(c)) for r, c in env_info["obstacles"]}
        self.budget = int(env_info["interaction_budget"])
        # Seeded, so a game you want to debug plays the same way again.
        self.rng = np.random.default_rng(12345)
        # Evidence about the win condition, one count per kind of finished game: did the side
        # with more discs win, did the side with fewer discs win, or was it a draw?
        self.evidence = {"more_won": 0, "fewer_won": 0, "draw": 0}
        self.games_seen = 0
        self.frozen = False

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        """Your move, as the flat index `row * cols + col` of a cell.

        obs: float32 array of shape (3, rows, cols), from the point of view of the side to move:
            obs[0] your discs (1.0 where you have one), obs[1] the opponent's discs,
            obs[2] obstacles. Row 0 is the top row.
        action_mask: int8 array of length rows * cols, 1 where a move is legal under the real
            (unknown to you) capture rule. You are only asked when at least one cell is legal.

        An illegal move costs you the turn, three in one game forfeit it. Mind the pace: your
        mean act() time must stay under the board's pace in each phase of an environment
        (self-play, checkpoint games, pairings), each judged on its own (README.md).
        """
        legal = np.flatnonzero(action_mask)
        return int(self.rng.choice(legal))

    def observe_outcome(self, outcome: dict) -> None:
        """How a budget game ended; the only feedback you ever get.

        outcome = {
            "winner": "black" | "white" | "draw",
            "black_discs": int, "white_discs": int,   # the final counts
            "your_color": "both",                     # self-play: you held both seats
        }
        ("black" or "white" in your_color would name the seat you held in a game you played
        against someone else; budget games are self-play, so here it is always "both".)
        Set against the disc counts, the winner tells you what winning means in this
        environment: that is the benchmark's task.
        """
        self.games_seen += 1
        black, white = int(outcome["black_discs"]), int(outcome["white_discs"])
        winner = outcome["winner"]
        if winner == "draw" or black == white:
            self.evidence["draw"] += 1
        elif (winner == "black") == (black > white):
            self.evidence["more_won"] += 1
        else:
            self.evidence["fewer_won"] += 1

    def freeze(self) -> None:
        """The budget is spent: no more outcomes will come. Settle on what you learned.

        The measurement games against the random opponent come before it (at 0 games used and at
        each checkpoint of the budget, the last at the end of the budget). After freeze() you play
        the other agents (the pairings); act() works as before, and nothing tells you who won.
        """
        self.frozen = True
