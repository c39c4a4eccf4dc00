// SPDX-License-Identifier: GPL-2.0
/*
 * sdcount: a QEMU TCG plugin that counts the guest instructions executed
 * between marks the guest sets, attributed by guest virtual address.
 *
 * Counting: every translated block (TB) gets a record and an inline
 * ADD_U64 of its instruction count into that record on each execution; no
 * per-instruction callback runs. A TB is attributed whole to the bucket of
 * its first instruction's address.
 *
 * Marks: "mov $MAGIC,%eax; cpuid" (b8 imm32, 0f a2) with MAGIC's high 16
 * bits 0x5344 ("SD"); bit 0 clear starts, set stops; bits 1..15 are a
 * label the report repeats. The pair is recognised at translation time
 * from the instruction bytes and gets an exec callback on the cpuid: start
 * zeroes every record, stop sums them into buckets and appends one report
 * line. Both correct for the rest of the mark's own TB (counted whole at
 * its entry), so a measured window is exact to the instruction.
 *
 * Buckets: addresses with bit 63 clear are "user"; kernel addresses are
 * looked up in the ranges file (lines "start end bucket", hex, end
 * exclusive, non-overlapping; tests/bench/plugin/sdranges.py writes it from
 * the guest's /proc/kallsyms and /proc/modules), read at each stop mark
 * so the guest may write it after loading its modules; a kernel address
 * in no range is "kernel".
 *
 * Arguments (-plugin sdcount.so,arg=value,...):
 *   out=FILE      append the reports there (default: QEMU's log, stderr)
 *   ranges=FILE   the ranges file (default: user and kernel only)
 *   dump=FILE     also append, per stop, "pair label addr insns" per TB
 *                 executed in the window (tests/bench/sdprofile.py turns
 *                 them into functions)
 *
 * Report, one line per stop mark, key=value:
 *   sdcount label=L pair=K insns=N tbs=T user=U kernel=C <bucket>=B ...
 *
 * Inline counters are not atomic: with MTTCG (several vCPU threads) they
 * race and lose counts, and the plugin cannot see the accelerator's
 * threading. Counted runs therefore use -accel tcg,thread=single (one
 * thread runs every vCPU in turn; tests/bench/run.sh does), and the
 * qemu-user test runs a single-threaded program. Translation takes a
 * mutex all the same, so a multi-threaded run miscounts but never
 * corrupts the record list.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define SD_MAGIC_HI 0x5344u
#define MAX_BUCKETS 32

struct tb_rec {
	uint64_t insns;		/* instructions executed, added inline */
	uint64_t vaddr;
	struct tb_rec *next;
};

struct range {
	uint64_t start, end;
	int bucket;
};

struct mark {
	struct tb_rec *tb;
	uint32_t magic;
	uint32_t after;		/* instructions of the TB after the cpuid */
};

static struct tb_rec *tbs;	/* every record, newest first */
static pthread_mutex_t tbs_lock = PTHREAD_MUTEX_INITIALIZER;
static char *out_path, *ranges_path, *dump_path;
static bool in_window;
static unsigned int pairs;

static char bucket_names[MAX_BUCKETS][32];
static int n_buckets;
static struct range *ranges;
static size_t n_ranges;

static void outs(const char *s)
{
	FILE *f;

	if (!out_path) {
		qemu_plugin_outs(s);
		return;
	}
	f = fopen(out_path, "a");
	if (!f) {
		qemu_plugin_outs("sdcount: cannot open out=");
		qemu_plugin_outs(out_path);
		qemu_plugin_outs("\n");
		qemu_plugin_outs(s);
		return;
	}
	fputs(s, f);
	fclose(f);
}

static int bucket_id(const char *name)
{
	int i;

	for (i = 0; i < n_buckets; i++)
		if (!strcmp(bucket_names[i], name))
			return i;
	if (n_buckets == MAX_BUCKETS)
		return -1;
	snprintf(bucket_names[n_buckets], sizeof(bucket_names[0]), "%s", name);
	return n_buckets++;
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Rereads the ranges file; the two fixed buckets come first. */
static void load_ranges(void)
{
	char line[256], name[64];
	uint64_t s, e;
	size_t cap = 0;
	FILE *f;

	free(ranges);
	ranges = NULL;
	n_ranges = 0;
	n_buckets = 0;
	bucket_id("user");
	bucket_id("kernel");
	if (!ranges_path)
		return;
	f = fopen(ranges_path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		int b;

		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %63s", &s, &e, name) != 3 ||
		    e <= s)
			continue;
		b = bucket_id(name);
		if (b < 0)
			continue;
		if (n_ranges == cap) {
			cap = cap ? 2 * cap : 1024;
			ranges = realloc(ranges, cap * sizeof(*ranges));
			if (!ranges)
				abort();
		}
		ranges[n_ranges++] = (struct range){ s, e, b };
	}
	fclose(f);
	qsort(ranges, n_ranges, sizeof(*ranges), range_cmp);
}

