"""arena site build: render the static site.

It is built from rounds/, docs/, the accounts registry and site_templates/ (no JavaScript, no
asset from the internet).

Pages are rendered only when their inputs changed since the last build (the cache folder
keeps what is needed to tell); every page's footer names the data commit it was built from.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grader.site import build


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "site", help="build the static site", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True
    b = actions.add_parser(
        "build",
        help="build the site into --out",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    b.add_argument("--rounds", type=Path, default=Path("rounds"), help="folder of round results (default rounds/)")
    b.add_argument("--out", type=Path, default=Path("_site"), help="folder to build into (default _site/)")
    b.add_argument("--docs", type=Path, default=Path("docs"), help="folder of Markdown documents (default docs/)")
    b.add_argument(
        "--accounts",
        type=Path,
        default=Path("accounts.yaml"),
        help="the accounts registry (default accounts.yaml; a missing file is said so on the pages)",
    )
    b.add_argument("--config", type=Path, default=Path("site.yaml"), help="site settings (default site.yaml)")
    b.add_argument(
        "--cache",
        type=Path,
        default=Path("build/site-cache"),
        help="cache of parsed rounds and rendered pages, for incremental builds (default build/site-cache)",
    )
    b.add_argument("--no-cache", action="store_true", help="render every page from scratch")
    b.add_argument(
        "--validate",
        action="store_true",
        help="accepted for older scripts: every round read is checked against the full results schema",
    )
    b.add_argument("--commit", help="the data commit to print in the footer (default: git, of --rounds)")
    b.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config = args.config if args.config.exists() else None
    if config is None:
        print(f"arena site: {args.config} not found: building without a series, banner or kit", file=sys.stderr)
    report = build(
        args.rounds,
        args.out,
        docs_dir=args.docs,
        accounts=args.accounts,
        config=config,
        cache_dir=None if args.no_cache else args.cache,
        data_commit=args.commit,
        validate=args.validate,
    )
    print(f"arena site: {report.line()}", file=sys.stderr)
    print(args.out)
    return 0
