#!/usr/bin/env python3
"""chakra_trace.py - write small Chakra execution traces for mpsim's tests.

Writes one file per rank, PREFIX.<rank>.et, in the format Chakra's own tools
write (mlcommons/chakra, schema/protobuf/et_def.proto, schema version 0.0.4):
a GlobalMetadata message, then Node messages, each preceded by its length as
a base-128 varint (Chakra's protolib encodeMessage). The protobuf encoding is
done here by hand with Python's standard library alone, so the tests need no
protobuf package: Debian's python3 is enough. The field numbers are those of
src/workload/chakra_et.proto.

    scripts/chakra_trace.py PREFIX CASE [options]

Cases (each rank's nodes; "after" = data dependency):
  allreduce      1 COMP (--compute1, rank r: --compute1 + r x --skew), 2
                 COMM_COLL ALL_REDUCE of --size bytes after 1, 3 COMP
                 (--compute2) after 2; on --ranks ranks
  sendrecv       rank 0: 1 COMP, 2 SEND of --size bytes to rank 1 (tag 7)
                 after 1; rank 1: 1 RECV from rank 0 (tag 7), 2 COMP after 1
  cycle          allreduce, but rank 0's node 1 also waits for its node 3
  exchange       both ranks: 1 COMP (--compute1), 2 SEND of --size bytes to
                 the other (tag 7) after 1, 3 RECV from the other after 2, 4
                 COMP (--compute2) after 3 (each receive waits for the rank's
                 own send, as in the ring schedules of Chakra's MSCCL-IR
                 converter); GlobalMetadata as that converter writes it:
                 version "" and an attribute schema "1.0.2-chakra.0.0.4"
  missing-peer   sendrecv without rank 1's receive
  unknown-group  allreduce on pg_name "tp9"
  unknown-type   allreduce with a MEM_LOAD_NODE on rank 0
  unknown-attr   allreduce with an attribute "mystery" on rank 0's node 2
  wrong-schema   allreduce with GlobalMetadata version "1.0.0" on rank 1
  not-protobuf   rank 1's file is a line of text
  truncated      allreduce with the last 5 bytes of rank 1's file cut off
"""
import argparse
import struct
import sys

# NodeType and CollectiveCommType values of the schema
METADATA_NODE, MEM_LOAD_NODE, COMP_NODE = 1, 2, 4
COMM_SEND_NODE, COMM_RECV_NODE, COMM_COLL_NODE = 5, 6, 7
ALL_REDUCE = 0


def varint(v):
    if v < 0:
        v += 1 << 64  # int64 as protobuf writes it: ten bytes
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(0x80 | b)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def f_varint(field, v):
    return key(field, 0) + varint(v)


def f_bytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return key(field, 2) + varint(len(b)) + b


def f_packed(field, values):
    return f_bytes(field, b"".join(varint(v) for v in values)) if values else b""


def attr(name, value):
    """AttributeProto: name = 1; int64_val = 9, bool_val = 27, string_val = 29."""
    body = f_bytes(1, name)
    if isinstance(value, bool):
        body += f_varint(27, int(value))
    elif isinstance(value, int):
        body += f_varint(9, value)
    else:
        body += f_bytes(29, value)
    return f_bytes(10, body)  # Node.attr = 10


def node(nid, name, ntype, data_deps=(), ctrl_deps=(), duration_us=0, attrs=()):
    """Node: id 1, name 2, type 3, ctrl_deps 4, data_deps 5, duration_micros 7, attr 10."""
    b = f_varint(1, nid) + f_bytes(2, name) + f_varint(3, ntype)
    b += f_packed(4, list(ctrl_deps)) + f_packed(5, list(data_deps))
    if duration_us:
        b += f_varint(7, duration_us)
    for k, v in attrs:
        b += attr(k, v)
    return b


def metadata(version="0.0.4"):
    if version is None:  # MSCCL-IR converter: no version, a schema attribute
        return f_bytes(2, f_bytes(1, "schema") + f_bytes(29, "1.0.2-chakra.0.0.4"))
    return f_bytes(1, version)  # GlobalMetadata.version = 1, attr = 2


def framed(messages):
    return b"".join(varint(len(m)) + m for m in messages)


