/* resdir.c - the results folder as a place on disk (the folder half of
 * results.h): where it is, whether it may be replaced, the temporary sibling a
 * run writes into and the rename that puts it in place.
 *
 * Invariants:
 *  - mpsim removes only what it wrote. Every folder it commits lists its
 *    entries in RESULTS_MANIFEST; names starting ".mpsim-" are its own too. A
 *    folder from before manifests counts the files mpsim has always written
 *    (summary.json, flows.csv, ...) and the point folders of a sweep. When a
 *    folder is replaced, anything else in it (the user's notes, plots, links)
 *    moves into the new folder; what cannot move (a name the new results
 *    use) stays in the old folder, which is then kept under OUT.old-PID.
 *  - A symbolic link given as the folder is followed: its target is replaced,
 *    the link stays.
 *  - Everything that can be checked before a run is: the name (no trailing
 *    slash, no "." or "..", a file system's 255 characters), that the folder
 *    is absent or an mpsim results folder, and that its parent takes a new
 *    folder (created and removed again).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/mem.h"
#include "io/results.h"

/* what mpsim wrote before folders had a manifest */
static const char *const legacy_files[] = { "summary.json", "flows.csv",   "timeseries.csv",
					    "ports.csv",    "config.yaml", "collectives.csv",
					    "paper.csv",    "sweep.csv",   NULL };

/* dir/name into buf; false when it does not fit (nothing mpsim makes is
 * that long: resolve caps a folder's path) */
static bool join(char *buf, size_t n, const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	if (a + 1 + b >= n) {
		buf[0] = '\0';
		return false;
	}
	memcpy(buf, dir, a);
	buf[a] = '/';
	memcpy(buf + a + 1, name, b + 1);
	return true;
}

/* rm -r of a folder mpsim made itself (a temporary folder), without following
 * symbolic links */
static void remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	char path[4096];
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		join(path, sizeof path, dir, de->d_name);
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			remove_tree(path);
		else
			unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* ---- which entries of a folder are mpsim's ------------------------------------ */

struct names {
	char **v;
	size_t n;
};

static void names_add(struct names *l, const char *s)
{
	l->v = mp_realloc(l->v, (l->n + 1) * sizeof *l->v);
	l->v[l->n++] = mp_strdup(s);
}

static bool names_has(const struct names *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

static void names_free(struct names *l)
{
	for (size_t i = 0; i < l->n; i++)
		mp_free(l->v[i]);
	mp_free(l->v);
	l->v = NULL;
	l->n = 0;
}

static bool is_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool has_file(const char *dir, const char *name)
{
	char p[4400];
	join(p, sizeof p, dir, name);
	return access(p, F_OK) == 0;
}

/* A folder mpsim wrote: its manifest, or (before manifests) a summary or a
 * sweep table. */
static bool is_results_dir(const char *dir)
{
	return is_dir(dir) && (has_file(dir, RESULTS_MANIFEST) || has_file(dir, "summary.json") ||
			       has_file(dir, "sweep.csv"));
}

/* The entries of dir that mpsim wrote (not counting ".mpsim-*" names). */
static void ours(const char *dir, struct names *l)
{
	char p[4400];
	join(p, sizeof p, dir, RESULTS_MANIFEST);
	FILE *f = fopen(p, "r");
	if (f) {
		char line[1024];
		while (fgets(line, sizeof line, f)) {
			line[strcspn(line, "\n")] = '\0';
			if (*line && !strchr(line, '/') && strcmp(line, ".") && strcmp(line, ".."))
				names_add(l, line);
		}
		fclose(f);
		return;
	}
	for (const char *const *n = legacy_files; *n; n++)
		names_add(l, *n);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) { /* a sweep's point folders */
		join(p, sizeof p, dir, de->d_name);
		if (de->d_name[0] != '.' && is_results_dir(p))
			names_add(l, de->d_name);
	}
	closedir(d);
}

static bool is_own_name(const char *name)
{
	return !strncmp(name, ".mpsim-", 7);
}

/* Remove what mpsim wrote in dir, then dir itself if nothing else is left.
 * Returns true when dir is gone. */
static bool remove_ours(const char *dir)
{
	struct names l = { 0 };
	char p[4400];
	ours(dir, &l);
	for (size_t i = 0; i < l.n; i++) {
		join(p, sizeof p, dir, l.v[i]);
		if (is_dir(p))
			remove_ours(p);
		else
			unlink(p);
	}
	names_free(&l);
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)) != NULL)
			if (is_own_name(de->d_name)) {
				join(p, sizeof p, dir, de->d_name);
				unlink(p);
			}
		closedir(d);
	}
	return rmdir(dir) == 0;
}

