#!/usr/bin/env python3
"""lsqb_to_ndjson.py — converts the LSQB (LDBC social network) CSV files to the NDJSON load
format of OmniGraph (reference-language.md §6.1), for the schema tests/conformance/lsqb.pg.

usage: lsqb_to_ndjson.py DATA_DIR OUT.jsonl

DATA_DIR holds LSQB's merged-foreign-key-free CSVs: one `Type.csv` per node label (header
`id:ID(Type)`) and one `Src_rel_Dst.csv` per relationship (header `:START_ID(Src)|:END_ID(Dst)`),
'|'-separated.  The mapping to the typed graph:

  * Post and Comment become one node type, Message (LDBC's Message label is their common
    supertype and the LSQB queries match `:Message`), with `kind` = post | comment and the key
    `mid` = "<kind>:<id>" (Post and Comment ids are separate id spaces in LDBC);
  * every other label is a node type of the same name keyed by `ldbc_id`;
  * a relationship whose name joins one pair of (merged) endpoint types is the edge type of the
    capitalised name (knows -> Knows); a name used between several pairs is prefixed with its
    source type (isLocatedIn: PersonIsLocatedIn, MessageIsLocatedIn, ...).

Every file of DATA_DIR must be known to the mapping and every mapped file must be present, so
nothing is dropped silently.  Nodes are written before edges, in a deterministic order.
A summary goes to stderr: records per type, then each parallel edge (same type and endpoints as
an earlier one), each edge between two nodes of one type (Knows, ReplyOf, ...) also stored
reversed, each self-loop, and their total as "parallel-reversed-or-self-loop-edges N" (on such
edges set semantics and Cypher's per-relationship matching can count differently; see
docs/conformance.md).
Exit status: 0 on success, 1 on bad input, 2 on usage errors.  Python 3 standard library only.
"""
import json
import os
import re
import sys

# label -> (node type, kind or None)
NODES = {
    "Comment": ("Message", "comment"),
    "Post": ("Message", "post"),
    "City": ("City", None),
    "Company": ("Company", None),
    "Continent": ("Continent", None),
    "Country": ("Country", None),
    "Forum": ("Forum", None),
    "Person": ("Person", None),
    "Tag": ("Tag", None),
    "TagClass": ("TagClass", None),
    "University": ("University", None),
}

# relationship file stem -> edge type of lsqb.pg
EDGES = {
    "City_isPartOf_Country": "CityIsPartOf",
    "Country_isPartOf_Continent": "CountryIsPartOf",
    "Comment_hasCreator_Person": "HasCreator",
    "Post_hasCreator_Person": "HasCreator",
    "Comment_hasTag_Tag": "MessageHasTag",
    "Post_hasTag_Tag": "MessageHasTag",
    "Forum_hasTag_Tag": "ForumHasTag",
    "Comment_isLocatedIn_Country": "MessageIsLocatedIn",
    "Post_isLocatedIn_Country": "MessageIsLocatedIn",
    "Company_isLocatedIn_Country": "CompanyIsLocatedIn",
    "Person_isLocatedIn_City": "PersonIsLocatedIn",
    "University_isLocatedIn_City": "UniversityIsLocatedIn",
    "Comment_replyOf_Comment": "ReplyOf",
    "Comment_replyOf_Post": "ReplyOf",
    "Forum_containerOf_Post": "ContainerOf",
    "Forum_hasMember_Person": "HasMember",
    "Forum_hasModerator_Person": "HasModerator",
    "Person_hasInterest_Tag": "HasInterest",
    "Person_knows_Person": "Knows",
    "Person_likes_Comment": "Likes",
    "Person_likes_Post": "Likes",
    "Person_studyAt_University": "StudyAt",
    "Person_workAt_Company": "WorkAt",
    "Tag_hasType_TagClass": "HasType",
    "TagClass_isSubclassOf_TagClass": "IsSubclassOf",
}


class BadInput(Exception):
    pass


def node_id(label, raw):
    """The OmniGraph node id of LDBC node `raw` of `label` (the canonical key string)."""
    if not re.fullmatch(r"[0-9]+", raw):
        raise BadInput("%s id %r is not a non-negative integer" % (label, raw))
    _, kind = NODES[label]
    return "%s:%s" % (kind, int(raw)) if kind else str(int(raw))


