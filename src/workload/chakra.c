/* chakra.c - Chakra execution traces as a workload (workload "chakra").
 *
 * Owns: chakra_workload_ops and its parameters.
 *
 * A trace is one file per rank, TRACE.<rank>.et for ranks 0 .. N-1 (the
 * names Chakra's converters and ASTRA-sim use), each a stream of protobuf
 * messages with a varint length before each (Chakra's protolib): one
 * GlobalMetadata, then Node messages (src/workload/chakra_et.proto, from
 * Chakra's schema at the commit its header names); a file may be gzipped
 * (inflated with zlib), and TRACE.<rank>.et.gz is read where TRACE.<rank>.et
 * is absent. Rank r runs on host r;
 * N is `ranks`, or every host of the fabric.
 *
 * What a node becomes in the message DAG (workload.h), in dependency order:
 *
 * - COMP_NODE: a marker (no traffic) that completes duration_micros x
 *   compute_scale after the nodes it depends on.
 * - METADATA_NODE, and node types named in `ignore`: a marker that takes no
 *   time (its dependencies still order what follows it).
 * - COMM_COLL_NODE (comm_type ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER,
 *   ALL_TO_ALL, BROADCAST, BARRIER; comm_size bytes, NCCL-tests' meaning;
 *   pg_name the communicator group, none = every rank): the k-th collective
 *   node of group G in each member's file is one collective (as NCCL matches
 *   them: in issue order per communicator). A start marker waits for every
 *   member's dependencies (a collective starts when its last rank reaches
 *   it); the collective layer's generator (coll_generate_one, collective.c)
 *   then appends the messages of the algorithm on the group's hosts, their
 *   first ones waiting for that marker; an end marker per member waits for
 *   every message that member sends or receives, and the member's node
 *   completes with it. BROADCAST's root is the group's first rank; BARRIER
 *   is an AllReduce of the least size (PyTorch's barrier reduces one
 *   element). A collective smaller than 2 bytes per rank and channel moves
 *   that least size.
 * - COMM_SEND_NODE / COMM_RECV_NODE (comm_dst / comm_src a rank, comm_tag,
 *   comm_size): the k-th send from rank a to b with tag t meets the k-th
 *   receive at b from a with tag t. The send is one message that starts when
 *   the send's dependencies are done, whether or not the receiver has
 *   reached its receive (an eager send, as ASTRA-sim, the simulator these
 *   traces are written for, issues a send node: a rendezvous would deadlock
 *   the ring schedules Chakra's MSCCL-IR converter writes, where each rank's
 *   receive waits for its own earlier send). The send completes when its
 *   last byte is acknowledged; the receive when the message has arrived and
 *   the receive's own dependencies are done.
 *
 * Every message is a collective-layer message (job 1): it rides the `ccl:`
 * section's queue pairs and scheduler, or the server's intra-node fabric
 * between GPUs of one server. The `collective`-like options (algorithm,
 * chunk, channels, parallelism) apply to every collective node.
 *
 * Refused before the run, with the file and node named: a file that cannot
 * be read, is truncated or does not decode as Chakra's messages (a wrong
 * schema, or a GlobalMetadata version other than 0.0.x, x >= 4), a node id
 * given twice, a dependency on a node the file lacks, a node type or
 * attribute mpsim does not model (unless named in `ignore`; the attributes
 * Chakra's converters write for tools, listed in ck_ignored_attrs, are
 * skipped), a collective type it does not model, a collective on a group
 * not in `groups` or that the rank is not in, a collective or a send/receive
 * without its peer, members disagreeing on a collective's type or size, a
 * cycle (through any ranks), and a trace with more or fewer ranks than the
 * run has.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "chakra_et.pb-c.h"
#include "core/mem.h"
#include "workload/collective.h"
#include "workload/workload.h"

struct ck_params {
	char *trace;	      /* path prefix: files <trace>.<rank>.et */
	uint64_t ranks;	      /* 0 = every host */
	double compute_scale; /* x every compute node's duration */
	int algorithm;	      /* enum coll_algo, AllReduce and Barrier */
	uint64_t chunk, channels, parallelism;
	struct opt_strlist groups; /* "name=r r a-b" */
	struct opt_strlist ignore; /* attribute names, node type names */
};

static const struct opt_desc ck_opts[] = {
	{ "trace", OPT_STRING, offsetof(struct ck_params, trace), NULL, 0, 0,
	  "path prefix of the trace: one file <trace>.<rank>.et per rank (Chakra's protobuf "
	  "format), relative to the experiment file" },
	{ "ranks", OPT_UINT, offsetof(struct ck_params, ranks), "0", 0, 1e7,
	  "ranks of the trace (rank r on host r); 0 = every host of the fabric" },
	{ "compute_scale", OPT_DOUBLE, offsetof(struct ck_params, compute_scale), "1", 1e-9, 1e9,
	  "factor on every compute node's recorded duration (0.5: a GPU twice as fast)" },
	{ "algorithm", OPT_ENUM, offsetof(struct ck_params, algorithm), "ring", 0, 0,
	  "AllReduce (and Barrier): ring, double_binary_tree or halving_doubling",
	  coll_algo_names },
	{ "chunk", OPT_SIZE, offsetof(struct ck_params, chunk), "128KB", 1, 1e12,
	  "pipelining unit of ring, tree and broadcast steps" },
	{ "channels", OPT_UINT, offsetof(struct ck_params, channels), "1", 1, 1024,
	  "ring algorithms: NCCL's channels" },
	{ "parallelism", OPT_UINT, offsetof(struct ck_params, parallelism), "0", 0, 1e7,
	  "AlltoAll: messages in flight per rank; 0 = all at once" },
	{ "groups", OPT_STRLIST, offsetof(struct ck_params, groups), "", 0, 0,
	  "communicator groups that nodes name in pg_name: \"NAME=RANKS\", ranks separated by "
	  "blanks, a-b a range (e.g. \"tp0=0-3\"); a node without pg_name runs on every rank" },
	{ "ignore", OPT_STRLIST, offsetof(struct ck_params, ignore), "", 0, 0,
	  "node attributes to skip, and node types (e.g. MEM_LOAD_NODE) to run as nodes that "
	  "take no time; anything else mpsim does not model is refused" },
	OPT_END,
};