/* ---- before a run --------------------------------------------------------------- */

int results_resolve(const char *out, char *dir, size_t n, struct mp_err *e)
{
	size_t l = strlen(out);
	if (!l)
		return mp_errf(e, MP_EUSER, "results folder: expected a folder name, got ''");
	if (l + 64 >= n || l + 64 >= PATH_MAX)
		return mp_errf(e, MP_EUSER,
			       "results folder '%.80s...': expected a path under %d "
			       "characters",
			       out, PATH_MAX - 64);
	snprintf(dir, n, "%s", out);
	while (l > 1 && dir[l - 1] == '/') /* what tab completion gives */
		dir[--l] = '\0';
	const char *last = strrchr(dir, '/');
	last = last ? last + 1 : dir;
	if (!*last || !strcmp(last, ".") || !strcmp(last, ".."))
		return mp_errf(e, MP_EUSER,
			       "results folder '%s': expected the name of a folder to write, "
			       "not '%s'",
			       out, *last ? last : "/");
	if (strlen(last) > EXP_NAME_MAX)
		return mp_errf(e, MP_EUSER,
			       "results folder '%s': expected a name of at most %d characters "
			       "(a file system takes 255 with mpsim's temporary suffix), got %zu",
			       out, EXP_NAME_MAX, strlen(last));
	struct stat st;
	if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode)) {
		char *r = realpath(dir, NULL);
		if (!r)
			return mp_errf(e, MP_EUSER,
				       "results folder '%s' is a symbolic link to nothing "
				       "(%s); expected a link to a folder, or no link",
				       out, strerror(errno));
		if (strlen(r) + 64 >= n) {
			free(r);
			return mp_errf(e, MP_EUSER,
				       "results folder '%s': its target's path is "
				       "too long",
				       out);
		}
		snprintf(dir, n, "%s", r);
		free(r);
	}
	return MP_OK;
}

/* mkdir -p of every folder above `path` */
static int make_parents(const char *path, struct mp_err *e)
{
	char buf[4096];
	snprintf(buf, sizeof buf, "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) != 0 && errno != EEXIST)
			return mp_errf(e, MP_EIO, "cannot create folder '%s': %s", buf,
				       strerror(errno));
		*p = '/';
	}
	return MP_OK;
}

int results_prepare(const char *outdir, struct mp_err *e)
{
	struct stat st;
	char probe[4400];
	if (!*outdir)
		return mp_errf(e, MP_EUSER, "results folder: expected a folder name, got ''");
	if (stat(outdir, &st) == 0 && !is_results_dir(outdir))
		return mp_errf(e, MP_EUSER,
			       "results folder '%s' exists and is not an mpsim results "
			       "folder; refusing to replace it",
			       outdir);
	if (make_parents(outdir, e))
		return e->status;
	/* the folder a run will write into, made and removed now, so that a
	 * read-only or full disk, a missing permission or a name too long is
	 * found before the first event, not after the last */
	snprintf(probe, sizeof probe, "%s.partial-%ld", outdir, (long)getpid());
	if (mkdir(probe, 0777) != 0 && errno != EEXIST)
		return mp_errf(e, MP_EIO, "cannot create results in '%s': %s", probe,
			       strerror(errno));
	rmdir(probe);
	return MP_OK;
}

/* ---- writing and committing ------------------------------------------------------ */

