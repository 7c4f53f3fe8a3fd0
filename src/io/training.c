/* training.c - a training workload's results: training.csv, timeline.json,
 * summary.json's `training` object and the summary table's line.
 *
 * Owns: the functions of io/training.h.
 *
 * training.csv has a row per rank, iteration, layer (its place in the
 * workload) and phase, in the order the rank began them: compute_us (the
 * compute phases), comm_us (the communication the rank took part in, from
 * when it reached it to when its part ended, waiting for peers included),
 * exposed_comm_us (result.h: train_rec) and peer_wait_us (of comm_us, the
 * time until the last rank of the group reached the collective); then a row per rank and iteration,
 * layer "(iteration)", phase "total", with the sums and end_us, the time the
 * rank's last activity of that iteration ended. The slowest rank's last
 * total row says so in `note`, with the communication it waited for longest.
 *
 * timeline.json is Chrome's trace-event format (read by Perfetto and
 * chrome://tracing): one process per rank, threads "compute" and
 * "communication" (and more lanes of each where events overlap: lane_of),
 * complete events ("ph": "X") with timestamps and durations in
 * microseconds.
 */
#include "io/training.h"

#include <stdlib.h>
#include <string.h>

#include "core/mem.h"
#include "io/csv.h"
#include "io/results.h"

#define TIMELINE_LANES 64 /* threads per kind and rank in timeline.json */

void training_waited(const struct run_result *r, char *buf, size_t n)
{
	const struct train_summary *t = &r->training;
	if (t->waited == SIZE_MAX) {
		snprintf(buf, n, "no exposed communication");
		return;
	}
	const struct train_rec *v = &r->train[t->waited];
	char peers[96] = "";
	if (v->peers)
		snprintf(peers, sizeof peers,
			 ", %.3f us of its %.3f waiting for the group's last rank",
			 time_to_us(v->peers), time_to_us(v->end - v->start));
	snprintf(buf, n, "%s of layer %u '%.40s' (%s, iteration %u): %.3f us exposed%s", v->what,
		 v->layer_ix, v->layer, v->phase, v->iter, time_to_us(v->exposed), peers);
}

/* ---- training.csv -------------------------------------------------------------- */

struct row {
	uint32_t iter, layer_ix;
	const struct train_rec *first; /* its earliest record */
	const char *what;	       /* its communication ("" = none) */
	simtime_t compute, comm, exposed, peers, end;
};

static bool same_row(const struct train_rec *x, const struct train_rec *y)
{
	return x->iter == y->iter && x->layer_ix == y->layer_ix && !strcmp(x->phase, y->phase);
}

static int row_key_cmp(const void *a, const void *b)
{
	const struct train_rec *x = *(const struct train_rec *const *)a,
			       *y = *(const struct train_rec *const *)b;
	if (x->iter != y->iter)
		return x->iter < y->iter ? -1 : 1;
	if (x->layer_ix != y->layer_ix)
		return x->layer_ix < y->layer_ix ? -1 : 1;
	int c = strcmp(x->phase, y->phase);
	if (c)
		return c;
	return (x->start > y->start) - (x->start < y->start);
}

static int row_time_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	if (x->iter != y->iter)
		return x->iter < y->iter ? -1 : 1;
	if (x->first->start != y->first->start)
		return x->first->start < y->first->start ? -1 : 1;
	return (x->layer_ix > y->layer_ix) - (x->layer_ix < y->layer_ix);
}

static void put_row(FILE *f, uint32_t rank, const struct row *w, const char *layer,
		    const char *phase, const char *what, const char *note)
{
	char *l = csv_field(layer, false), *c = csv_field(what, false),
	     *nt = csv_field(note, false);
	fprintf(f, "%u,%u,", rank, w->iter);
	if (w->first)
		fprintf(f, "%u", w->layer_ix);
	fprintf(f, ",%s,%s,%.6f,%.6f,%.6f,%.6f,%s,%.6f,%s\n", l, phase, time_to_us(w->compute),
		time_to_us(w->comm), time_to_us(w->exposed), time_to_us(w->peers), c,
		time_to_us(w->end), nt);
	mp_free(l);
	mp_free(c);
	mp_free(nt);
}