def allreduce_rank(a, r, pg=None, cycle=False):
    coll = [("comm_type", ALL_REDUCE), ("comm_size", a.size)]
    if pg:
        coll.append(("pg_name", pg))
    return [
        node(1, "compute_fwd", COMP_NODE, duration_us=a.compute1 + r * a.skew,
             ctrl_deps=[3] if cycle else []),
        node(2, "allreduce_grad", COMM_COLL_NODE, data_deps=[1], attrs=coll),
        node(3, "compute_opt", COMP_NODE, data_deps=[2], duration_us=a.compute2),
    ]


def build(a):
    """Per rank: (GlobalMetadata version, [node messages])."""
    ranks = {}
    if a.case == "exchange":
        for r in (0, 1):
            p2p = [("comm_tag", 7), ("comm_size", a.size)]
            ranks[r] = [
                node(1, "compute", COMP_NODE, duration_us=a.compute1),
                node(2, "send", COMM_SEND_NODE, data_deps=[1], attrs=[("comm_dst", 1 - r)] + p2p),
                node(3, "recv", COMM_RECV_NODE, data_deps=[2], attrs=[("comm_src", 1 - r)] + p2p),
                node(4, "compute", COMP_NODE, data_deps=[3], duration_us=a.compute2),
            ]
        return {r: (None, n) for r, n in ranks.items()}
    if a.case in ("sendrecv", "missing-peer"):
        ranks[0] = [
            node(1, "compute", COMP_NODE, duration_us=a.compute1),
            node(2, "send", COMM_SEND_NODE, data_deps=[1],
                 attrs=[("comm_dst", 1), ("comm_tag", 7), ("comm_size", a.size)]),
        ]
        ranks[1] = [node(2, "compute", COMP_NODE, data_deps=[1], duration_us=a.compute2)]
        if a.case == "sendrecv":
            ranks[1].insert(0, node(1, "recv", COMM_RECV_NODE,
                                    attrs=[("comm_src", 0), ("comm_tag", 7),
                                           ("comm_size", a.size)]))
        else:
            ranks[1] = [node(2, "compute", COMP_NODE, duration_us=a.compute2)]
        return {r: ("0.0.4", n) for r, n in ranks.items()}
    for r in range(a.ranks):
        ranks[r] = allreduce_rank(a, r, pg="tp9" if a.case == "unknown-group" else None,
                                  cycle=a.case == "cycle" and r == 0)
    if a.case == "unknown-type":
        ranks[0].append(node(4, "load", MEM_LOAD_NODE, data_deps=[3]))
    if a.case == "unknown-attr":
        ranks[0][1] = node(2, "allreduce_grad", COMM_COLL_NODE, data_deps=[1],
                           attrs=[("comm_type", ALL_REDUCE), ("comm_size", a.size),
                                  ("mystery", 1)])
    out = {r: ("0.0.4", n) for r, n in ranks.items()}
    if a.case == "wrong-schema":
        out[1] = ("1.0.0", ranks[1])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("prefix", help="files PREFIX.<rank>.et")
    ap.add_argument("case", choices=["allreduce", "sendrecv", "exchange", "cycle", "missing-peer",
                                     "unknown-group", "unknown-type", "unknown-attr",
                                     "wrong-schema", "not-protobuf", "truncated"])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--size", type=int, default=800000, help="bytes of the collective or send")
    ap.add_argument("--compute1", type=int, default=100, help="us, the first compute")
    ap.add_argument("--skew", type=int, default=0, help="us more per rank of the first compute")
    ap.add_argument("--compute2", type=int, default=30, help="us, the last compute")
    a = ap.parse_args()
    case = "allreduce" if a.case in ("not-protobuf", "truncated") else a.case
    files = build(argparse.Namespace(**{**vars(a), "case": case}))
    for r, (version, nodes) in sorted(files.items()):
        data = framed([metadata(version)] + nodes)
        if r == 1 and a.case == "truncated":
            data = data[:-5]
        if r == 1 and a.case == "not-protobuf":
            data = b"this is not a trace\n"
        with open("%s.%d.et" % (a.prefix, r), "wb") as f:
            f.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