static int bucket_of(uint64_t a)
{
	size_t lo = 0, hi = n_ranges;

	if (!(a >> 63))
		return 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a < ranges[mid].start)
			hi = mid;
		else if (a >= ranges[mid].end)
			lo = mid + 1;
		else
			return ranges[mid].bucket;
	}
	return 1;
}

static void start_window(struct mark *m)
{
	struct tb_rec *r;

	for (r = tbs; r; r = r->next)
		r->insns = 0;
	/* the mark's TB was counted whole on entry, before this callback */
	m->tb->insns = m->after;
	in_window = true;
}

static void stop_window(struct mark *m)
{
	uint64_t by_bucket[MAX_BUCKETS] = { 0 }, total = 0, n_tbs = 0;
	unsigned int label = (m->magic & 0xffff) >> 1;
	char buf[4096];
	FILE *dump = NULL;
	struct tb_rec *r;
	size_t len;
	int i;

	if (!in_window) {
		snprintf(buf, sizeof(buf),
			 "sdcount label=%u error=stop-without-start\n", label);
		outs(buf);
		return;
	}
	in_window = false;
	pairs++;
	/* the rest of this TB was counted at its entry but does not run in
	 * the window
	 */
	m->tb->insns -= m->after;
	load_ranges();
	if (dump_path)
		dump = fopen(dump_path, "a");
	for (r = tbs; r; r = r->next) {
		if (!r->insns)
			continue;
		n_tbs++;
		total += r->insns;
		by_bucket[bucket_of(r->vaddr)] += r->insns;
		if (dump)
			fprintf(dump, "%u %u %" PRIx64 " %" PRIu64 "\n", pairs,
				label, r->vaddr, r->insns);
	}
	if (dump)
		fclose(dump);
	len = snprintf(buf, sizeof(buf),
		       "sdcount label=%u pair=%u insns=%" PRIu64 " tbs=%" PRIu64,
		       label, pairs, total, n_tbs);
	for (i = 0; i < n_buckets && len < sizeof(buf) - 64; i++)
		len += snprintf(buf + len, sizeof(buf) - len, " %s=%" PRIu64,
				bucket_names[i], by_bucket[i]);
	snprintf(buf + len, sizeof(buf) - len, "\n");
	outs(buf);
}

static void mark_exec(unsigned int vcpu_index, void *udata)
{
	struct mark *m = udata;

	(void)vcpu_index;
	if (m->magic & 1)
		stop_window(m);
	else
		start_window(m);
}

/* imm32 of "mov $imm32,%eax" (b8 + imm32), if insn is one */
static bool mov_eax_imm(struct qemu_plugin_insn *insn, uint32_t *imm)
{
	const uint8_t *p = qemu_plugin_insn_data(insn);

	if (qemu_plugin_insn_size(insn) != 5 || p[0] != 0xb8)
		return false;
	*imm = p[1] | p[2] << 8 | p[3] << 16 | (uint32_t)p[4] << 24;
	return true;
}

static bool is_cpuid(struct qemu_plugin_insn *insn)
{
	const uint8_t *p = qemu_plugin_insn_data(insn);

	return qemu_plugin_insn_size(insn) == 2 && p[0] == 0x0f && p[1] == 0xa2;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	struct tb_rec *r = calloc(1, sizeof(*r));
	uint32_t imm;

	(void)id;
	if (!r)
		abort();
	r->vaddr = qemu_plugin_tb_vaddr(tb);
	pthread_mutex_lock(&tbs_lock);
	r->next = tbs;
	tbs = r;
	pthread_mutex_unlock(&tbs_lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &r->insns, n);
	for (i = 1; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		struct mark *m;

		if (!is_cpuid(insn) ||
		    !mov_eax_imm(qemu_plugin_tb_get_insn(tb, i - 1), &imm) ||
		    imm >> 16 != SD_MAGIC_HI)
			continue;
		/* lives as long as the TB may run: never freed */
		m = malloc(sizeof(*m));
		if (!m)
			abort();
		*m = (struct mark){ r, imm, (uint32_t)(n - i - 1) };
		qemu_plugin_register_vcpu_insn_exec_cb(insn, mark_exec,
						       QEMU_PLUGIN_CB_NO_REGS, m);
	}
}

static char *arg_value(const char *arg, const char *key)
{
	size_t k = strlen(key);

	if (strncmp(arg, key, k) || arg[k] != '=')
		return NULL;
	return strdup(arg + k + 1);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		char **slot = NULL, *v;

		v = arg_value(argv[i], "out");
		if (v) {
			slot = &out_path;
		} else {
			v = arg_value(argv[i], "ranges");
			if (v) {
				slot = &ranges_path;
			} else {
				v = arg_value(argv[i], "dump");
				if (v)
					slot = &dump_path;
			}
		}
		if (!slot) {
			fprintf(stderr, "sdcount: unknown argument '%s'\n",
				argv[i]);
			return -1;
		}
		free(*slot);
		*slot = v;
	}
	(void)info;
	load_ranges();
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
