"""The static site: `build(rounds_dir, out_dir, ...)` renders rounds/, docs/ and the accounts
registry through site_templates/ (see grader.site.builder)."""

from grader.site.builder import BuildReport, build

__all__ = ["BuildReport", "build"]
