"""round.yml and competition.yml run as workflows (act, tests/github/act_harness.py): the
competition freezes, staff dispatch the final with two shards (the field read from main at the
freeze, smoke-tested in the docker sandbox), the shards are merged, verified and committed as the
final pending review, the site is deployed; staff publish it; once the appeal window has closed
the competition is closed; an entrant's own log reaches their history, sealed to them, with their
replays, which open with the final's seed once it is published. A re-run by a writer who is not
staff is refused."""

from __future__ import annotations

import datetime as dt
import subprocess
import time

import pytest
import yaml
from nacl.public import PrivateKey

from grader.documents.sealing import encode_key
from grader.documents.yaml_io import format_time
from grader.history import replays
from grader.history.owner_history import parse_history
from grader.rounds.seeds import replay_boards
from tests.github.conftest import ALICE, BOB, CONFIG, ROUND_SECRETS, STAFF, agent_files
from tests.kit.test_history import noting_agent

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3000)]
# bob's agent: a line of its own output per environment, which reaches bob's history only.
BOB_AGENT = noting_agent("bob").encode()


def test_the_final_is_dispatched_sharded_merged_published_and_closed(act, hub, scratch, act_docker):
    now = dt.datetime.now(dt.UTC).replace(microsecond=0)
    final_at = now - dt.timedelta(hours=1)  # the final's date has come; the field froze 48 h before it
    config = CONFIG | {"final_at": format_time(final_at), "appeal_days": 0.0002}  # appeals close ~17 s after
    before_freeze = format_time(final_at - dt.timedelta(hours=72))
    bob_key = PrivateKey.generate()  # bob's own key, as his kit keeps it; alice's kit is older (none)
    scratch.commit(
        {
            "config/competition.yaml": yaml.safe_dump(config, sort_keys=False),
            **agent_files("alice"),
            **agent_files("bob", extra={"agent.py": BOB_AGENT}, owner_key=encode_key(bytes(bob_key.public_key))),
        },
        "the field",
        date=before_freeze,
    )
    frozen = scratch.head()
    # Merged after the freeze: it cannot change which submission is active in the final.
    scratch.commit({"submissions/bob/late.txt": "after the freeze\n"}, "late change")
    hub.users.update({STAFF[0]: STAFF[1], ALICE[0]: ALICE[1], BOB[0]: BOB[1]})
    inputs = {"tier": "final", "budget": "10", "envs": "2", "shards": "2"}

    # Inputs are checked before anything else: a third shard for 2 environments stops the field job.
    run = act.run(
        "round.yml",
        "workflow_dispatch",
        {"inputs": inputs | {"shards": "3"}},
        actor=STAFF,
        secrets=ROUND_SECRETS,
        job="field",
    )
    assert run.job("field") == "failed" and "shards: 3 shards for 2 environments" in run.log, run.log[-3000:]

    # A re-run by a writer who is not staff keeps the staff actor id: refused at the first step.
    run = act.run(
        "round.yml",
        "workflow_dispatch",
        {"inputs": inputs},
        actor=STAFF,
        triggering_actor=ALICE[1],
        secrets=ROUND_SECRETS,
        job="field",
    )
    assert run.job("field") == "failed" and "who is not staff" in run.log, run.log[-3000:]
    print(f"act: round.yml (re-run by a non-staff writer, field job) ran in {run.timing}")

    run = act.run("round.yml", "workflow_dispatch", {"inputs": inputs}, actor=STAFF, secrets=ROUND_SECRETS)
    assert run.code == 0, run.log[-6000:]
    for job in ("field", "shard", "merge", "build", "deploy"):  # build and deploy: the site workflow it calls
        assert run.job(job) == "succeeded", f"{job}: {run.jobs}\n{run.log[-6000:]}"
    assert run.instances("shard") == 2
    field = yaml.safe_load((run.artifacts / "field" / "field.yaml").read_text())
    assert field["source_commit"] == frozen and [e["handle"] for e in field["entrants"]] == ["alice", "bob"]
    # The final pending review is on main only sealed to the arena's key: nothing of it in rounds/.
    assert scratch.files("rounds") == []
    (sealed,) = scratch.files("withheld")
    round_id = sealed.removeprefix("withheld/").removesuffix(".sealed")
    assert scratch.log()[0] == f"round {round_id}"
    competition = yaml.safe_load(scratch.show("config/competition.yaml"))
    assert competition["final"] == {
        "status": "pending_review",
        "round_id": round_id,
        "published_at": None,
        "published_by": None,
    }
    assert seeds_absent(run)
    # bob's own log of the round reached bob's history, sealed to him; alice's package has no owner key.
    # With his replays of it, locked with the final's seed until it is published.
    # Not on main: a ref of its own (refs/replays/<handle>/<round-id>) on the hub's repository.
    assert scratch.files("history") == ["history/bob.yaml"]
    (entry,) = parse_history(scratch.show("history/bob.yaml").encode(), "history/bob.yaml").entries
    assert entry.round == round_id and entry.kind == "round" and entry.tier == "final"
    payload = entry.open(bob_key)
    file_lock = replays.FileLock.from_dict(payload["replays"], round_id)
    blob = subprocess.run(
        ["git", "-C", str(scratch.origin), "show", f"refs/replays/bob/{round_id}:{round_id}.replays"],
        check=True,
        capture_output=True,
        timeout=60,
    ).stdout
    with pytest.raises(replays.ReplaysLocked):
        replays.unlock(blob, file_lock, round_id, "final", None)
    log = payload["log"]
    assert len(log) == 2 and all("bob's own note: a " in text for text in log.values())
    assert "bob's own note" not in scratch.show("history/bob.yaml")
    assert (run.pages / "index.html").is_file()
    assert "Final standings pending review." in (run.pages / "index.html").read_text()
    assert round_id not in (run.pages / "rounds" / "index.html").read_text()  # not shown until published
    print(f"act: round.yml (final, 2 shards, merged, verified, committed, site) ran in {run.timing}")

    # A final on 2 environments with a field of 2 ranks nobody: refused, then published by force.
    run = act.run(
        "competition.yml", "workflow_dispatch", {"inputs": {"action": "publish-final"}}, actor=STAFF, job="update"
    )
    assert run.job("update") == "failed" and "publish it anyway with --force" in run.log, run.log[-4000:]
    assert yaml.safe_load(scratch.show("config/competition.yaml"))["final"]["status"] == "pending_review"
    run = act.run(
        "competition.yml", "workflow_dispatch", {"inputs": {"action": "publish-final", "force": "true"}}, actor=STAFF
    )
    assert run.code == 0 and run.job("update") == "succeeded", run.log[-4000:]
    assert "publishing with --force although" in run.log
    competition = yaml.safe_load(scratch.show("config/competition.yaml"))
    assert competition["final"]["status"] == "published" and competition["final"]["published_by"] == STAFF[0]
    # Published: its plain results reach rounds/ now (opened with the arena's key), the sealed copy goes.
    assert scratch.files("withheld") == []
    results = yaml.safe_load(scratch.show(f"rounds/{round_id}.yaml"))
    assert results["round"]["tier"] == "final" and len(results["environments"]) == 2
    shards = results["provenance"]["execution"]["shards"]
    assert len(shards) == 2 and "--shard 1/2" in shards[0] and "--shard 2/2" in shards[1]
    assert results["provenance"]["commit"] != "unknown"
    assert "the final is published; appeals are open." in (run.pages / "index.html").read_text()
    # Forced or not, a final on 2 environments is private: it stays off the public Rounds page.
    assert round_id not in (run.pages / "rounds" / "index.html").read_text()
    print(f"act: competition.yml (publish-final, site) ran in {run.timing}")

    # The appeal window (appeal_days 0.0002, some 17 s) closes: wait only what is left of it.
    published = competition["final"]["published_at"]
    if isinstance(published, str):
        published = dt.datetime.fromisoformat(published.replace("Z", "+00:00"))
    published = published if published.tzinfo else published.replace(tzinfo=dt.UTC)
    closes = published + dt.timedelta(days=config["appeal_days"])
    time.sleep(max(0.0, (closes - dt.datetime.now(dt.UTC)).total_seconds()) + 1)
    # The close also publishes the ladder and final seeds (its one step given them, as in production).
    run = act.run(
        "competition.yml", "workflow_dispatch", {"inputs": {"action": "close"}}, actor=STAFF, secrets=ROUND_SECRETS
    )
    assert run.code == 0 and run.job("update") == "succeeded", run.log[-4000:]
    assert yaml.safe_load(scratch.show("config/competition.yaml"))["ended"] is True
    published_seeds = yaml.safe_load(scratch.show("seeds/published.yaml"))["tier_seeds"]
    assert published_seeds == {"ladder": ROUND_SECRETS["ARENA_LADDER_SEED"], "final": ROUND_SECRETS["ARENA_FINAL_SEED"]}
    # Now bob's final replays open with the published seed: his games in both environments.
    opened = replays.unlock(blob, file_lock, round_id, "final", published_seeds["final"])
    opened = replay_boards(opened, published_seeds["final"])
    assert opened["handle"] == "bob" and len(opened["environments"]) == 2
    assert all(g["opponent"] in ("alice", "@random") and g["acts"] for e in opened["environments"] for g in e["games"])
    assert scratch.log()[0].startswith("competition: ")
    print(f"act: competition.yml (close, site) ran in {run.timing}")


def seeds_absent(run) -> bool:
    """No seed in clear in the log of any job (act masks secrets as GitHub does)."""
    return all(secret not in run.log for secret in ROUND_SECRETS.values())