/* The rows of one rank's records v[0 .. n). */
static void rank_rows(FILE *f, const struct run_result *r, const struct train_rec *v, size_t n)
{
	const struct train_rec **ix = mp_malloc(n * sizeof *ix);
	struct row *rows = mp_calloc(n, sizeof *rows);
	size_t nr = 0;

	for (size_t i = 0; i < n; i++)
		ix[i] = &v[i];
	qsort(ix, n, sizeof *ix, row_key_cmp);
	for (size_t i = 0; i < n; i++) {
		const struct train_rec *a = ix[i];
		if (!nr || !same_row(ix[i - 1], a))
			rows[nr++] = (struct row){
				.iter = a->iter, .layer_ix = a->layer_ix, .first = a, .what = ""
			};
		struct row *w = &rows[nr - 1];
		*(a->comm ? &w->comm : &w->compute) += a->end - a->start;
		w->exposed += a->exposed;
		w->peers += a->peers;
		if (a->end > w->end)
			w->end = a->end;
		if (a->comm && !w->what[0])
			w->what = a->what;
	}
	qsort(rows, nr, sizeof *rows, row_time_cmp);
	for (size_t i = 0; i < nr;) {
		struct row tot = { .iter = rows[i].iter };
		for (; i < nr && rows[i].iter == tot.iter; i++) {
			const struct train_rec *a = rows[i].first;
			put_row(f, v[0].rank, &rows[i], a->layer, a->phase, rows[i].what, "");
			tot.compute += rows[i].compute;
			tot.comm += rows[i].comm;
			tot.exposed += rows[i].exposed;
			tot.peers += rows[i].peers;
			tot.end = rows[i].end > tot.end ? rows[i].end : tot.end;
		}
		char note[320] = "";
		if (v[0].rank == r->training.slowest && tot.iter + 1 == r->training.iters) {
			char w[256];
			training_waited(r, w, sizeof w);
			snprintf(note, sizeof note, "slowest rank; waited longest for %s", w);
		}
		put_row(f, v[0].rank, &tot, "(iteration)", "total", "", note);
	}
	mp_free(ix);
	mp_free(rows);
}

int training_write_csv(FILE *f, const struct run_result *r)
{
	fputs("rank,iteration,layer_index,layer,phase,compute_us,comm_us,exposed_comm_us,"
	      "peer_wait_us,communication,end_us,note\n",
	      f);
	for (size_t i = 0, j; i < r->ntrain; i = j) {
		for (j = i; j < r->ntrain && r->train[j].rank == r->train[i].rank; j++)
			;
		rank_rows(f, r, r->train + i, j - i);
	}
	return ferror(f) ? -1 : 0;
}

/* ---- summary.json and the table ------------------------------------------------- */

void training_json(FILE *f, const struct run_result *r)
{
	const struct train_summary *t = &r->training;
	char w[256];

	if (!r->ntrain)
		return;
	training_waited(r, w, sizeof w);
	fprintf(f,
		"  \"training\": {\"ranks\": %u, \"iterations\": %u, \"iteration_time_us\": %.6f, "
		"\"slowest_rank\": %u, \"slowest_compute_us\": %.6f, \"slowest_comm_us\": %.6f, "
		"\"slowest_exposed_comm_us\": %.6f, \"waited_for\": ",
		t->ranks, t->iters, time_to_us(t->iteration), t->slowest, time_to_us(t->compute),
		time_to_us(t->comm), time_to_us(t->exposed));
	json_string(f, w);
	fputs(", \"iteration_end_us\": [", f);
	for (uint32_t i = 0; i < t->iters; i++)
		fprintf(f, "%s%.6f", i ? ", " : "", time_to_us(t->iter_end[i]));
	fputs("]},\n", f);
}

void training_print(FILE *f, const struct run_result *r)
{
	const struct train_summary *t = &r->training;
	char w[256];

	if (!r->ntrain)
		return;
	training_waited(r, w, sizeof w);
	fprintf(f,
		"\n  training: iteration %.3f us (%u iterations, %u ranks); slowest rank %u: "
		"compute %.3f us, exposed communication %.3f us, waited longest for %s "
		"(training.csv)\n",
		time_to_us(t->iteration), t->iters, t->ranks, t->slowest, time_to_us(t->compute),
		time_to_us(t->exposed), w);
}

