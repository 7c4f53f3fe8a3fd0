#!/usr/bin/env python3
"""training_trace.py - write per-rank Chakra traces of one training iteration.

    scripts/training_trace.py MODEL OUTDIR [options]      (MODEL: dense | moe)

Writes OUTDIR/t.<rank>.et (Chakra schema 0.0.4, encoded by chakra_trace.py's
helpers with Python's standard library) and OUTDIR/groups.txt, the workload
section's `groups:` line (one communicator group per entry) for mpsim's
`workload: {type: chakra, trace: OUTDIR/t, groups: [...]}`. The same
arguments always write the same bytes.

Ranks are placed as Megatron-LM orders them (its default order
"tp-cp-ep-dp-pp": tensor parallelism fastest, then expert or data
parallelism, then pipeline stages), so on mpsim's rail_optimized topology,
whose hosts are numbered server-major, a tensor-parallel group with TP equal
to the GPUs per server is one server (NVLink), and a data- or
pipeline-parallel group takes GPU k of several servers: one rail.

dense (defaults: GPT-3 XL, 1.3 B parameters: 24 layers, hidden 2048, 24
heads, sequence 2048; Brown et al., "Language Models are Few-Shot
Learners", NeurIPS 2020, Table 2.1), on TP x DP x PP ranks (8 x 8 x 2 = 128:
16 servers of 8 GPUs):
  - per layer and micro-batch, forward: attention compute, TP AllReduce of
    the activations (b x s x h x 2 B, bf16), MLP compute, TP AllReduce; the
    backward pass the same in reverse at twice the compute (Shoeybi et al.,
    "Megatron-LM: Training Multi-Billion Parameter Language Models Using
    Model Parallelism", 2019, Fig. 4: the f and g operators);
  - compute from FLOPs: attention 8 b s h^2 + 4 b s^2 h, MLP 16 b s h^2 per
    layer forward (Narayanan et al., "Efficient Large-Scale Language Model
    Training on GPU Clusters Using Megatron-LM", SC 2021, Section 5.1), over
    TP, at --tflops per GPU (default 400: an H100's 989 TFLOPS of dense bf16
    at 40% model FLOPs utilisation, our choice); no activation recomputation;
  - pipeline: GPipe's schedule (every micro-batch forward, then every one
    backward; Huang et al., NeurIPS 2019), activations and their gradients
    sent between stages as b x s x h x 2 / TP B (Megatron's scatter-gather
    optimisation, Narayanan et al., Section 4.1);
  - data parallelism: each layer's gradients (12 h^2 / TP parameters, bf16)
    AllReduced over the DP group once that layer's last backward is done,
    overlapping the backward of the layers below (PyTorch DDP's buckets, one
    per layer here); an optimizer step (--optimizer us) after all of them;
  - left out: embeddings, layer norms, biases, the loss.

moe (defaults: DBRX's layer, 16 experts, top-4, hidden 6144, expert FFN
10752; Databricks, "Introducing DBRX", 2024), on EP x DP ranks (16 x 32 =
512: 64 servers of 8 GPUs), TP = PP = 1, one expert per rank:
  - per layer, forward: attention compute, AlltoAll dispatch over the EP group
    (tokens x top-k x h x 2 B per rank, NCCL-tests' size: the rank's whole
    send buffer), expert compute (the rank's share of top-k x tokens through
    a 3-matrix GLU FFN: 6 x h x ffn FLOPs a token), AlltoAll combine; the
    backward pass in reverse at twice the compute; an EP group spans
    EP / 8 servers, so its AlltoAll crosses rails and the spines;
  - data parallelism: the attention's gradients (4 h^2 per layer, bf16) and
    the expert's (3 h ffn) AllReduced over the DP group (ranks EP apart:
    one rail) after the layer's backward;
  - scaled down by default to be simulated in minutes: 2 layers (DBRX has
    40), 256 tokens per rank (--tokens).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chakra_trace import (COMP_NODE, COMM_COLL_NODE, COMM_RECV_NODE,  # noqa: E402
                          COMM_SEND_NODE, framed, metadata, node)

ALL_REDUCE, ALL_TO_ALL = 0, 6  # CollectiveCommType


class Rank:
    """One rank's nodes, each after the one before unless told otherwise."""

    def __init__(self):
        self.nodes, self.last = [], None

    def add(self, name, ntype, deps=None, us=0, attrs=()):
        nid = len(self.nodes) + 1
        d = ([self.last] if self.last else []) if deps is None else deps
        self.nodes.append(node(nid, name, ntype, data_deps=d, duration_us=us, attrs=attrs))
        return nid

    def step(self, name, ntype, us=0, attrs=()):
        self.last = self.add(name, ntype, us=us, attrs=attrs)
        return self.last

    def comp(self, name, us):
        return self.step(name, COMP_NODE, us=max(1, round(us)))

    def coll(self, name, kind, size, group, deps=None):
        attrs = [("comm_type", kind), ("comm_size", int(size)), ("pg_name", group)]
        if deps is None:
            return self.step(name, COMM_COLL_NODE, attrs=attrs)
        return self.add(name, COMM_COLL_NODE, deps=deps, attrs=attrs)

    def p2p(self, name, send, peer, tag, size):
        attrs = [("comm_dst" if send else "comm_src", peer), ("comm_tag", tag),
                 ("comm_size", int(size))]
        return self.step(name, COMM_SEND_NODE if send else COMM_RECV_NODE, attrs=attrs)


