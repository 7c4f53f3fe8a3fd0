/* resdir.c - the results folder as a place on disk (the folder half of
 * results.h): where it is, whether it may be replaced, the temporary sibling a
 * run writes into and the rename that puts it in place.
 *
 * Invariants:
 *  - A results folder holds exactly one run: what mpsim wrote there before is
 *    replaced as a whole, and nothing is left beside it. Every folder it
 *    commits lists its entries in RESULTS_MANIFEST, with the names drawn from
 *    them after the commit (plots/ and report.html, listed whether or not
 *    they were drawn); names starting ".mpsim-" are its own too. A folder
 *    from before manifests counts the files mpsim has always written
 *    (summary.json, flows.csv, ...), the drawn names and the point folders of
 *    a sweep. When a folder is replaced, anything else in it (the user's
 *    notes, links) moves into the new folder, and so does the user's part of
 *    a point folder both runs have; plots/ is mpsim's as a whole (it is
 *    removed with whatever it holds). What cannot move (a name the new
 *    results use, a file in a point the new run does not have) stays in the
 *    old folder, which is then kept under OUT.old-PID and named on stderr
 *    with the first file it holds.
 *  - A run writes into OUT.partial-PID, marked by RESULTS_PARTIAL with its
 *    process id and start time, its host and boot. One that a killed process
 *    left (SIGKILL: the OOM killer, a batch system's limit) is stale once
 *    that process is gone (stale_partial says how that is known):
 *    --resume takes its completed points (sim/batch.c) and every commit into
 *    OUT removes it. A partial folder of a live process is never touched,
 *    nor one without the marker (not mpsim's).
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
#include <signal.h>
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
/* what mpsim draws in a folder after its commit, from the files there
 * (io/plot.c, io/report.c, `mpsim plot`): its own whether or not a manifest
 * lists it (folders written before the manifest named them) */
static const char *const drawn_files[] = { "plots", "report.html", NULL };

bool results_is_drawn(const char *name)
{
	for (const char *const *n = drawn_files; *n; n++)
		if (!strcmp(name, *n))
			return true;
	return false;
}

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
			if (*line && !strchr(line, '/') && strcmp(line, ".") &&
			    strcmp(line, "..") && !names_has(l, line))
				names_add(l, line);
		}
		fclose(f);
	} else {
		for (const char *const *n = legacy_files; *n; n++)
			names_add(l, *n);
		DIR *d = opendir(dir);
		if (d) {
			struct dirent *de;
			while ((de = readdir(d)) != NULL) { /* a sweep's point folders */
				join(p, sizeof p, dir, de->d_name);
				if (de->d_name[0] != '.' && is_results_dir(p))
					names_add(l, de->d_name);
			}
			closedir(d);
		}
	}
	for (const char *const *n = drawn_files; *n; n++)
		if (!names_has(l, *n))
			names_add(l, *n);
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
		if (is_dir(p) && results_is_drawn(l.v[i]))
			remove_tree(p); /* plots/: mpsim's as a whole */
		else if (is_dir(p))
			remove_ours(p); /* a point folder: its own manifest */
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

/* ---- temporary folders, live and stale -------------------------------------------- */

/* The start time of process pid (clock ticks since boot, the 22nd field of
 * /proc/PID/stat), or 0 where it cannot be read (another system, no /proc). */
static unsigned long long proc_start(long pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%ld/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *c = strrchr(buf, ')'); /* after the command's name, which may hold anything */
	unsigned long long t = 0;
	for (int field = 2; c && field < 22; field++)
		c = strchr(c + 1, ' ');
	if (c)
		t = strtoull(c + 1, NULL, 10);
	return t;
}

/* Which machine and which boot of it this process runs on: the host's name
 * and the kernel's boot id ("-" where there is none), words without spaces. */