/* Attributes Chakra's converters write for other tools; they change nothing
 * on the network or in a node's duration. */
static const char *const ck_ignored_attrs[] = {
	"is_cpu_op", "num_ops",	  "tensor_size", "comm_priority", "involved_dim",
	"rf_id",     "fw_parent", "seq_id",	 "scope",	  "tid",
	"fw_tid",    "op_schema", "ctrl_deps",	 "data_deps",	  NULL,
};

enum ck_kind { CK_MARK, CK_COMP, CK_COLL, CK_SEND, CK_RECV };

struct ck_node {
	ChakraProtoMsg__Node *pb;
	uint32_t rank, unit;
	uint32_t done; /* the flow (| FLOW_DEP_SENT) that completes it, once generated */
	uint32_t group;
	int kind, coll; /* enum ck_kind; comm_type */
	uint64_t size;
	int64_t peer, tag; /* send: comm_dst, receive: comm_src; -1 = not given */
	uint32_t ord;	   /* collective: its place among its rank's on its group */
	uint32_t mate;	   /* send / receive: the matching node */
	uint32_t msg;	   /* send: its message, once generated */
};

struct ck_group {
	char *name; /* NULL: every rank */
	uint32_t *rank, n;
};

struct ck_unit {
	uint32_t mem0, nmem; /* members: ck->mem[mem0 ..] */
	int kind;
};

struct ck {
	const struct ck_params *p;
	const struct wl_env *env;
	struct mp_err *e;
	uint32_t nranks;
	char **file;	 /* per rank: its path */
	uint32_t *first; /* nodes of rank r: node[first[r] .. first[r + 1]) */
	struct ck_node *node;
	size_t nnodes, cap;
	uint32_t *byid; /* per rank, its nodes' indices sorted by id */
	struct ck_group *grp;
	uint32_t ngrp;
	struct ck_unit *unit;
	size_t nunits;
	uint32_t *mem;
	size_t nmem;
};

static int __attribute__((format(printf, 3, 4)))
ck_err(struct ck *c, const struct ck_node *v, const char *fmt, ...)
{
	char msg[sizeof(c->e->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!v)
		return mp_errf(c->e, MP_EUSER, "%s", msg);
	return mp_errf(c->e, MP_EUSER, "%s: node %llu ('%.60s'): %s", c->file[v->rank],
		       (unsigned long long)v->pb->id, v->pb->name, msg);
}

static bool ck_listed(const struct opt_strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

/* ---- reading the files ------------------------------------------------------- */

/* A gzipped trace (gzip's header, one or more members) inflated whole into
 * *out; `in` is freed. Refused when it does not inflate to its end. */
static int ck_gunzip(struct ck *c, const char *path, uint8_t *in, size_t n, uint8_t **out,
		     size_t *len)
{
	z_stream z = { .next_in = in, .avail_in = (uInt)n };
	size_t cap = 4 * n + 4096, got = 0;
	uint8_t *b = mp_malloc(cap);
	int zr = n > UINT32_MAX ? Z_BUF_ERROR : inflateInit2(&z, 16 + MAX_WBITS);

	while (zr == Z_OK) {
		if (got == cap) {
			cap *= 2;
			b = mp_realloc(b, cap);
		}
		z.next_out = b + got;
		z.avail_out = (uInt)(cap - got > UINT32_MAX ? UINT32_MAX : cap - got);
		size_t before = z.avail_out;
		zr = inflate(&z, Z_NO_FLUSH);
		got += before - z.avail_out;
		if (zr == Z_STREAM_END && z.avail_in) /* another member follows */
			zr = inflateReset(&z);
	}
	inflateEnd(&z);
	mp_free(in);
	if (zr != Z_STREAM_END) {
		mp_free(b);
		return mp_errf(c->e, MP_EUSER,
			       "%s: expected a gzipped Chakra trace that inflates to its end, "
			       "found %s",
			       path,
			       zr == Z_BUF_ERROR ? "a truncated gzip stream" : "damaged data");
	}
	*out = b;
	*len = got;
	return MP_OK;
}

static int ck_slurp(struct ck *c, const char *path, uint8_t **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t n = 0, cap = 1 << 16;
	uint8_t *b = NULL;

	if (!f)
		return mp_errf(c->e, MP_EUSER, "%s: cannot read: %s", path, strerror(errno));
	b = mp_malloc(cap);
	for (;;) {
		n += fread(b + n, 1, cap - n, f);
		if (n < cap)
			break;
		cap *= 2;
		b = mp_realloc(b, cap);
	}
	if (ferror(f)) {
		int err = errno;
		fclose(f);
		mp_free(b);
		return mp_errf(c->e, MP_EUSER, "%s: cannot read: %s", path, strerror(err));
	}
	fclose(f);
	if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b) /* gzip's magic */
		return ck_gunzip(c, path, b, n, buf, len);
	*buf = b;
	*len = n;
	return MP_OK;
}

/* The varint length at *at (at most 10 bytes): 0 and *len, -1 when the file
 * ends inside it or it is too long. */
static int ck_varint(const uint8_t *b, size_t n, size_t *at, uint64_t *len)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		if (*at >= n)
			return -1;
		uint8_t x = b[(*at)++];
		v |= (uint64_t)(x & 0x7f) << shift;
		if (!(x & 0x80)) {
			*len = v;
			return 0;
		}
	}
	return -1;
}

static const char *ck_type_name(int t)
{
	const ProtobufCEnumValue *v =
	    protobuf_c_enum_descriptor_get_value(&chakra_proto_msg__node_type__descriptor, t);
	return v ? v->name : "an unknown type";
}