def us_of(flops, a):
    return flops / (a.tflops * 1e12) * 1e6


def dense(a):
    TP, DP, PP = a.tp, a.dp, a.pp
    if a.layers % PP:
        sys.exit("training_trace.py: --layers must be a multiple of --pp")
    b, s, h, L = a.micro_batch, a.seq, a.hidden, a.layers // PP
    act = b * s * h * 2
    attn = us_of((8 * b * s * h * h + 4 * b * s * s * h) / TP, a)
    mlp = us_of(16 * b * s * h * h / TP, a)
    grad = 12 * h * h // TP * 2
    rank = lambda t, d, p: t + TP * (d + DP * p)  # noqa: E731
    groups = {}
    for p in range(PP):
        for d in range(DP):
            groups["tp_d%d_p%d" % (d, p)] = [rank(t, d, p) for t in range(TP)]
        for t in range(TP):
            groups["dp_t%d_p%d" % (t, p)] = [rank(t, d, p) for d in range(DP)]
    out = {}
    for p in range(PP):
        for d in range(DP):
            for t in range(TP):
                r, tg, dg = Rank(), "tp_d%d_p%d" % (d, p), "dp_t%d_p%d" % (t, p)
                for m in range(a.micro_batches):
                    if p > 0:
                        r.p2p("recv_act_mb%d" % m, False, rank(t, d, p - 1), m, act // TP)
                    for l in range(L):
                        r.comp("attn_fwd_l%d_mb%d" % (l, m), attn)
                        r.coll("tp_ar_attn_fwd_l%d_mb%d" % (l, m), ALL_REDUCE, act, tg)
                        r.comp("mlp_fwd_l%d_mb%d" % (l, m), mlp)
                        r.coll("tp_ar_mlp_fwd_l%d_mb%d" % (l, m), ALL_REDUCE, act, tg)
                    if p < PP - 1:
                        r.p2p("send_act_mb%d" % m, True, rank(t, d, p + 1), m, act // TP)
                dp_ids = []
                for m in reversed(range(a.micro_batches)):
                    if p < PP - 1:
                        r.p2p("recv_grad_mb%d" % m, False, rank(t, d, p + 1), 1000 + m,
                              act // TP)
                    for l in reversed(range(L)):
                        r.comp("mlp_bwd_l%d_mb%d" % (l, m), 2 * mlp)
                        r.coll("tp_ar_mlp_bwd_l%d_mb%d" % (l, m), ALL_REDUCE, act, tg)
                        r.comp("attn_bwd_l%d_mb%d" % (l, m), 2 * attn)
                        r.coll("tp_ar_attn_bwd_l%d_mb%d" % (l, m), ALL_REDUCE, act, tg)
                        if m == 0 and DP > 1:  # the layer's last backward: its bucket
                            dp_ids.append(r.coll("dp_ar_l%d" % l, ALL_REDUCE, grad, dg,
                                                 deps=[r.last]))
                    if p > 0:
                        r.p2p("send_grad_mb%d" % m, True, rank(t, d, p - 1), 1000 + m,
                              act // TP)
                r.add("optimizer", COMP_NODE, deps=[r.last] + dp_ids, us=a.optimizer)
                out[rank(t, d, p)] = r.nodes
    return out, groups


def moe(a):
    EP, DP = a.ep, a.dp
    T, h, f, k = a.tokens, a.hidden, a.ffn, a.topk
    dispatch = T * k * h * 2
    attn = us_of(8 * T * h * h + 4 * T * a.seq * h, a)
    expert = us_of(k * T * 6 * h * f, a)  # per rank: its expert sees k x T tokens on average
    grad = (4 * h * h + 3 * h * f) * 2
    rank = lambda e, d: e + EP * d  # noqa: E731
    groups = {}
    for d in range(DP):
        groups["ep_d%d" % d] = [rank(e, d) for e in range(EP)]
    for e in range(EP):
        groups["dp_e%d" % e] = [rank(e, d) for d in range(DP)]
    out = {}
    for d in range(DP):
        for e in range(EP):
            r, eg, dg = Rank(), "ep_d%d" % d, "dp_e%d" % e
            for l in range(a.layers):
                r.comp("attn_fwd_l%d" % l, attn)
                r.coll("ep_dispatch_fwd_l%d" % l, ALL_TO_ALL, dispatch, eg)
                r.comp("expert_fwd_l%d" % l, expert)
                r.coll("ep_combine_fwd_l%d" % l, ALL_TO_ALL, dispatch, eg)
            dp_ids = []
            for l in reversed(range(a.layers)):
                r.coll("ep_combine_bwd_l%d" % l, ALL_TO_ALL, dispatch, eg)
                r.comp("expert_bwd_l%d" % l, 2 * expert)
                r.coll("ep_dispatch_bwd_l%d" % l, ALL_TO_ALL, dispatch, eg)
                r.comp("attn_bwd_l%d" % l, 2 * attn)
                if DP > 1:
                    dp_ids.append(r.coll("dp_ar_l%d" % l, ALL_REDUCE, grad, dg,
                                         deps=[r.last]))
            r.add("optimizer", COMP_NODE, deps=[r.last] + dp_ids, us=a.optimizer)
            out[rank(e, d)] = r.nodes
    return out, groups


def ranks_text(v):
    """Ranks as mpsim's groups write them: runs of consecutive ranks as a-b."""
    parts, i = [], 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[j + 1] == v[j] + 1:
            j += 1
        parts.append("%d-%d" % (v[i], v[j]) if j > i else "%d" % v[i])
        i = j + 1
    return " ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model", choices=["dense", "moe"])
    ap.add_argument("outdir")
    ap.add_argument("--tp", type=int, default=8, help="dense: tensor-parallel ranks")
    ap.add_argument("--pp", type=int, default=2, help="dense: pipeline stages")
    ap.add_argument("--dp", type=int, default=None,
                    help="data-parallel ranks (dense 8, moe 32)")
    ap.add_argument("--ep", type=int, default=16, help="moe: expert-parallel ranks")
    ap.add_argument("--layers", type=int, default=None, help="dense 24, moe 2")
    ap.add_argument("--hidden", type=int, default=None, help="dense 2048, moe 6144")
    ap.add_argument("--seq", type=int, default=None, help="sequence length: dense 2048, moe 4096")
    ap.add_argument("--micro-batch", type=int, default=1, help="dense: sequences a micro-batch")
    ap.add_argument("--micro-batches", type=int, default=4, help="dense: per iteration")
    ap.add_argument("--tokens", type=int, default=256, help="moe: tokens a rank routes a layer")
    ap.add_argument("--ffn", type=int, default=10752, help="moe: an expert's FFN width")
    ap.add_argument("--topk", type=int, default=4, help="moe: experts a token goes to")
    ap.add_argument("--tflops", type=float, default=400.0, help="achieved TFLOP/s per GPU")
    ap.add_argument("--optimizer", type=int, default=200, help="us, the optimizer step")
    a = ap.parse_args()
    d = {"dense": dict(dp=8, layers=24, hidden=2048, seq=2048),
         "moe": dict(dp=32, layers=2, hidden=6144, seq=4096)}[a.model]
    for k, v in d.items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    ranks, groups = dense(a) if a.model == "dense" else moe(a)
    os.makedirs(a.outdir, exist_ok=True)
    for r in sorted(ranks):
        with open(os.path.join(a.outdir, "t.%d.et" % r), "wb") as fh:
            fh.write(framed([metadata("0.0.4")] + ranks[r]))
    with open(os.path.join(a.outdir, "groups.txt"), "w") as fh:
        fh.write("groups: [%s]\n" % ", ".join('"%s=%s"' % (n, ranks_text(v))
                                               for n, v in groups.items()))
    print("%s: %d ranks, %d groups -> %s/t.<rank>.et, %s/groups.txt"
          % (a.model, len(ranks), len(groups), a.outdir, a.outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
