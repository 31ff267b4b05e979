"""The static site: rounds/, docs/ and the accounts registry rendered through site_templates/.

`build(rounds_dir, out_dir, ...)` is grader.site.builder's.
"""

from grader.site.builder import BuildReport, build

__all__ = ["BuildReport", "build"]
