"""``wb token``: a token is shown once and only its SHA-256 is stored; list shows no
secret; revoke is immediate and kept on record; a store of schema 1 gains the table."""

from __future__ import annotations

import json
import sqlite3

import pytest
from sqlalchemy import text

from store import open_store
from store.schema import SCHEMA_VERSION
from store.tokens import ROLES, Caller, add_token, authenticate, digest, revoke_token
from tests.conftest import run_wb_here
from workbench.cli.commands.token import ROLES as CLI_ROLES


def test_add_list_revoke_through_the_cli(wb_env, tmp_path):
    path = tmp_path / "wb.sqlite"
    added = run_wb_here("--store", str(path), "token", "add", "ci-node-7", "--role", "upload")
    assert added.returncode == 0, added.stderr
    token = added.stdout.strip()
    assert token.startswith("wb_") and len(token) > 40 and "shown once" in added.stderr
    assert token.encode() not in path.read_bytes() + (
        path.with_name("wb.sqlite-wal").read_bytes() if path.with_name("wb.sqlite-wal").exists() else b""
    )
    [(stored,)] = sqlite3.connect(path).execute("SELECT sha256 FROM api_token").fetchall()
    assert stored == digest(token)
    listed = run_wb_here("--store", str(path), "token", "list", "--json")
    [entry] = json.loads(listed.stdout)
    assert entry["name"] == "ci-node-7" and entry["role"] == "upload" and entry["active"] is True
    assert token not in listed.stdout and stored not in listed.stdout
    twice = run_wb_here("--store", str(path), "token", "add", "ci-node-7", "--role", "read")
    assert twice.returncode == 2 and "revoke it first" in twice.stderr
    revoked = run_wb_here("--store", str(path), "token", "revoke", "ci-node-7")
    assert revoked.returncode == 0 and authenticate(open_store(str(path)), token) is None
    assert json.loads(run_wb_here("--store", str(path), "token", "list", "--json").stdout)[0]["revoked_at"]
    assert run_wb_here("--store", str(path), "token", "add", "ci-node-7", "--role", "read").returncode == 0  # a new one
    assert run_wb_here("--store", str(path), "token", "revoke", "nobody").returncode == 2
    assert run_wb_here("--store", str(path), "token", "add", "../x", "--role", "read").returncode == 2


@pytest.mark.store
def test_authenticate_takes_only_the_exact_active_token(store_url):
    st = open_store(store_url)
    token = add_token(st, "ci", "upload")
    reader = add_token(st, "dash", "read")
    assert authenticate(st, token) == Caller("ci", "upload")
    assert authenticate(st, reader) == Caller("dash", "read")
    for forged in (token[:-1], token + "x", token.upper(), digest(token), "", "wb_"):
        assert authenticate(st, forged) is None
    assert Caller("ci", "upload").may("read") and not Caller("dash", "read").may("upload")
    assert Caller("root", "admin").may("upload")
    revoke_token(st, "ci")
    assert authenticate(st, token) is None and authenticate(st, reader) is not None


def test_the_cli_offers_the_stores_roles():
    assert CLI_ROLES == ROLES  # kept apart so that 'wb token --help' loads no SQLAlchemy


@pytest.mark.store
def test_a_schema_1_store_is_upgraded_with_the_token_table(store_url, tmp_path):
    st = open_store(store_url)
    st.ensure_exists()
    with st.engine.begin() as conn:  # what wb before tokens made
        conn.execute(text("DROP TABLE api_token"))
        conn.execute(text("UPDATE wb_meta SET value = '1' WHERE key = 'schema_version'"))
    st.close()
    upgraded = open_store(store_url)
    with upgraded.engine.connect() as conn:
        assert conn.execute(text("SELECT value FROM wb_meta WHERE key = 'schema_version'")).scalar_one() == str(
            SCHEMA_VERSION
        )
    token = add_token(upgraded, "ci", "read")
    assert authenticate(upgraded, token) == Caller("ci", "read")