/* An integer attribute of any integer type. */
static int ck_attr_int(struct ck *c, const struct ck_node *v,
		       const ChakraProtoMsg__AttributeProto *a, int64_t *x)
{
	switch (a->value_case) {
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL:
		*x = a->int32_val;
		return MP_OK;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL:
		*x = a->int64_val;
		return MP_OK;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL:
		*x = a->uint32_val;
		return MP_OK;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL:
		if (a->uint64_val > INT64_MAX)
			break;
		*x = (int64_t)a->uint64_val;
		return MP_OK;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_VAL:
		*x = a->sint32_val;
		return MP_OK;
	case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_VAL:
		*x = a->sint64_val;
		return MP_OK;
	default:
		break;
	}
	return ck_err(c, v, "attribute '%s': expected an integer value", a->name);
}

/* A node's kind and the attributes mpsim reads. */
static int ck_node_attrs(struct ck *c, struct ck_node *v)
{
	const ChakraProtoMsg__Node *pb = v->pb;
	int64_t x = 0;

	v->coll = -1;
	v->peer = v->tag = -1;
	switch (pb->type) {
	case CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE:
		v->kind = CK_COMP;
		break;
	case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE:
		v->kind = CK_COLL;
		break;
	case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE:
		v->kind = CK_SEND;
		break;
	case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE:
		v->kind = CK_RECV;
		break;
	case CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE:
		v->kind = CK_MARK;
		break;
	default:
		if (!ck_listed(&c->p->ignore, ck_type_name(pb->type)))
			return ck_err(c, v,
				      "type %s (%d) is not one mpsim models (COMP_NODE, "
				      "COMM_COLL_NODE, COMM_SEND_NODE, COMM_RECV_NODE, "
				      "METADATA_NODE); name it in workload.ignore to run it as a "
				      "node that takes no time",
				      ck_type_name(pb->type), (int)pb->type);
		v->kind = CK_MARK;
		return MP_OK; /* its attributes are skipped with it */
	}
	for (size_t i = 0; i < pb->n_attr; i++) {
		const ChakraProtoMsg__AttributeProto *a = pb->attr[i];
		const char *nm = a->name;

		if (!strcmp(nm, "comm_type") || !strcmp(nm, "comm_size") ||
		    !strcmp(nm, "comm_src") || !strcmp(nm, "comm_dst") || !strcmp(nm, "comm_tag")) {
			if (ck_attr_int(c, v, a, &x))
				return MP_EUSER;
			if (x < 0)
				return ck_err(c, v,
					      "attribute '%s': expected 0 or more, found %lld", nm,
					      (long long)x);
			if (nm[5] == 't' && nm[6] == 'y')
				v->coll = x > 1000 ? 1000 : (int)x;
			else if (nm[5] == 's' && nm[6] == 'i')
				v->size = (uint64_t)x;
			else if (nm[5] == 't')
				v->tag = x;
			else if ((nm[5] == 's') == (v->kind == CK_RECV))
				v->peer = x; /* a receive's comm_src, a send's comm_dst */
		} else if (!strcmp(nm, "pg_name")) {
			if (a->value_case != CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL)
				return ck_err(c, v, "attribute 'pg_name': expected a string value");
			if (!a->string_val[0])
				continue;
			uint32_t g = 1;
			while (g < c->ngrp && strcmp(c->grp[g].name, a->string_val))
				g++;
			if (g == c->ngrp)
				return ck_err(
				    c, v,
				    "pg_name '%.60s': expected a group of workload.groups "
				    "(\"NAME=RANKS\"), found none of that name",
				    a->string_val);
			v->group = g;
		} else if (!ck_listed(&c->p->ignore, nm)) {
			bool known = false;
			for (const char *const *k = ck_ignored_attrs; *k && !known; k++)
				known = !strcmp(*k, nm);
			if (!known)
				return ck_err(
				    c, v,
				    "attribute '%.60s' is not one mpsim reads (comm_type, "
				    "comm_size, comm_src, comm_dst, comm_tag, pg_name); name "
				    "it in workload.ignore to skip it",
				    nm);
		}
	}
	if (v->kind == CK_COLL) {
		static const int ok[] = { CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE,
					  CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER,
					  CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER,
					  CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL,
					  CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST,
					  CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BARRIER };
		bool found = false;
		for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
			found |= v->coll == ok[i];
		if (!found)
			return ck_err(c, v,
				      v->coll < 0
					  ? "a collective node without comm_type"
					  : "comm_type %d: expected ALL_REDUCE (0), ALL_GATHER "
					    "(2), BROADCAST (5), ALL_TO_ALL (6), "
					    "REDUCE_SCATTER (7) or BARRIER (9)",
				      v->coll);
		const struct ck_group *g = &c->grp[v->group];
		bool in = !g->name;
		for (uint32_t k = 0; k < g->n && !in; k++)
			in = g->rank[k] == v->rank;
		if (!in)
			return ck_err(c, v, "group '%s' does not hold rank %u, whose file this is",
				      g->name, v->rank);
	}
	if (v->kind == CK_SEND || v->kind == CK_RECV) {
		const char *key = v->kind == CK_SEND ? "comm_dst" : "comm_src";
		if (v->peer < 0)
			return ck_err(c, v, "%s: expected another rank below %u, found none", key,
				      c->nranks);
		if (v->peer >= c->nranks || v->peer == v->rank)
			return ck_err(c, v, "%s: expected another rank below %u, found %lld", key,
				      c->nranks, (long long)v->peer);
	}
	return MP_OK;
}

/* The trace's schema version: GlobalMetadata.version, or, when that is
 * empty, what follows "chakra." in its attribute "schema" (Chakra's MSCCL-IR
 * converter writes version "" and schema "1.0.2-chakra.0.0.4", as the
 * custom-collective examples of ASTRA-sim carry). */
static const char *ck_schema_version(const ChakraProtoMsg__GlobalMetadata *gm)
{
	if (gm->version && gm->version[0])
		return gm->version;
	for (size_t i = 0; i < gm->n_attr; i++) {
		const ChakraProtoMsg__AttributeProto *a = gm->attr[i];
		const char *at;
		if (a->name && !strcmp(a->name, "schema") &&
		    a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL &&
		    (at = strstr(a->string_val, "chakra.")))
			return at + strlen("chakra.");
	}
	return "";
}

