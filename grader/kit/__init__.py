"""The starter kit students download: its build and the helpers its scripts call."""