def read_rows(path, want_header):
    with open(path, encoding="utf-8", newline="") as f:
        lines = [ln.rstrip("\r\n") for ln in f]
    if not lines or lines[0] != want_header:
        raise BadInput("%s: header %r, expected %r" % (path, lines[0] if lines else "", want_header))
    rows = []
    for no, ln in enumerate(lines[1:], start=2):
        if ln == "":
            continue
        rows.append((no, ln.split("|")))
    return rows


def convert(data_dir, out):
    files = sorted(f for f in os.listdir(data_dir) if f.endswith(".csv"))
    stems = {f[:-4] for f in files}
    unknown = sorted(stems - set(NODES) - set(EDGES))
    if unknown:
        raise BadInput("unmapped CSV files: " + ", ".join(s + ".csv" for s in unknown))
    missing = sorted((set(NODES) | set(EDGES)) - stems)
    if missing:
        raise BadInput("missing CSV files: " + ", ".join(s + ".csv" for s in missing))

    counts = {}
    known = {}  # label -> set of node ids, for endpoint checks
    for label in sorted(NODES):
        path = os.path.join(data_dir, label + ".csv")
        ntype, kind = NODES[label]
        ids = known.setdefault(label, set())
        for no, cells in read_rows(path, "id:ID(%s)" % label):
            if len(cells) != 1:
                raise BadInput("%s:%d: expected 1 column, got %d" % (path, no, len(cells)))
            nid = node_id(label, cells[0])
            if nid in ids:
                raise BadInput("%s:%d: duplicate id %s" % (path, no, cells[0]))
            ids.add(nid)
            data = {"ldbc_id": int(cells[0])}
            if kind:
                data = {"mid": nid, "ldbc_id": int(cells[0]), "kind": kind}
            out.write(json.dumps({"type": ntype, "data": data}, separators=(",", ":")) + "\n")
            counts[ntype] = counts.get(ntype, 0) + 1

    pairs = {}  # edge type -> set of (from, to)
    notes = []
    for stem in sorted(EDGES):
        src, _rel, dst = stem.split("_")
        etype = EDGES[stem]
        path = os.path.join(data_dir, stem + ".csv")
        seen = pairs.setdefault(etype, set())
        for no, cells in read_rows(path, ":START_ID(%s)|:END_ID(%s)" % (src, dst)):
            if len(cells) != 2:
                raise BadInput("%s:%d: expected 2 columns, got %d" % (path, no, len(cells)))
            a, b = node_id(src, cells[0]), node_id(dst, cells[1])
            if a not in known[src]:
                raise BadInput("%s:%d: no %s %s" % (path, no, src, cells[0]))
            if b not in known[dst]:
                raise BadInput("%s:%d: no %s %s" % (path, no, dst, cells[1]))
            if (a, b) in seen:
                notes.append("%s:%d: parallel %s edge %s -> %s" % (path, no, etype, a, b))
            if a == b and src == dst:
                notes.append("%s:%d: %s self-loop on %s" % (path, no, etype, a))
            elif src == dst and (b, a) in seen:
                notes.append("%s:%d: %s edge %s -> %s also stored reversed" % (path, no, etype, a, b))
            seen.add((a, b))
            out.write(json.dumps({"edge": etype, "from": a, "to": b}, separators=(",", ":")) + "\n")
            counts[etype] = counts.get(etype, 0) + 1

    for name in sorted(counts):
        sys.stderr.write("%s %d\n" % (name, counts[name]))
    for n in notes:
        sys.stderr.write("note: " + n + "\n")
    sys.stderr.write("parallel-reversed-or-self-loop-edges %d\n" % len(notes))


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: lsqb_to_ndjson.py DATA_DIR OUT.jsonl\n")
        return 2
    tmp = argv[2] + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as out:
            convert(argv[1], out)
        os.replace(tmp, argv[2])
    except (BadInput, OSError) as e:
        sys.stderr.write("lsqb_to_ndjson: %s\n" % e)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