static int ck_read_rank(struct ck *c, uint32_t r)
{
	const char *path = c->file[r];
	uint8_t *b = NULL;
	size_t n = 0, at = 0, start;
	uint64_t len;
	int rc = MP_OK;

	if (ck_slurp(c, path, &b, &n))
		return MP_EUSER;
	if (ck_varint(b, n, &at, &len) || len > n - at) {
		rc = mp_errf(c->e, MP_EUSER,
			     "%s: expected a Chakra execution trace (a length-prefixed "
			     "GlobalMetadata message first), found %s",
			     path, n ? "a truncated first message" : "an empty file");
		goto out;
	}
	ChakraProtoMsg__GlobalMetadata *gm =
	    chakra_proto_msg__global_metadata__unpack(NULL, (size_t)len, b + at);
	const char *ver = gm ? ck_schema_version(gm) : "";
	unsigned minor = 0;
	char tail = 0;
	if (!gm || sscanf(ver, "0.0.%u%c", &minor, &tail) != 1 || minor < 4) {
		rc = mp_errf(c->e, MP_EUSER,
			     "%s: expected a Chakra execution trace whose GlobalMetadata has "
			     "schema version 0.0.4 or a later 0.0.x, found %s%.40s%s",
			     path, gm ? "version '" : "a first message that does not decode as one",
			     ver, gm ? "'" : "");
		if (gm)
			chakra_proto_msg__global_metadata__free_unpacked(gm, NULL);
		goto out;
	}
	chakra_proto_msg__global_metadata__free_unpacked(gm, NULL);
	at += (size_t)len;
	while (at < n) {
		const struct ck_node *last =
		    c->nnodes > c->first[r] ? &c->node[c->nnodes - 1] : NULL;
		char after[96];

		if (last)
			snprintf(after, sizeof after, "after node %llu",
				 (unsigned long long)last->pb->id);
		else
			snprintf(after, sizeof after, "after the GlobalMetadata");
		start = at;
		if (ck_varint(b, n, &at, &len) || len > n - at) {
			rc = mp_errf(c->e, MP_EUSER,
				     "%s: truncated: the message at byte %zu (%s) %s", path, start,
				     after,
				     at >= n ? "has no complete length"
					     : "is longer than what is left of the file");
			goto out;
		}
		ChakraProtoMsg__Node *pb =
		    chakra_proto_msg__node__unpack(NULL, (size_t)len, b + at);
		if (!pb) {
			rc = mp_errf(c->e, MP_EUSER,
				     "%s: the message at byte %zu (%s) does not decode as a Chakra "
				     "Node (a wrong schema, or a damaged file)",
				     path, start, after);
			goto out;
		}
		at += (size_t)len;
		if (c->nnodes == c->cap) {
			c->cap = c->cap ? 2 * c->cap : 256;
			c->node = mp_realloc(c->node, c->cap * sizeof *c->node);
		}
		struct ck_node *v = &c->node[c->nnodes++];
		memset(v, 0, sizeof *v);
		v->pb = pb;
		v->rank = r;
		if (ck_node_attrs(c, v)) {
			rc = MP_EUSER;
			goto out;
		}
	}
out:
	mp_free(b);
	return rc;
}

/* ---- groups ------------------------------------------------------------------- */

static int ck_groups(struct ck *c)
{
	const struct opt_strlist *l = &c->p->groups;

	c->ngrp = (uint32_t)l->n + 1;
	c->grp = mp_calloc(c->ngrp, sizeof *c->grp);
	c->grp[0].n = c->nranks; /* every rank */
	c->grp[0].rank = mp_malloc(c->nranks * sizeof(uint32_t));
	for (uint32_t r = 0; r < c->nranks; r++)
		c->grp[0].rank[r] = r;
	for (size_t i = 0; i < l->n; i++) {
		struct ck_group *g = &c->grp[i + 1];
		const char *s = l->v[i], *eq = strchr(s, '=');
		char *cur;

		if (!eq || eq == s)
			return mp_errf(c->e, MP_EUSER,
				       "groups: expected \"NAME=RANKS\" (e.g. \"tp0=0-3\"), found "
				       "'%s'",
				       s);
		g->name = mp_strdup(s);
		g->name[eq - s] = '\0';
		for (size_t k = 0; k <= i; k++)
			if (k < i && !strcmp(c->grp[k + 1].name, g->name))
				return mp_errf(c->e, MP_EUSER, "groups: group '%s' is given twice",
					       g->name);
		g->rank = mp_malloc(c->nranks * sizeof(uint32_t));
		cur = g->name + (eq - s) + 1;
		for (char *t; (t = workload_next_token(&cur));) {
			char *dash = strchr(t, '-');
			uint64_t a, b;

			if (dash)
				*dash = '\0';
			if (workload_parse_uint(t, c->nranks - 1, &a) ||
			    (dash ? workload_parse_uint(dash + 1, c->nranks - 1, &b)
				  : (b = a, 0)) ||
			    b < a)
				return mp_errf(c->e, MP_EUSER,
					       "groups: group '%s': expected ranks (or a-b ranges) "
					       "below %u, the trace's ranks",
					       g->name, c->nranks);
			for (uint64_t x = a; x <= b; x++) {
				for (uint32_t k = 0; k < g->n; k++)
					if (g->rank[k] == x)
						return mp_errf(c->e, MP_EUSER,
							       "groups: group '%s' lists rank %llu "
							       "twice",
							       g->name, (unsigned long long)x);
				g->rank[g->n++] = (uint32_t)x;
			}
		}
		if (!g->n)
			return mp_errf(c->e, MP_EUSER, "groups: group '%s' has no ranks", g->name);
	}
	return MP_OK;
}

/* ---- nodes to units ------------------------------------------------------------ */

static uint32_t ck_new_unit(struct ck *c, int kind)
{
	c->unit = mp_realloc(c->unit, (c->nunits + 1) * sizeof *c->unit);
	c->unit[c->nunits] = (struct ck_unit){ .mem0 = (uint32_t)c->nmem, .kind = kind };
	return (uint32_t)c->nunits++;
}

