"""The versions a bisection searches, and a clean, built workspace for each.

Git mode: the commits from good to bad along the ancestry path (``git rev-list
--ancestry-path --reverse good..bad``, good first), each checked out in its own detached
worktree. List mode: versions from a file, one a line (package versions, container
tags), each given an empty directory. Commands are argv lists (never a shell); ``{rev}``,
``{version}`` and ``{workspace}`` in their arguments are replaced for each candidate.
Builds run with the rerun harness's timeout and process-group handling; a build that fails
makes its candidate a ``skip``, with the reason.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from workbench.errors import BadInput, UsageError
from workbench.inputs import read_regular
from workbench.outputs import identity_name
from workbench.rerun.execute import stop_group

MAX_LIST_BYTES = 16 << 20  # a candidate list: one version a line
BUILD_LOG_TAIL = 400  # characters of a failed build's output kept as its reason


@dataclass(frozen=True)
class Candidate:
    rev: str  # a full commit id, or the version string
    title: str  # the commit subject, or the version again

    @property
    def short(self) -> str:
        return self.rev[:12]

    def to_json(self) -> dict[str, str]:
        return {"rev": self.rev, "title": self.title}


def _git(repo: Path, *args: str) -> str:
    try:
        out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        raise UsageError("git is not installed; use --candidates FILE for a list of versions") from None
    if out.returncode != 0:
        raise UsageError(
            f"git {' '.join(args)} failed in {repo}: "
            f"{out.stderr.strip().splitlines()[-1] if out.stderr.strip() else out.returncode}"
        )
    return out.stdout


def from_git(repo: Path, good: str, bad: str) -> list[Candidate]:
    """Good, every commit on the ancestry path after it, and bad (last), oldest first."""
    good_id = _git(repo, "rev-parse", "--verify", f"{good}^{{commit}}").strip()
    bad_id = _git(repo, "rev-parse", "--verify", f"{bad}^{{commit}}").strip()
    if good_id == bad_id:
        raise UsageError(f"--good and --bad are the same commit ({good_id[:12]})")
    if subprocess.run(["git", "-C", str(repo), "merge-base", "--is-ancestor", good_id, bad_id]).returncode != 0:
        raise UsageError(f"--good {good} is not an ancestor of --bad {bad}: nothing to bisect between them")
    lines = _git(repo, "log", "--ancestry-path", "--reverse", "--format=%H %s", f"{good_id}..{bad_id}").splitlines()
    subject = _git(repo, "log", "-1", "--format=%s", good_id).strip()
    out = [Candidate(good_id, subject)]
    out += [Candidate(*(line.split(" ", 1) + [""])[:2]) for line in lines if line.strip()]
    return out


def from_file(path: Path) -> list[Candidate]:
    """Versions one a line, oldest (good) first; blank lines and ``#`` comments skipped."""
    try:
        text = read_regular(path, MAX_LIST_BYTES, "a candidate list").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInput(path, f"cannot read the candidate list ({exc})") from None
    versions = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if len(versions) < 2:
        raise BadInput(path, "a candidate list needs at least two versions: the good one first, the bad one last")
    if len(set(versions)) != len(versions):
        raise BadInput(path, "a version is listed twice")
    return [Candidate(v, v) for v in versions]


def substitute(argv: Sequence[str], candidate: Candidate, workspace: Path) -> list[str]:
    values = {"rev": candidate.rev, "version": candidate.rev, "workspace": str(workspace)}
    out = []
    for arg in argv:
        for key, value in values.items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


def workspace_of(candidate: Candidate, root: Path) -> Path:
    """The candidate's workspace: named by the exact revision (a readable part and a digest),
    so ``1.0+x`` and ``1.0_x`` never share a checkout or a build."""
    return root / f"ws-{identity_name(candidate.rev)}"


def prepare(candidate: Candidate, *, repo: Path | None, root: Path) -> Path:
    """A clean workspace for ``candidate`` under ``root`` (made once, kept for resume)."""
    workspace = workspace_of(candidate, root)
    if workspace.exists():
        return workspace
    root.mkdir(parents=True, exist_ok=True)
    if repo is not None:
        _git(repo, "worktree", "add", "--detach", "--force", str(workspace), candidate.rev)
    else:
        workspace.mkdir()
    return workspace


def workspaces(root: Path) -> list[Path]:
    """The workspaces a bisection made under ``root``."""
    return sorted(p for p in root.glob("ws-*") if p.is_dir() and not p.is_symlink())


def remove_workspaces(repo: Path | None, root: Path) -> list[Path]:
    """Drop the workspaces a bisection made (git worktrees are unregistered from the repository
    too); its records, builds' logs and captures stay. Returns what was removed."""
    removed = []
    for ws in workspaces(root):
        if repo is not None:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(ws)], capture_output=True)
        shutil.rmtree(ws, ignore_errors=True)  # a list mode's folder, or what git left
        removed.append(ws)
    if repo is not None and removed:
        subprocess.run(["git", "-C", str(repo), "worktree", "prune"], capture_output=True)
    return removed


def build(argv: Sequence[str] | None, candidate: Candidate, workspace: Path, timeout_s: float) -> str:
    """Run the build in the workspace; '' on success, else the reason (the candidate is skipped)."""
    if not argv:
        return ""
    # wb's own files live beside the workspaces, in wb's work directory, never inside the
    # tree under test: a ".wb-built" committed there (a file, or a symlink leading out)
    # neither counts as built nor is written through.
    root = workspace.parent
    marker = root / f"built-{identity_name(candidate.rev)}"
    if _is_own_file(marker):
        return ""
    cmd = substitute(argv, candidate, workspace)
    log = root / f"build-{identity_name(candidate.rev)}.log"
    t0 = time.monotonic()
    with os.fdopen(_create_own(log), "wb") as out:
        try:
            proc = subprocess.Popen(
                cmd,
                cwd=workspace,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            return f"build did not start: {exc.strerror or exc}"
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            stop_group(proc)
            return f"build timed out after {timeout_s:g} s"
        except KeyboardInterrupt:
            stop_group(proc)
            raise
    if code != 0:
        tail = log.read_bytes()[-BUILD_LOG_TAIL:].decode("utf-8", errors="replace").strip().splitlines()
        return f"build failed (exit {code}, {time.monotonic() - t0:.1f} s): {tail[-1] if tail else 'no output'}"
    with os.fdopen(_create_own(marker), "w") as done:
        done.write(f"{candidate.rev}\n")
    return ""


def _create_own(path: Path) -> int:
    """A file of wb's own, (re)written without following a symlink at its name."""
    try:
        return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise UsageError(
            f"cannot write {path} ({exc.strerror or exc}); wb writes only regular files in its work directory"
        ) from None


def _is_own_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