static void this_boot(char *host, size_t hn, char *boot, size_t bn)
{
	if (gethostname(host, hn) != 0 || !*host)
		snprintf(host, hn, "-");
	host[hn - 1] = '\0';
	host[strcspn(host, " \t\n")] = '\0';
	snprintf(boot, bn, "-");
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (f) {
		if (!fgets(boot, (int)bn, f) || !*boot)
			snprintf(boot, bn, "-");
		boot[strcspn(boot, " \t\n")] = '\0';
		fclose(f);
	}
}

/* RESULTS_PARTIAL in tmp: "mpsim-partial PID START HOST BOOT", this
 * process's id and start time, its machine and that machine's boot */
static int mark_partial(const char *tmp, struct mp_err *e)
{
	char text[512], host[256], boot[64];
	long pid = (long)getpid();
	this_boot(host, sizeof host, boot, sizeof boot);
	snprintf(text, sizeof text, "mpsim-partial %ld %llu %s %s\n", pid, proc_start(pid), host,
		 boot);
	return results_write_text(tmp, RESULTS_PARTIAL, text, e);
}

/* Is dir, named OUT.partial-PID, a temporary folder that a process which no
 * longer runs left? It must hold RESULTS_PARTIAL naming the same PID (else it
 * is not mpsim's, and stays). A process of another machine (a shared file
 * system) or of another container (its own process ids, its own host name)
 * cannot be seen from here: its folder stays. On this machine, a boot id
 * other than the marker's means the machine restarted since: stale. Else the
 * process is gone when kill(PID, 0) says ESRCH.
 * A process id is reused: when a process of that id runs, it is the one that
 * made the folder only if it started when the marker says; one that started
 * at another time took the id since, and the folder is stale all the same.
 * Without a start time to compare (no /proc, a START of 0) a live id keeps
 * the folder: a stale folder then waits for the first run after that
 * process ends, which is better than removing a live run's work. */
static bool stale_partial(const char *dir, long pid)
{
	char p[4400], line[512], mhost[256], mboot[64], host[256], boot[64];
	long mpid = 0;
	unsigned long long start = 0;
	join(p, sizeof p, dir, RESULTS_PARTIAL);
	FILE *f = fopen(p, "r");
	if (!f)
		return false;
	bool marked =
	    fgets(line, sizeof line, f) &&
	    sscanf(line, "mpsim-partial %ld %llu %255s %63s", &mpid, &start, mhost, mboot) == 4 &&
	    mpid == pid;
	fclose(f);
	if (!marked || pid <= 0 || pid == (long)getpid())
		return false;
	this_boot(host, sizeof host, boot, sizeof boot);
	if (strcmp(mhost, host))
		return false;
	if (strcmp(mboot, "-") && strcmp(boot, "-") && strcmp(mboot, boot))
		return true;
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
		return true;
	unsigned long long now = proc_start(pid);
	return start && now && now != start;
}

size_t results_stale(const char *outdir, void (*fn)(const char *dir, void *arg), void *arg)
{
	char parent[4400], path[4400];
	const char *slash = strrchr(outdir, '/');
	const char *base = slash ? slash + 1 : outdir;
	size_t bl = strlen(base), k = 0;
	if (!slash)
		snprintf(parent, sizeof parent, ".");
	else if (slash == outdir)
		snprintf(parent, sizeof parent, "/");
	else
		snprintf(parent, sizeof parent, "%.*s", (int)(slash - outdir), outdir);
	DIR *d = opendir(parent);
	if (!d)
		return 0;
	struct names found = { 0 };
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		const char *nm = de->d_name, *digits = nm + bl + 9;
		if (strncmp(nm, base, bl) || strncmp(nm + bl, ".partial-", 9) || !*digits ||
		    strspn(digits, "0123456789") != strlen(digits) || strlen(digits) > 9)
			continue;
		join(path, sizeof path, parent, nm);
		if (is_dir(path) && stale_partial(path, atol(digits)))
			names_add(&found, path);
	}
	closedir(d);
	for (; k < found.n; k++) /* after the listing: fn may remove the folder */
		fn(found.v[k], arg);
	names_free(&found);
	return k;
}