int results_write_text(const char *dir, const char *name, const char *text, struct mp_err *e)
{
	char path[4096];
	join(path, sizeof path, dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		return mp_errf(e, MP_EIO, "cannot write '%s': %s", path, strerror(errno));
	fputs(text, f);
	return results_fclose(f, path, e);
}

int results_tmpdir(const char *outdir, char *tmp, size_t n, struct mp_err *e)
{
	if (results_prepare(outdir, e))
		return e->status;
	snprintf(tmp, n, "%s.partial-%ld", outdir, (long)getpid());
	remove_tree(tmp); /* a stale one of an earlier process with this id */
	if (mkdir(tmp, 0777) != 0)
		return mp_errf(e, MP_EIO, "cannot create '%s': %s", tmp, strerror(errno));
	return MP_OK;
}

void results_discard(const char *tmp)
{
	remove_tree(tmp);
}

/* RESULTS_MANIFEST in tmp: every entry there now; the same in each folder
 * inside that has none yet (a point folder has its own). */
static int write_manifest(const char *tmp, struct mp_err *e)
{
	char path[4400];
	DIR *d = opendir(tmp);
	if (!d)
		return mp_errf(e, MP_EIO, "cannot read '%s': %s", tmp, strerror(errno));
	join(path, sizeof path, tmp, RESULTS_MANIFEST);
	FILE *f = fopen(path, "w");
	if (!f) {
		closedir(d);
		return mp_errf(e, MP_EIO, "cannot write '%s': %s", path, strerror(errno));
	}
	struct dirent *de;
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    !is_own_name(de->d_name)) {
			fprintf(f, "%s\n", de->d_name);
			join(path, sizeof path, tmp, de->d_name);
			if (is_dir(path) && !has_file(path, RESULTS_MANIFEST) &&
			    write_manifest(path, e)) {
				fclose(f);
				closedir(d);
				return e->status;
			}
		}
	closedir(d);
	join(path, sizeof path, tmp, RESULTS_MANIFEST);
	if (fclose(f) != 0)
		return mp_errf(e, MP_EIO, "error writing '%s'", path);
	return MP_OK;
}

int results_adopt(const char *outdir, const char *tmp, const char *name, struct mp_err *e)
{
	char from[4400], to[4400];
	join(from, sizeof from, outdir, name);
	join(to, sizeof to, tmp, name);
	if (rename(from, to) != 0)
		return mp_errf(e, MP_EIO, "cannot move '%s' into '%s': %s", from, tmp,
			       strerror(errno));
	return MP_OK;
}

int results_commit(const char *tmp, const char *outdir, struct mp_err *e)
{
	char old[4400];
	struct stat st;
	if (write_manifest(tmp, e)) {
		remove_tree(tmp);
		return e->status;
	}
	if (lstat(outdir, &st) != 0) {
		if (rename(tmp, outdir) != 0) {
			remove_tree(tmp);
			return mp_errf(e, MP_EIO, "cannot rename results into '%s': %s", outdir,
				       strerror(errno));
		}
		return MP_OK;
	}
	if (!is_results_dir(outdir)) { /* it appeared during the run */
		remove_tree(tmp);
		return mp_errf(e, MP_EUSER,
			       "results folder '%s' exists and is not an mpsim results folder; "
			       "refusing to replace it",
			       outdir);
	}
	/* the old folder steps aside, the new one takes its place, and the
	 * user's entries of the old one follow it: at no moment is a user's
	 * file in a folder mpsim is about to remove */
	snprintf(old, sizeof old, "%s.old-%ld", outdir, (long)getpid());
	if (rename(outdir, old) != 0) {
		remove_tree(tmp);
		return mp_errf(e, MP_EIO, "cannot replace '%s': %s", outdir, strerror(errno));
	}
	if (rename(tmp, outdir) != 0) {
		int err = errno;
		if (rename(old, outdir) != 0)
			fprintf(stderr, "mpsim: the earlier results of '%s' are in '%s'\n", outdir,
				old);
		remove_tree(tmp);
		return mp_errf(e, MP_EIO, "cannot rename results into '%s': %s", outdir,
			       strerror(err));
	}
	struct names mine = { 0 };
	ours(old, &mine);
	DIR *d = opendir(old);
	if (d) {
		struct dirent *de;
		char from[4400], to[4400];
		while ((de = readdir(d)) != NULL) {
			const char *nm = de->d_name;
			if (!strcmp(nm, ".") || !strcmp(nm, "..") || is_own_name(nm) ||
			    names_has(&mine, nm))
				continue;
			join(from, sizeof from, old, nm);
			join(to, sizeof to, outdir, nm);
			if (lstat(to, &st) != 0) /* else it stays in the old folder */
				rename(from, to);
		}
		closedir(d);
	}
	names_free(&mine);
	if (!remove_ours(old))
		fprintf(stderr,
			"mpsim: kept '%s': it holds files mpsim did not write whose names the "
			"new results use\n",
			old);
	return MP_OK;
}

/* ---- a folder as bytes (a sweep point sent from an MPI rank) --------------------- */

/* The record stream: per entry, a kind byte ('d' a folder, 'f' a file), its
 * path relative to the packed folder with a terminating 0, and for a file its
 * size as 8 bytes, least significant first, then its bytes. A folder comes
 * before what it holds. */
struct pack {
	char *b;
	size_t n, cap;
};

static void pack_put(struct pack *p, const void *s, size_t n)
{
	if (p->n + n > p->cap) {
		p->cap = (p->n + n) * 2 + 4096;
		p->b = mp_realloc(p->b, p->cap);
	}
	memcpy(p->b + p->n, s, n);
	p->n += n;
}

