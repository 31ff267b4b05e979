"""Within the rules: spends a fixed fraction of the board's pace on every act(), in every phase.

It reads `pace.json` beside it ({"seconds_per_cell": ..., "fraction": ...}: the pace the test
sets and the share of it to spend) and spins for that long on each move, then plays the first
legal cell. Expected: no fault at any field size, its CPU share and wall ceiling growing with
the pairings it plays. With "hold_mib" it also holds that much memory, touched, from prepare on.
"""

import json
import time
from pathlib import Path

import numpy as np

SETTINGS = json.loads((Path(__file__).resolve().parent / "pace.json").read_text())


class Agent:
    def __init__(self):
        self.spend = 0.0
        self.hoard = None

    def prepare(self, env_info):
        cells = env_info["rows"] * env_info["cols"]
        self.spend = SETTINGS["fraction"] * SETTINGS["seconds_per_cell"] * cells
        if SETTINGS.get("hold_mib") and self.hoard is None:
            self.hoard = np.ones(SETTINGS["hold_mib"] * 1024 * 1024, dtype=np.uint8)  # every page touched

    def act(self, obs, action_mask):
        until = time.perf_counter() + self.spend
        while time.perf_counter() < until:
            pass
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass

    def freeze(self):
        pass
