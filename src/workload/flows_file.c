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
 * The first other line is the header, exactly these four names. Then one flow
 * a line: src and dst are host indices (decimal, below the fabric's host count,
 * different), bytes a size with an optional unit as in experiment files
 * ("4000", "64KB", "2MiB"), start a time with a unit ("0", "10us", "1.5ms").
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
	  .help = "CSV file with header src,dst,bytes,start (one flow a line)" },
	OPT_END,
};

#define FLOWS_FILE_FIELDS 4
static const char *const flows_file_header[FLOWS_FILE_FIELDS] = { "src", "dst", "bytes", "start" };

static int flows_file_generate(const void *params, const struct wl_env *env, struct flow_list *out,
			       struct mp_err *e)
{
	const struct flows_file_params *fp = params;
	const char *name = fp->file;
	char *text, *cur, *line;
	size_t len, n0 = out->n;
	int lineno = 0, seen_header = 0, rc = MP_OK;

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
		int nf;

		lineno++;
		if (!line[0] || line[0] == '#')
			continue;
		nf = workload_split(line, ',', f, FLOWS_FILE_FIELDS);
		if (!seen_header) {
			int ok = nf == FLOWS_FILE_FIELDS;

			for (int i = 0; ok && i < FLOWS_FILE_FIELDS; i++)
				ok = !strcmp(f[i], flows_file_header[i]);
			if (!ok) {
				rc = mp_errf(e, MP_EUSER,
					     "%s:%d: expected the header line "
					     "'src,dst,bytes,start'",
					     name, lineno);
				goto out;
			}
			seen_header = 1;
			continue;
		}
		if (nf != FLOWS_FILE_FIELDS) {
			rc = mp_errf(e, MP_EUSER,
				     "%s:%d: expected 4 comma-separated fields "
				     "(src,dst,bytes,start), found %s%d",
				     name, lineno, nf > FLOWS_FILE_FIELDS ? "more than " : "",
				     nf > FLOWS_FILE_FIELDS ? FLOWS_FILE_FIELDS : nf);
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
		if (rc)
			goto out;
		flow_list_push(out, src, dst, bytes, start);
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