static int pack_dir(struct pack *p, const char *root, const char *rel, struct mp_err *e)
{
	char dir[4400], path[4400], sub[4400];
	if (*rel)
		join(dir, sizeof dir, root, rel);
	else
		snprintf(dir, sizeof dir, "%s", root);
	DIR *d = opendir(dir);
	if (!d)
		return mp_errf(e, MP_EIO, "cannot read '%s': %s", dir, strerror(errno));
	struct dirent *de;
	int rc = MP_OK;
	while (!rc && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (*rel)
			join(sub, sizeof sub, rel, de->d_name);
		else
			snprintf(sub, sizeof sub, "%s", de->d_name);
		join(path, sizeof path, dir, de->d_name);
		struct stat st;
		if (lstat(path, &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			pack_put(p, "d", 1);
			pack_put(p, sub, strlen(sub) + 1);
			rc = pack_dir(p, root, sub, e);
			continue;
		}
		if (!S_ISREG(st.st_mode)) /* nothing mpsim writes */
			continue;
		FILE *f = fopen(path, "rb");
		if (!f) {
			rc = mp_errf(e, MP_EIO, "cannot read '%s': %s", path, strerror(errno));
			break;
		}
		size_t at = p->n;
		unsigned char len[8] = { 0 };
		pack_put(p, "f", 1);
		pack_put(p, sub, strlen(sub) + 1);
		pack_put(p, len, sizeof len);
		size_t start = p->n, k;
		char chunk[65536];
		while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
			pack_put(p, chunk, k);
		if (ferror(f)) {
			rc = mp_errf(e, MP_EIO, "error reading '%s'", path);
			p->n = at;
		}
		fclose(f);
		uint64_t size = p->n - start;
		for (int i = 0; i < 8 && !rc; i++)
			p->b[start - 8 + i] = (char)(size >> (8 * i));
	}
	closedir(d);
	return rc;
}

int results_pack(const char *dir, char **buf, size_t *n, struct mp_err *e)
{
	struct pack p = { 0 };
	int rc = pack_dir(&p, dir, "", e);
	if (rc) {
		mp_free(p.b);
		p.b = NULL;
		p.n = 0;
	}
	*buf = p.b;
	*n = p.n;
	return rc;
}

/* a relative path with no empty, "." or ".." part: stays inside the folder */
static bool safe_rel(const char *s)
{
	if (!*s || *s == '/')
		return false;
	for (const char *c = s; *c;) {
		size_t l = strcspn(c, "/");
		if (l == 0 || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c += l;
		c += *c == '/';
	}
	return true;
}

int results_unpack(const char *dir, const char *buf, size_t n, struct mp_err *e)
{
	char path[4400];
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		return mp_errf(e, MP_EIO, "cannot create '%s': %s", dir, strerror(errno));
	size_t i = 0;
	while (i < n) {
		char kind = buf[i++];
		const char *rel = buf + i;
		const char *end = memchr(rel, '\0', n - i);
		if ((kind != 'd' && kind != 'f') || !end || !safe_rel(rel))
			return mp_errf(e, MP_EIO, "'%s': a damaged folder record at byte %zu", dir,
				       i - 1);
		i += (size_t)(end - rel) + 1;
		if (!join(path, sizeof path, dir, rel))
			return mp_errf(e, MP_EIO, "'%s/%s': path too long", dir, rel);
		if (kind == 'd') {
			if (mkdir(path, 0777) != 0 && errno != EEXIST)
				return mp_errf(e, MP_EIO, "cannot create '%s': %s", path,
					       strerror(errno));
			continue;
		}
		uint64_t size = 0;
		if (n - i < 8)
			return mp_errf(e, MP_EIO, "'%s': a damaged file record", path);
		for (int k = 0; k < 8; k++)
			size |= (uint64_t)(unsigned char)buf[i + k] << (8 * k);
		i += 8;
		if (size > n - i)
			return mp_errf(e, MP_EIO, "'%s': a damaged file record", path);
		FILE *f = fopen(path, "wb");
		if (!f)
			return mp_errf(e, MP_EIO, "cannot write '%s': %s", path, strerror(errno));
		bool ok = fwrite(buf + i, 1, size, f) == size;
		if (fclose(f) != 0 || !ok)
			return mp_errf(e, MP_EIO, "error writing '%s'", path);
		i += size;
	}
	return MP_OK;
}
