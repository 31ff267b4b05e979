"""Owners' histories: requested runs and logs sealed to their owners, and replays."""