static void ck_add_member(struct ck *c, uint32_t u, uint32_t v)
{
	c->mem = mp_realloc(c->mem, (c->nmem + 1) * sizeof *c->mem);
	c->mem[c->nmem++] = v;
	c->unit[u].nmem++;
	c->node[v].unit = u;
}

static const struct ck *ck_sort_ctx;

static int ck_byid_cmp(const void *a, const void *b)
{
	uint64_t x = ck_sort_ctx->node[*(const uint32_t *)a].pb->id,
		 y = ck_sort_ctx->node[*(const uint32_t *)b].pb->id;
	return (x > y) - (x < y);
}

/* Node index of id in rank r, or UINT32_MAX. */
static uint32_t ck_find(const struct ck *c, uint32_t r, uint64_t id)
{
	size_t lo = c->first[r], hi = c->first[r + 1];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t m = c->node[c->byid[mid]].pb->id;
		if (m == id)
			return c->byid[mid];
		if (m < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return UINT32_MAX;
}

/* p2p: sends and receives in (sender, receiver, tag, file order). */
static int ck_p2p_cmp(const void *a, const void *b)
{
	const struct ck_node *x = &ck_sort_ctx->node[*(const uint32_t *)a],
			     *y = &ck_sort_ctx->node[*(const uint32_t *)b];
	int64_t kx[3] = { x->kind == CK_SEND ? x->rank : x->peer,
			  x->kind == CK_SEND ? x->peer : x->rank, x->tag },
		ky[3] = { y->kind == CK_SEND ? y->rank : y->peer,
			  y->kind == CK_SEND ? y->peer : y->rank, y->tag };
	for (int i = 0; i < 3; i++)
		if (kx[i] != ky[i])
			return (kx[i] > ky[i]) - (kx[i] < ky[i]);
	uint32_t ia = *(const uint32_t *)a, ib = *(const uint32_t *)b;
	return (ia > ib) - (ia < ib);
}

static int ck_units(struct ck *c)
{
	size_t n = c->nnodes;
	uint32_t *sends = mp_malloc((n + 1) * sizeof *sends),
		 *recvs = mp_malloc((n + 1) * sizeof *recvs);
	size_t ns = 0, nr = 0;
	int rc = MP_OK;

	/* ids, unique per file */
	c->byid = mp_malloc((n + 1) * sizeof *c->byid);
	for (size_t i = 0; i < n; i++)
		c->byid[i] = (uint32_t)i;
	ck_sort_ctx = c;
	for (uint32_t r = 0; r < c->nranks; r++) {
		uint32_t a = c->first[r], b = c->first[r + 1];
		qsort(c->byid + a, b - a, sizeof *c->byid, ck_byid_cmp);
		for (uint32_t i = a + 1; i < b; i++)
			if (c->node[c->byid[i]].pb->id == c->node[c->byid[i - 1]].pb->id) {
				rc =
				    ck_err(c, &c->node[c->byid[i]],
					   "expected a unique node id, found it twice in the file");
				goto out;
			}
	}
	/* plain nodes; sends and receives aside */
	for (size_t i = 0; i < n; i++) {
		struct ck_node *v = &c->node[i];
		if (v->kind == CK_MARK || v->kind == CK_COMP)
			ck_add_member(c, ck_new_unit(c, v->kind), (uint32_t)i);
		else if (v->kind == CK_SEND)
			sends[ns++] = (uint32_t)i;
		else if (v->kind == CK_RECV)
			recvs[nr++] = (uint32_t)i;
	}
	/* collectives: the k-th of group g on every member */
	for (uint32_t gi = 0; gi < c->ngrp; gi++) {
		const struct ck_group *g = &c->grp[gi];
		uint32_t *cnt = mp_calloc(g->n, sizeof *cnt), most = 0, who = 0;
		for (uint32_t k = 0; k < g->n; k++) {
			uint32_t r = g->rank[k];
			for (uint32_t i = c->first[r]; i < c->first[r + 1]; i++)
				if (c->node[i].kind == CK_COLL && c->node[i].group == gi)
					c->node[i].ord = cnt[k]++;
			if (cnt[k] > most) {
				most = cnt[k];
				who = k;
			}
		}
		for (uint32_t k = 0; k < g->n && !rc; k++) {
			if (cnt[k] == most)
				continue;
			uint32_t r = g->rank[who], i = c->first[r];
			while (c->node[i].kind != CK_COLL || c->node[i].group != gi ||
			       c->node[i].ord != cnt[k])
				i++;
			rc = ck_err(c, &c->node[i],
				    "collective %u on group '%s' has no peer on rank %u (%s has %u "
				    "collectives on that group, this file %u)",
				    cnt[k] + 1, g->name ? g->name : "(every rank)", g->rank[k],
				    c->file[g->rank[k]], cnt[k], most);
		}
		mp_free(cnt);
		if (rc)
			goto out;
		for (uint32_t o = 0; o < most; o++) {
			uint32_t u = ck_new_unit(c, CK_COLL);
			for (uint32_t k = 0; k < g->n; k++) {
				uint32_t r = g->rank[k], i = c->first[r];
				while (c->node[i].kind != CK_COLL || c->node[i].group != gi ||
				       c->node[i].ord != o)
					i++;
				const struct ck_node *v0 =
				    k ? &c->node[c->mem[c->unit[u].mem0]] : &c->node[i];
				if (c->node[i].coll != v0->coll || c->node[i].size != v0->size) {
					rc = ck_err(
					    c, &c->node[i],
					    "collective %u on group '%s' is comm_type %d of "
					    "%llu bytes here but comm_type %d of %llu bytes "
					    "in %s (node %llu)",
					    o + 1, g->name ? g->name : "(every rank)",
					    c->node[i].coll, (unsigned long long)c->node[i].size,
					    v0->coll, (unsigned long long)v0->size,
					    c->file[v0->rank], (unsigned long long)v0->pb->id);
					goto out;
				}
				ck_add_member(c, u, i);
			}
		}
	}
	/* sends meet receives */
	if (ns) /* qsort's array must not be null, even for no element */
		qsort(sends, ns, sizeof *sends, ck_p2p_cmp);
	if (nr)
		qsort(recvs, nr, sizeof *recvs, ck_p2p_cmp);
	size_t i = 0, j = 0;
	while (i < ns || j < nr) {
		int cmp = i == ns ? 1 : j == nr ? -1 : 0;
		if (!cmp) {
			const struct ck_node *s = &c->node[sends[i]], *t = &c->node[recvs[j]];
			int64_t ks[3] = { s->rank, s->peer, s->tag },
				kt[3] = { t->peer, t->rank, t->tag };
			for (int q = 0; q < 3 && !cmp; q++)
				cmp = (ks[q] > kt[q]) - (ks[q] < kt[q]);
		}
		if (cmp) {
			const struct ck_node *v = &c->node[cmp < 0 ? sends[i] : recvs[j]];
			rc = ck_err(
			    c, v, "%s rank %lld with comm_tag %lld has no matching %s in %s",
			    cmp < 0 ? "send to" : "receive from", (long long)v->peer,
			    (long long)v->tag, cmp < 0 ? "receive" : "send", c->file[v->peer]);
			goto out;
		}
		c->node[sends[i]].mate = recvs[j];
		c->node[recvs[j]].mate = sends[i];
		ck_add_member(c, ck_new_unit(c, CK_SEND), sends[i++]);
		ck_add_member(c, ck_new_unit(c, CK_RECV), recvs[j++]);
	}
out:
	mp_free(sends);
	mp_free(recvs);
	return rc;
}

/* ---- order and generation ------------------------------------------------------ */

/* The nodes node v depends on (control, then data) into out; a dependency
 * the file lacks is refused. */
static int ck_deps(struct ck *c, uint32_t v, uint32_t *out, size_t *nout)
{
	const ChakraProtoMsg__Node *pb = c->node[v].pb;

	*nout = 0;
	for (int list = 0; list < 2; list++) {
		size_t nd = list ? pb->n_data_deps : pb->n_ctrl_deps;
		const uint64_t *d = list ? pb->data_deps : pb->ctrl_deps;
		for (size_t k = 0; k < nd; k++) {
			uint32_t w = ck_find(c, c->node[v].rank, d[k]);
			if (w == UINT32_MAX)
				return ck_err(c, &c->node[v],
					      "depends on node %llu, which the file does not have",
					      (unsigned long long)d[k]);
			out[(*nout)++] = w;
		}
	}
	return MP_OK;
}

static size_t ck_ndeps(const struct ck *c, uint32_t v)
{
	return c->node[v].pb->n_ctrl_deps + c->node[v].pb->n_data_deps + 1;
}

/* What orders node v: its dependencies and, for a receive, its send. */
static int ck_order_deps(struct ck *c, uint32_t v, uint32_t *out, size_t *nout)
{
	if (ck_deps(c, v, out, nout))
		return MP_EUSER;
	if (c->node[v].kind == CK_RECV)
		out[(*nout)++] = c->node[v].mate;
	return MP_OK;
}

/* Units in an order where every unit follows those it depends on. */
static int ck_order(struct ck *c, uint32_t *order)
{
	size_t U = c->nunits, top = 0, seen = 0, maxd = 1;
	uint32_t *indeg = mp_calloc(U + 1, sizeof *indeg), *off = mp_calloc(U + 2, sizeof *off);
	uint32_t *adj, *stack = mp_malloc((U + 1) * sizeof *stack), *dn;
	size_t nd;
	int rc = MP_OK;

	for (size_t v = 0; v < c->nnodes; v++)
		if (ck_ndeps(c, (uint32_t)v) > maxd)
			maxd = ck_ndeps(c, (uint32_t)v);
	dn = mp_malloc(maxd * sizeof *dn);
	for (size_t v = 0; v < c->nnodes; v++) {
		if (ck_order_deps(c, (uint32_t)v, dn, &nd)) {
			rc = MP_EUSER;
			adj = NULL;
			goto out;
		}
		for (size_t k = 0; k < nd; k++) {
			indeg[c->node[v].unit]++;
			off[c->node[dn[k]].unit + 2]++;
		}
	}
	for (size_t u = 0; u < U; u++)
		off[u + 2] += off[u + 1];
	adj = mp_malloc((off[U + 1] + 1) * sizeof *adj);
	for (size_t v = 0; v < c->nnodes; v++) {
		ck_order_deps(c, (uint32_t)v, dn, &nd);
		for (size_t k = 0; k < nd; k++)
			adj[off[c->node[dn[k]].unit + 1]++] = c->node[v].unit;
	}
	for (size_t u = 0; u < U; u++)
		if (!indeg[u])
			stack[top++] = (uint32_t)u;
	while (top) {
		uint32_t u = stack[--top];
		order[seen++] = u;
		for (uint32_t k = off[u]; k < off[u + 1]; k++)
			if (--indeg[adj[k]] == 0)
				stack[top++] = adj[k];
	}
	if (seen < U) {
		/* walk back from a unit left over to a left-over dependency until
		 * one repeats: it lies on a cycle */
		uint8_t *mark = mp_calloc(U, 1);
		uint32_t u = 0, v = 0, w = 0;
		while (!indeg[u])
			u++;
		while (!mark[u]) {
			mark[u] = 1;
			bool next = false;
			for (uint32_t m = 0; m < c->unit[u].nmem && !next; m++) {
				v = c->mem[c->unit[u].mem0 + m];
				ck_order_deps(c, v, dn, &nd);
				for (size_t k = 0; k < nd && !next; k++)
					if (indeg[c->node[dn[k]].unit]) {
						w = dn[k];
						next = true;
					}
			}
			MP_ASSERT(next);
			u = c->node[w].unit;
		}
		rc = ck_err(c, &c->node[v],
			    "expected dependencies without a cycle, but it waits for node %llu "
			    "of %s, which waits (through the trace's nodes) for it again",
			    (unsigned long long)c->node[w].pb->id, c->file[c->node[w].rank]);
		mp_free(mark);
	}
out:
	mp_free(indeg);
	mp_free(off);
	mp_free(adj);
	mp_free(stack);
	mp_free(dn);
	return rc;
}

/* The ps a compute node takes. */
static simtime_t ck_compute(const struct ck *c, const struct ck_node *v)
{
	double ps = (double)v->pb->duration_micros * 1e6 * c->p->compute_scale;
	return ps >= 1.8e19 ? (simtime_t)1.8e19 : (simtime_t)llround(ps);
}

/* The activity of node v (training.csv, timeline.json): from flow `from`
 * (lead before its release) to flow `to`. */
static void ck_act(struct ck *c, const struct ck_node *v, bool comm, uint32_t from, uint32_t to,
		   simtime_t lead, struct flow_list *out)
{
	static const char *const what[] = {
		[CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE] = "ALL_REDUCE",
		[CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER] = "ALL_GATHER",
		[CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST] = "BROADCAST",
		[CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL] = "ALL_TO_ALL",
		[CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER] = "REDUCE_SCATTER",
		[CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BARRIER] = "BARRIER",
	};
	char name[96];
	struct wl_act a = { .rank = v->rank,
			    .layer = flow_list_name(out, v->pb->name ? v->pb->name : ""),
			    .layer_ix =
				(uint32_t)(v - c->node) - c->first[v->rank], /* in its file */
			    .phase = WL_PH_NODE,
			    .comm = comm,
			    .from = from,
			    .to = to,
			    .lead = lead,
			    .sync = UINT32_MAX };
	if (comm) {
		const struct ck_group *g = &c->grp[v->group];
		if (v->kind == CK_COLL)
			snprintf(name, sizeof name, "%s %.60s", what[v->coll],
				 g->name ? g->name : "all");
		else
			snprintf(name, sizeof name, "%s rank %lld",
				 v->kind == CK_SEND ? "SEND to" : "RECV from", (long long)v->peer);
		a.what = flow_list_name(out, name);
	}
	flow_list_act(out, &a);
}

/* A collective unit: its members' dependencies (dv, member m's from
 * dv[doff[m]]) through coll_lower. */
static void ck_emit_coll(struct ck *c, const struct ck_unit *u, const uint32_t *dv,
			 const uint32_t *doff, uint32_t *hosts, struct flow_list *out)
{
	static const int types[] = {
		[CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE] = COLL_ALLREDUCE,
		[CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER] = COLL_ALLGATHER,
		[CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST] = COLL_BROADCAST,
		[CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL] = COLL_ALLTOALL,
		[CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER] = COLL_REDUCESCATTER,
		[CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BARRIER] = COLL_ALLREDUCE,
	};
	const struct ck_node *v0 = &c->node[c->mem[u->mem0]];
	uint32_t n = u->nmem, *arrive = hosts + n, *done = hosts + 2 * n;
	struct coll_params cp = { .type = types[v0->coll],
				  .chunk = c->p->chunk,
				  .channels = c->p->channels,
				  .parallelism = c->p->parallelism };

	cp.algorithm = cp.type == COLL_ALLREDUCE ? c->p->algorithm : COLL_RING;
	cp.size = v0->coll == CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BARRIER ? 0 : v0->size;
	for (uint32_t m = 0; m < n; m++)
		hosts[m] = c->node[c->mem[u->mem0 + m]].rank;
	uint32_t start = coll_lower(&cp, hosts, n, c->env, 1, dv, doff, 0, arrive, done, out);
	for (uint32_t m = 0; m < n && !out->over; m++) {
		struct ck_node *v = &c->node[c->mem[u->mem0 + m]];
		v->done = done[m];
		ck_act(c, v, true, arrive[m], done[m], 0, out);
		out->acts[out->nacts - 1].sync = start;
	}
}

static void ck_emit(struct ck *c, const uint32_t *order, struct flow_list *out)
{
	size_t maxd = 1, cap = 0;
	uint32_t *dv = NULL, *dn, *hosts = mp_malloc((3 * (size_t)c->nranks + 1) * sizeof *hosts),
		 *doff = mp_malloc(((size_t)c->nranks + 2) * sizeof *doff);

	for (size_t v = 0; v < c->nnodes; v++)
		if (ck_ndeps(c, (uint32_t)v) > maxd)
			maxd = ck_ndeps(c, (uint32_t)v);
	dn = mp_malloc(maxd * sizeof *dn);
	for (size_t q = 0; q < c->nunits && !out->over; q++) {
		const struct ck_unit *u = &c->unit[order[q]];
		size_t nv = 0, nd;
		/* what the unit waits for: its members' dependencies, done */
		for (uint32_t m = 0; m < u->nmem; m++) {
			uint32_t v = c->mem[u->mem0 + m];
			ck_deps(c, v, dn, &nd);
			if (nv + nd > cap) {
				cap = 2 * (nv + nd);
				dv = mp_realloc(dv, cap * sizeof *dv);
			}
			doff[m] = (uint32_t)nv;
			for (size_t k = 0; k < nd; k++)
				dv[nv++] = c->node[dn[k]].done;
		}
		doff[u->nmem] = (uint32_t)nv;
		struct ck_node *v0 = &c->node[c->mem[u->mem0]];
		if (u->kind == CK_MARK || u->kind == CK_COMP) {
			simtime_t t = u->kind == CK_COMP ? ck_compute(c, v0) : 0;
			v0->done = flow_list_marker_after(out, dv, nv, t);
			if (u->kind == CK_COMP)
				ck_act(c, v0, false, v0->done, v0->done, t, out);
		} else if (u->kind == CK_SEND) {
			flow_list_push(out, v0->rank, c->node[v0->mate].rank,
				       v0->size ? v0->size : 1, 0);
			if (out->over)
				break;
			struct flow_spec *f = &out->v[out->n - 1];
			f->job = 1;
			for (size_t k = 0; k < nv; k++)
				flow_list_dep(out, dv[k]);
			v0->done = f->id | FLOW_DEP_SENT;
			v0->msg = f->id;
			ck_act(c, v0, true, f->id, f->id, 0, out);
		} else if (u->kind == CK_RECV) { /* its send came first (ck_order_deps) */
			uint32_t msg = c->node[v0->mate].msg;
			if (nv + 1 > cap) {
				cap = 2 * (nv + 1);
				dv = mp_realloc(dv, cap * sizeof *dv);
			}
			dv[nv++] = msg;
			v0->done = flow_list_marker_after(out, dv, nv, 0);
			ck_act(c, v0, true, msg, v0->done, 0, out);
		} else {
			ck_emit_coll(c, u, dv, doff, hosts, out);
		}
	}
	mp_free(dv);
	mp_free(dn);
	mp_free(hosts);
	mp_free(doff);
}

static void ck_free(struct ck *c)
{
	for (size_t i = 0; i < c->nnodes; i++)
		chakra_proto_msg__node__free_unpacked(c->node[i].pb, NULL);
	mp_free(c->node);
	for (uint32_t r = 0; c->file && r < c->nranks; r++)
		mp_free(c->file[r]);
	mp_free(c->file);
	mp_free(c->first);
	mp_free(c->byid);
	for (uint32_t g = 0; g < c->ngrp; g++) {
		mp_free(c->grp[g].name);
		mp_free(c->grp[g].rank);
	}
	mp_free(c->grp);
	mp_free(c->unit);
	mp_free(c->mem);
}

/* <base_dir>/<trace>.<r>.et, or <trace>.<r>.et when absolute or no base. */
static char *ck_path(const struct ck_params *p, const struct wl_env *env, uint64_t r)
{
	size_t n = strlen(p->trace) + (env->base_dir ? strlen(env->base_dir) : 0) + 32;
	char *s = mp_malloc(n);

	if (p->trace[0] != '/' && env->base_dir && env->base_dir[0])
		snprintf(s, n, "%s/%s.%llu.et", env->base_dir, p->trace, (unsigned long long)r);
	else
		snprintf(s, n, "%s.%llu.et", p->trace, (unsigned long long)r);
	return s;
}

/* path, or path.gz when only that exists (a gzipped trace). */
static char *ck_path_gz(char *path)
{
	size_t n = strlen(path);
	char *gz = mp_malloc(n + 4);
	FILE *f;

	snprintf(gz, n + 4, "%s.gz", path);
	if ((f = fopen(path, "rb")) || !(f = fopen(gz, "rb"))) {
		mp_free(gz);
		if (f)
			fclose(f);
		return path;
	}
	fclose(f);
	mp_free(path);
	return gz;
}

static int ck_generate(const void *params, const struct wl_env *env, struct flow_list *out,
		       struct mp_err *e)
{
	const struct ck_params *p = params;
	struct ck c = { .p = p, .env = env, .e = e };
	struct flow_list_mark at = flow_list_at(out);
	uint32_t *order = NULL;
	int rc = MP_EUSER;

	if (!p->trace || !p->trace[0])
		return mp_errf(e, MP_EUSER,
			       "trace: expected the path prefix of the trace's files "
			       "(<trace>.0.et, <trace>.1.et, ...)");
	if (p->ranks > env->nhosts)
		return mp_errf(e, MP_EUSER,
			       "ranks: the trace has %llu ranks but the fabric has %u hosts",
			       (unsigned long long)p->ranks, env->nhosts);
	c.nranks = p->ranks ? (uint32_t)p->ranks : env->nhosts;
	{ /* one file more than the run's ranks: the trace is larger than the fabric */
		char *extra = ck_path_gz(ck_path(p, env, c.nranks));
		FILE *f = fopen(extra, "rb");
		if (f) {
			fclose(f);
			mp_errf(
			    e, MP_EUSER,
			    "%s exists: the trace has more ranks than the %u this run has (%s); "
			    "expected one file per rank",
			    extra, c.nranks,
			    p->ranks ? "ranks:" : "the fabric's hosts, or set workload.ranks");
			mp_free(extra);
			return MP_EUSER;
		}
		mp_free(extra);
	}
	c.file = mp_calloc(c.nranks, sizeof *c.file);
	c.first = mp_calloc(c.nranks + 1, sizeof *c.first);
	for (uint32_t r = 0; r < c.nranks; r++)
		c.file[r] = ck_path_gz(ck_path(p, env, r));
	if (ck_groups(&c))
		goto out;
	for (uint32_t r = 0; r < c.nranks; r++) {
		c.first[r] = (uint32_t)c.nnodes;
		if (ck_read_rank(&c, r))
			goto out;
	}
	c.first[c.nranks] = (uint32_t)c.nnodes;
	if (!c.nnodes) {
		mp_errf(e, MP_EUSER, "%s: expected nodes after the GlobalMetadata, found none",
			c.file[0]);
		goto out;
	}
	if (ck_units(&c))
		goto out;
	order = mp_malloc((c.nunits + 1) * sizeof *order);
	if (ck_order(&c, order))
		goto out;
	ck_emit(&c, order, out);
	rc = MP_OK;
out:
	if (rc) /* nothing half-built */
		flow_list_back_to(out, at);
	mp_free(order);
	ck_free(&c);
	return rc;
}

const struct workload_ops chakra_workload_ops = {
	.name = "chakra",
	.summary = "Chakra execution traces (mlcommons/chakra, schema 0.0.4): one file per rank, "
		   "<trace>.<rank>.et (or .et.gz, gzipped), of protobuf messages each after its "
		   "varint length (a "
		   "GlobalMetadata, then Nodes); COMP_NODE takes duration_micros x "
		   "compute_scale; COMM_COLL_NODE (comm_type ALL_REDUCE, ALL_GATHER, "
		   "REDUCE_SCATTER, ALL_TO_ALL, BROADCAST, BARRIER; comm_size bytes) runs the "
		   "collective layer's algorithm on its pg_name group (`groups`; none = every "
		   "rank), the k-th of a group on each member being one collective; "
		   "COMM_SEND_NODE / COMM_RECV_NODE (comm_dst / comm_src, comm_tag, "
		   "comm_size) are one message, sent when the send's dependencies are done; "
		   "METADATA_NODE takes no time; ctrl_deps and "
		   "data_deps order them; other node types and attributes are refused unless "
		   "named in `ignore`",
	.opts = ck_opts,
	.params_size = sizeof(struct ck_params),
	.generate = ck_generate,
};
