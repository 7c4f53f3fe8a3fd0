/* flows_file.c - an explicit list of flows from a CSV file.
 *
 * Owns: flows_file_workload_ops and its parameters.
 * Format (mpsim's own):
 *
 *     # comment lines and blank lines are ignored
 *     src,dst,bytes,start
 *     0,5,2MB,0
 *     3,1,64KiB,10us
 *
 * The first other line is the header, exactly these four names, or these and
 * path, or these, path and ack_path. Then one flow a line: src and dst are host indices (decimal, below the
 * fabric's host count, different), bytes a size with an optional unit as in
 * experiment files ("4000", "64KB", "2MiB"), start a time with a unit ("0",
 * "10us", "1.5ms"), path (when the header has it) empty or a next-hop index:
 * the flow is pinned (struct flow_spec's pin), the load balancer never moves it;
 * ack_path the same for its ACKs, NACKs and CNPs alone (empty: as its data).
 * Spaces around fields are allowed. Flows keep the file's order (id = the
 * flow's position). Every error names flows-file:line.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/mem.h"
#include "workload/workload.h"

struct flows_file_params {
	char *file; /* path of the CSV file */
};

static const struct opt_desc flows_file_opts[] = {
	{ .name = "file",
	  .type = OPT_PATH,
	  .offset = offsetof(struct flows_file_params, file),
	  .def = NULL,
	  .help =
	      "CSV file with header src,dst,bytes,start (one flow a line); an optional fifth "
	      "column path pins a flow: every switch with a choice sends it to next hop path mod n "
	      "of its n (in a leaf-spine, path k = spine k), whatever the load balancer; "
	      "empty = the load balancer places it; a sixth, ack_path, pins its ACKs, NACKs and "
	      "CNPs alone the same way (empty = as its data)" },
	OPT_END,
};

#define FLOWS_FILE_FIELDS 6 /* the last two, path and ack_path, are optional */
static const char *const flows_file_header[FLOWS_FILE_FIELDS] = { "src",   "dst",  "bytes",
								  "start", "path", "ack_path" };
static const char *const flows_file_headers[3] = { "src,dst,bytes,start",
						   "src,dst,bytes,start,path",
						   "src,dst,bytes,start,path,ack_path" };

/* A path column: a next-hop index 0..65534, stored as index + 1. */
static int flows_file_path(const char *where, const char *col, const char *s, uint16_t *pin,
			   struct mp_err *e)
{
	uint64_t v;

	if (workload_parse_uint(s, 65534, &v))
		return mp_errf(e, MP_EUSER,
			       "%s: %s: expected a next-hop index 0..65534 or nothing, found '%s'",
			       where, col, s);
	*pin = (uint16_t)(v + 1);
	return MP_OK;
}

static int flows_file_generate(const void *params, const struct wl_env *env, struct flow_list *out,
			       struct mp_err *e)
{
	const struct flows_file_params *fp = params;
	const char *name = fp->file;
	char *text, *cur, *line;
	size_t len, n0 = out->n;
	int lineno = 0, seen_header = 0, nfields = FLOWS_FILE_FIELDS - 2, rc = MP_OK;

	if (!name)
		return mp_errf(e, MP_EUSER, "file: expected the path of a CSV flows file");
	if (workload_read_file(name, env->base_dir, &text, &len, e))
		return MP_EUSER;
	cur = text;
	while ((line = workload_next_line(&cur))) {
		char *f[FLOWS_FILE_FIELDS], where[320];
		uint32_t src = 0, dst = 0;
		uint64_t bytes;
		simtime_t start;
		uint16_t pin = 0, ack_pin = 0;
		int nf;

		lineno++;
		if (!line[0] || line[0] == '#')
			continue;
		nf = workload_split(line, ',', f, FLOWS_FILE_FIELDS);
		if (!seen_header) {
			int ok = nf >= FLOWS_FILE_FIELDS - 2 && nf <= FLOWS_FILE_FIELDS;

			for (int i = 0; ok && i < nf; i++)
				ok = !strcmp(f[i], flows_file_header[i]);
			if (!ok) {
				rc = mp_errf(e, MP_EUSER,
					     "%s:%d: expected the header line "
					     "'src,dst,bytes,start', 'src,dst,bytes,start,path' or "
					     "'src,dst,bytes,start,path,ack_path'",
					     name, lineno);
				goto out;
			}
			nfields = nf;
			seen_header = 1;
			continue;
		}
		if (nf != nfields) {
			rc = mp_errf(e, MP_EUSER,
				     "%s:%d: expected %d comma-separated fields "
				     "(%s), found %s%d",
				     name, lineno, nfields,
				     flows_file_headers[nfields - (FLOWS_FILE_FIELDS - 2)],
				     nf > nfields ? "more than " : "", nf > nfields ? nfields : nf);
			goto out;
		}
		snprintf(where, sizeof(where), "%s:%d", name, lineno);
		rc = workload_field_host(where, "src", f[0], env->nhosts, &src, e);
		if (!rc)
			rc = workload_field_host(where, "dst", f[1], env->nhosts, &dst, e);
		if (!rc && src == dst)
			rc = mp_errf(e, MP_EUSER,
				     "%s: expected dst different from src (both are host %u)",
				     where, src);
		if (!rc)
			rc = workload_field_bytes(where, "bytes", f[2], &bytes, e);
		if (!rc)
			rc = workload_field_time(where, "start", f[3], &start, e);
		if (!rc && nfields > 4 && f[4][0])
			rc = flows_file_path(where, "path", f[4], &pin, e);
		if (!rc && nfields > 5 && f[5][0])
			rc = flows_file_path(where, "ack_path", f[5], &ack_pin, e);
		if (rc)
			goto out;
		size_t before = out->n;
		flow_list_push(out, src, dst, bytes, start);
		if (out->n > before) { /* else refused for its count: see flow_list_push */
			out->v[before].pin = pin;
			out->v[before].ack_pin = ack_pin;
		}
	}
	if (!seen_header)
		rc = mp_errf(e, MP_EUSER, "%s:%d: expected the header line 'src,dst,bytes,start'",
			     name, lineno ? lineno : 1);
	else if (out->n == n0)
		rc = mp_errf(e, MP_EUSER, "%s:%d: expected at least one flow after the header",
			     name, lineno);
out:
	if (rc)
		out->n = n0; /* nothing half-built */
	mp_free(text);
	return rc;
}

const struct workload_ops flows_file_workload_ops = {
	.name = "flows_file",
	.summary = "flows listed in a CSV file (src,dst,bytes,start)",
	.opts = flows_file_opts,
	.params_size = sizeof(struct flows_file_params),
	.generate = flows_file_generate,
};
