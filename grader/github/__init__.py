"""GitHub glue: the workflows' logic behind `arena pr`, `arena score` and friends.

`api` is the only module that talks to GitHub (through github3.py); `events` reads the
webhook payload a workflow was started with; `pr_check`, `pr_report` and `score` decide.
"""
