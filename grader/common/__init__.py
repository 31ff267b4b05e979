"""Foundations every layer stands on: errors, files, limits, faults, policy, wire, schedule, metrics."""
