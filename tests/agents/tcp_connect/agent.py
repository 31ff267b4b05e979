"""Hostile: tries to connect to the port the test listens on at the host's 127.0.0.1.

The port is read from target.json, which the test writes beside this file.
Expected: no fault (it plays legally); the connection never reaches the host.
"""

import json
import os
import socket

import numpy as np


class Agent:
    def prepare(self, env_info):
        with open(os.path.join(os.path.dirname(__file__), "target.json")) as f:
            port = json.load(f)["port"]
        for host in ("127.0.0.1", "localhost", "::1"):
            try:
                with socket.create_connection((host, port), timeout=2) as s:
                    s.sendall(b"escaped")
                print(f"CONNECTED to {host}:{port}")
            except OSError as exc:
                print(f"connect {host}:{port} failed: {exc!r}")

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask)[0])

    def observe_outcome(self, outcome):
        pass