/* ---- timeline.json -------------------------------------------------------------- */

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The start before which at most max records begin (SIMTIME_MAX: all of them). */
static simtime_t timeline_cut(const struct run_result *r, uint64_t max)
{
	if (r->ntrain <= max)
		return SIMTIME_MAX;
	simtime_t *t = mp_malloc(r->ntrain * sizeof *t), cut;
	for (size_t i = 0; i < r->ntrain; i++)
		t[i] = r->train[i].start;
	qsort(t, r->ntrain, sizeof *t, u64_cmp);
	cut = t[max];
	mp_free(t);
	return cut;
}

/* The lane (thread) of an event: the first of its kind whose last event ended
 * by this one's start, named when first used. Compute lanes are threads 0,
 * 1, ... and communication lanes 100, 101, ... (a thread's complete events
 * must nest: overlapping ones, such as a weight-grad collective behind later
 * layers or a trace's concurrent kernels, get lanes of their own). */
struct lanes {
	simtime_t end[2][TIMELINE_LANES];
	uint32_t n[2];
};

static uint32_t lane_of(FILE *f, struct lanes *l, const struct train_rec *v)
{
	int kind = v->comm;
	uint32_t k = 0;
	while (k < l->n[kind] && l->end[kind][k] > v->start)
		k++;
	if (k == TIMELINE_LANES)
		k = TIMELINE_LANES - 1; /* more overlap than that: they share the last lane */
	if (k == l->n[kind]) {
		char name[32];
		snprintf(name, sizeof name, "%s%s%u", kind ? "communication" : "compute",
			 k ? " " : "", k + 1);
		if (!k)
			name[strlen(name) - 1] =
			    '\0'; /* the first lane: "compute", "communication" */
		fprintf(f,
			",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
			"\"args\":{\"name\":\"%s\"}}",
			v->rank, 100 * (uint32_t)kind + k, name);
		l->n[kind] = k + 1;
	}
	l->end[kind][k] = v->end > l->end[kind][k] ? v->end : l->end[kind][k];
	return 100 * (uint32_t)kind + k;
}

/* One rank's events, those that start before `cut`. */
static size_t timeline_rank(FILE *f, const struct train_rec *v, size_t n, simtime_t cut,
			    bool *comma)
{
	struct lanes l = { 0 };
	size_t kept = 0;

	fprintf(f,
		"%s\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{\"name\":\"rank "
		"%u\"}}",
		*comma ? "," : "", v[0].rank, v[0].rank);
	*comma = true;
	for (size_t i = 0; i < n; i++) {
		if (v[i].start >= cut)
			continue;
		uint32_t tid = lane_of(f, &l, &v[i]);
		fputs(",\n{\"name\":", f);
		char name[200];
		snprintf(name, sizeof name, "%s %s%s%s", v[i].layer, v[i].phase,
			 v[i].comm ? " " : "", v[i].what);
		json_string(f, name);
		fprintf(
		    f,
		    ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.6f,\"dur\":%.6f,\"pid\":%u,\"tid\":%u,"
		    "\"args\":{\"iteration\":%u,\"layer_index\":%u,\"exposed_us\":%.6f,"
		    "\"peer_wait_us\":%.6f}}",
		    v[i].comm ? "communication" : "compute", time_to_us(v[i].start),
		    time_to_us(v[i].end - v[i].start), v[i].rank, tid, v[i].iter, v[i].layer_ix,
		    time_to_us(v[i].exposed), time_to_us(v[i].peers));
		kept++;
	}
	return kept;
}

int training_write_timeline(FILE *f, const struct run_result *r, uint64_t max, size_t *kept)
{
	simtime_t cut = timeline_cut(r, max);
	bool comma = false;

	*kept = 0;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
	for (size_t i = 0, j; i < r->ntrain; i = j) {
		for (j = i; j < r->ntrain && r->train[j].rank == r->train[i].rank; j++)
			;
		*kept += timeline_rank(f, r->train + i, j - i, cut, &comma);
	}
	fputs("\n]}\n", f);
	return ferror(f) ? -1 : 0;
}