static void discard_one(const char *dir, void *arg)
{
	(void)arg;
	remove_tree(dir);
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
	if (mark_partial(tmp, e)) {
		remove_tree(tmp);
		return e->status;
	}
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
	struct names drawn = { 0 }; /* those not yet drawn: listed after the rest */
	for (const char *const *n = drawn_files; *n; n++)
		names_add(&drawn, *n);
	while ((de = readdir(d)) != NULL)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    !is_own_name(de->d_name)) {
			fprintf(f, "%s\n", de->d_name);
			for (size_t i = 0; i < drawn.n; i++)
				if (!strcmp(drawn.v[i], de->d_name))
					drawn.v[i][0] = '\0';
			join(path, sizeof path, tmp, de->d_name);
			if (is_dir(path) && !results_is_drawn(de->d_name) &&
			    !has_file(path, RESULTS_MANIFEST) && write_manifest(path, e)) {
				names_free(&drawn);
				fclose(f);
				closedir(d);
				return e->status;
			}
		}
	closedir(d);
	for (size_t i = 0; i < drawn.n; i++)
		if (*drawn.v[i])
			fprintf(f, "%s\n", drawn.v[i]);
	names_free(&drawn);
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

/* Move what the user put in folder `from` (an earlier run) into `to` (the
 * run that replaces it) where `to` has no entry of that name; into a point
 * folder that both runs have, the same way. */
static void move_theirs(const char *from, const char *to)
{
	struct names mine = { 0 };
	char src[4400], dst[4400];
	struct stat st;
	ours(from, &mine);
	DIR *d = opendir(from);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)) != NULL) {
			const char *nm = de->d_name;
			if (!strcmp(nm, ".") || !strcmp(nm, "..") || is_own_name(nm))
				continue;
			join(src, sizeof src, from, nm);
			join(dst, sizeof dst, to, nm);
			if (!names_has(&mine, nm)) {
				if (lstat(dst, &st) != 0) /* else it stays in the old folder */
					rename(src, dst);
			} else if (!results_is_drawn(nm) && is_dir(src) && is_dir(dst)) {
				move_theirs(src, dst);
			}
		}
		closedir(d);
	}
	names_free(&mine);
}

/* The path under dir (relative, into buf) of the first file, or else empty
 * folder, in it: what keeps a folder that mpsim could not remove. */
static bool first_left(const char *dir, const char *rel, char *buf, size_t n)
{
	char p[4400], sub[4400];
	bool found = false;
	DIR *d = opendir(dir);
	if (!d)
		return false;
	struct dirent *de;
	while (!found && (de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		join(p, sizeof p, dir, de->d_name);
		if (*rel)
			join(sub, sizeof sub, rel, de->d_name);
		else
			snprintf(sub, sizeof sub, "%s", de->d_name);
		if (is_dir(p) && first_left(p, sub, buf, n)) {
			found = true;
		} else if (is_dir(p)) {			   /* an empty folder of the user's */
			snprintf(buf, n, "%.4000s/", sub); /* paths end below 4096 */
			found = true;
		} else {
			snprintf(buf, n, "%s", sub);
			found = true;
		}
	}
	closedir(d);
	return found;
}

int results_commit(const char *tmp, const char *outdir, struct mp_err *e)
{
	char old[4400], p[4400];
	struct stat st;
	join(p, sizeof p, tmp, RESULTS_PARTIAL);
	unlink(p); /* complete from here on: the rename is atomic */
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
		results_stale(outdir, discard_one, NULL);
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
	move_theirs(old, outdir);
	if (!remove_ours(old)) {
		char left[4400] = "";
		if (first_left(old, "", left, sizeof left))
			fprintf(stderr,
				"mpsim: kept '%s': it holds '%s', which mpsim did not write and "
				"could not move into the new results (they use its name, or do not "
				"have its folder)\n",
				old, left);
		else /* nothing in it, yet it would not go */
			fprintf(stderr, "mpsim: kept '%s': it could not be removed: %s\n", old,
				strerror(errno));
	}
	results_stale(outdir, discard_one, NULL);
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
