"""The bundle format's constants and the one way its checksum is computed.

A bundle is a JSON object. Its checksum is SHA-256 over the RFC 8785 canonical form
of the bundle without the ``checksum`` member. The canonical form of an object is
``{`` + its members sorted by the UTF-16 code units of their names, each
``"name":value`` in canonical form, joined by ``,`` + ``}``; so we canonicalize each
top-level member once, streaming its bytes into its own digest (the per-part digests that
let the verifier name what changed) and the checksum's at once, never holding them. The
checksum is that of ``rfc8785.dumps(bundle_without_checksum)`` (tested), at half the cost.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import IO, cast

import rfc8785

from workbench.bundle.canonical import canonical_bytes
from workbench.vocabulary import JSONDoc

FORMAT = "wb.evidence-bundle"
FORMAT_VERSION = "1.1"
SUPPORTED_MAJOR = 1
CANONICALIZATION = "RFC8785"
DIGEST_ALG = "sha256"
CHECKSUM_COVERS = "the RFC 8785 canonical form of the bundle without its checksum member"
OBSERVATION_LABEL = "observation, not cause"

UNSIGNED_NOTE = (
    "Bundles are unsigned: a valid checksum shows the bundle was not changed after it was made; "
    "it does not show who made it, nor that its result is right."
)

# Members whose content carries its own digest: {"digest": {"sha256": ...}, "content": ...}.
DIGESTED_PARTS = ("recipe", "results", "samples")


@dataclass
class Check:
    """One verified part of a bundle (structure, a digest, a recomputed result)."""

    part: str
    ok: bool
    detail: str

    def to_json(self) -> JSONDoc:
        return {"part": self.part, "ok": self.ok, "detail": self.detail}


def utf16_key(name: str) -> bytes:
    """JCS orders object members by UTF-16 code units; big-endian bytes compare the same."""
    return name.encode("utf-16-be", "surrogatepass")


class _Hashes:
    """A sink for ``rfc8785.dump`` that feeds every SHA-256 it holds (nothing is kept)."""

    def __init__(self, *hashes: "hashlib._Hash") -> None:
        self.hashes = hashes

    def write(self, data: bytes) -> int:
        for h in self.hashes:
            h.update(data)
        return len(data)


class CanonicalParts:
    """Each top-level member's digest and the checksum, in one streamed pass: each member's
    canonical bytes go into its own SHA-256 and the checksum's as they are written (members
    in JCS order), never held, so checking a bundle costs little more memory than the bundle."""

    def __init__(self, bundle: JSONDoc, *, fill_digests: bool = False) -> None:
        """With ``fill_digests`` (export), each digested part's ``digest`` is set from its
        content first; without (verify), the recorded digest is taken as it is."""
        self.content_digests: dict[str, str] = {}
        self.part_digests: dict[str, str] = {}
        whole = hashlib.sha256(b"{")
        names = sorted((name for name in bundle if name != "checksum"), key=utf16_key)
        for i, name in enumerate(names):
            whole.update((b"," if i else b"") + canonical_bytes(name) + b":")
            part = hashlib.sha256()
            value = bundle[name]
            if name in DIGESTED_PARTS and isinstance(value, dict) and set(value) == {"digest", "content"}:
                content = hashlib.sha256()
                _Hashes(whole, part).write(b'{"content":')
                rfc8785.dump(value["content"], cast("IO[bytes]", _Hashes(whole, part, content)))
                self.content_digests[name] = content.hexdigest()
                if fill_digests:
                    value["digest"] = {DIGEST_ALG: self.content_digests[name]}
                _Hashes(whole, part).write(b',"digest":' + canonical_bytes(value["digest"]) + b"}")
            else:
                rfc8785.dump(value, cast("IO[bytes]", _Hashes(whole, part)))
            self.part_digests[name] = part.hexdigest()
        whole.update(b"}")
        self.checksum = whole.hexdigest()
        # listed in the bundle's own order (hashed in JCS order above)
        self.part_digests = {name: self.part_digests[name] for name in bundle if name != "checksum"}


def checksum_member(parts: CanonicalParts) -> JSONDoc:
    return {
        "alg": DIGEST_ALG,
        "canonicalization": CANONICALIZATION,
        "covers": CHECKSUM_COVERS,
        "value": parts.checksum,
        "parts": {**parts.part_digests},  # a copy typed as JSON: dicts are invariant, a dict[str, str] is not one
        "signed": False,
    }
