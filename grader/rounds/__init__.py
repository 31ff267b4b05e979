"""Rounds (docs/architecture.md, "A round"): plan a round, play its environments, resume, publish.

`plan` fixes what is played; `play` plays one environment; `records` stores what one
environment produced (staff only); `runner` schedules environments over workers with resume
and retries; `publish` turns the records into the results files.
"""
