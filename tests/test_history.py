"""grader.history.owner_history: an owner's sealed history file, read strictly (it sits in a repository
anyone can send a pull request to), opened by the owner's key or the arena's and no other."""

from __future__ import annotations

import datetime as dt

import pytest
from nacl.public import PrivateKey

from grader.documents.sealing import encode_key
from grader.history.owner_history import (
    History,
    HistoryError,
    history_path,
    load_history,
    merge,
    parse_history,
    seal_entry,
    summary,
    write_history,
)

WHEN = dt.datetime(2030, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
RESULTS = {
    "round": {"id": "ladder-0123456789", "tier": "ladder"},
    "agents": [
        {
            "name": "alice",
            "sae": {"value": 0.5, "b0": 100, "b_max": 2000},
            "curve": [{"games": 0, "win_rate": 0.25}, {"games": 2000, "win_rate": 0.75}],
            "faults": {"timeout": 1, "eof": 0},
        }
    ],
}


def keys():
    owner, staff = PrivateKey.generate(), PrivateKey.generate()
    return owner, staff, encode_key(bytes(owner.public_key)), encode_key(bytes(staff.public_key))


def test_an_entry_opens_with_the_owners_key_and_the_arenas_and_no_other():
    owner, staff, owner_pub, staff_pub = keys()
    entry = seal_entry(RESULTS, {"L01": "my note\n"}, "requested", owner_pub, staff_pub, WHEN, "c-1")
    for key in (owner, staff):
        payload = entry.open(key)
        assert payload["log"] == {"L01": "my note\n"} and payload["results"] == RESULTS
    assert (
        summary(entry.open(owner), "alice")
        == "SAE 0.5000 over 100..2000 games; win rate 0.750 at 2000 games; faults timeout 1"
    )
    with pytest.raises(HistoryError, match="not to this key"):
        entry.open(PrivateKey.generate())
    text = History("alice", (entry,)).to_yaml()
    assert "my note" not in text and "0.75" not in text
    assert parse_history(text.encode(), "alice.yaml").entries == (entry,)


def test_a_damaged_copy_and_a_bad_file_are_named(tmp_path):
    owner, _, owner_pub, staff_pub = keys()
    entry = seal_entry(RESULTS, {}, "round", owner_pub, staff_pub, WHEN)
    broken = History("alice", (entry,)).to_yaml().replace(entry.owner[:40], "A" * 40)
    with pytest.raises(HistoryError, match="does not open"):
        parse_history(broken.encode(), "alice.yaml").entries[0].open(owner)
    bad = "schema_version: 1\nhandle: alice\nentries:\n- round: r\n  kind: sometimes\n  extra: 1\n"
    with pytest.raises(HistoryError) as err:
        parse_history(bad.encode(), "alice.yaml")
    for named in ("entries[0].extra: unknown field", "entries[0].kind: must be one of", "entries[0].owner:"):
        assert named in str(err.value)
    with pytest.raises(HistoryError, match="not a handle"):
        history_path(tmp_path, "../etc")


def test_merge_adds_each_round_once(tmp_path):
    _, _, owner_pub, staff_pub = keys()
    entry = seal_entry(RESULTS, {}, "requested", owner_pub, staff_pub, WHEN, "c-1")
    stage = tmp_path / "stage"
    write_history(history_path(stage, "alice"), History("alice").add(entry))
    repo = tmp_path / "repo"
    assert merge(stage, repo) == [history_path(repo, "alice")]
    merge(stage, repo)  # a push retried from a newer main records the same round again
    assert load_history(history_path(repo, "alice"), "alice").entries == (entry,)
    with pytest.raises(HistoryError, match="the history of 'alice', not of 'bob'"):
        load_history(history_path(repo, "alice"), "bob")
