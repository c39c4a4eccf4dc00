// SPDX-License-Identifier: GPL-2.0
/*
 * The module's tracepoints (tracefs events/af_smbdirect/) during a known
 * exchange: a connection, messages both ways, a registration, an RDMA
 * WRITE and READ against it, DEREGISTER and close. Every event the
 * exchange must cause is looked for with the fields the test knows:
 * negotiated parameters as GET_PARAMS reports them, state changes, PDUs
 * and messages with their sizes, the registration's id and bytes, the
 * RDMA operations with bytes and status, the orderly end.
 */
#include <sys/mman.h>
#include <sys/mount.h>

#include "kselftest_harness.h"
#include "sd_test.h"

#define TRACING "/sys/kernel/tracing"
#define LEN 65536
#define MSG 3000	/* more than one PDU of the default 1364 bytes */

FIXTURE(trace) {
	int c, s;
	char *log;
};

SD_TARGET_VARIANT(trace);

FIXTURE_VARIANT_ADD(trace, rxe4) { .t = SD_TARGET_RXE4 };
FIXTURE_VARIANT_ADD(trace, siw6) { .t = SD_TARGET_SIW6 };

static int put(const char *file, const char *s)
{
	char path[128];
	int fd, ok;

	snprintf(path, sizeof(path), TRACING "/%s", file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -EIO;
}

/* The whole trace buffer as one string (malloc'd), or NULL. */
static char *slurp(const char *file)
{
	size_t cap = 1 << 20, len = 0;
	char path[128], *buf = malloc(cap);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), TRACING "/%s", file);
	fd = open(path, O_RDONLY);
	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += n;
		if (cap - len < 4096) {
			char *more = realloc(buf, cap * 2);

			if (!more)
				break;
			buf = more;
			cap *= 2;
		}
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

FIXTURE_SETUP(trace)
{
	self->c = self->s = -1;
	self->log = NULL;
	SD_SETUP_TARGET();
	if (access(TRACING "/events", F_OK))
		mount("nodev", TRACING, "tracefs", 0, NULL);
	ASSERT_EQ(0, access(TRACING "/events/af_smbdirect", F_OK))
		TH_LOG("no af_smbdirect events in tracefs");
	ASSERT_EQ(0, put("tracing_on", "0"));
	ASSERT_EQ(0, put("trace", ""));
	ASSERT_EQ(0, put("buffer_size_kb", "8192"));
	ASSERT_EQ(0, put("events/af_smbdirect/enable", "1"));
	ASSERT_EQ(0, put("tracing_on", "1"));
}

FIXTURE_TEARDOWN(trace)
{
	sd_teardown_pair(self->c, self->s, 0);
	put("tracing_on", "0");
	put("events/af_smbdirect/enable", "0");
	put("trace", "");
	free(self->log);
}

/*
 * Lines of event ev whose fields contain every "name=value" in want (a
 * space-separated list), counted.
 */
static int count(const char *log, const char *ev, const char *want)
{
	char key[64], field[128];
	const char *line = log, *end, *w;
	int n = 0, ok;

	snprintf(key, sizeof(key), " %s: ", ev);
	for (; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (!strstr(line, key) || (end && strstr(line, key) > end))
			continue;
		ok = 1;
		for (w = want; ok && *w;) {
			size_t l = strcspn(w, " ");
			const char *hit;

			snprintf(field, sizeof(field), " %.*s", (int)l, w);
			hit = strstr(line, field);
			/* The field ends where the value does. */
			if (!hit || (end && hit > end) ||
			    (hit[strlen(field)] != ' ' && hit[strlen(field)] != '\n' &&
			     hit[strlen(field)] != 0))
				ok = 0;
			w += l;
			while (*w == ' ')
				w++;
		}
		n += ok;
	}
	return n;
}

/* Sum of field name over the lines of event ev that match want. */
static long sum(const char *log, const char *ev, const char *want, const char *name)
{
	char key[64], f[64];
	const char *p = log;
	long total = 0;

	snprintf(key, sizeof(key), " %s: ", ev);
	snprintf(f, sizeof(f), " %s=", name);
	while ((p = strstr(p, key))) {
		const char *end = strchr(p, '\n'), *v = strstr(p, f);
		char line[512];
		size_t l = end ? (size_t)(end - p) : strlen(p);

		if (l >= sizeof(line))
			l = sizeof(line) - 1;
		memcpy(line, p, l);
		line[l] = '\n';
		line[l + 1 < sizeof(line) ? l + 1 : l] = 0;
		if (v && (!end || v < end) && count(line, ev, want))
			total += strtol(v + strlen(f), NULL, 0);
		p += strlen(key);
	}
	return total;
}

/* An excerpt in the TAP: the lines a reader of the trace looks at first. */
static void print_excerpt(const char *log)
{
	const char *line = log, *end;

	char one[512];
	size_t len;

	for (; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		len = end ? (size_t)(end - line) : strlen(line);
		if (len >= sizeof(one))
			len = sizeof(one) - 1;
		memcpy(one, line, len);
		one[len] = 0;
		if (strstr(one, "_negotiated:") || strstr(one, "_register:") ||
		    strstr(one, "_rdma_") || strstr(one, "_deregister:"))
			printf("# trace: %s\n", one);
	}
}

TEST_F_TIMEOUT(trace, events_of_a_known_exchange, 120)
{
	struct smbdirect_buffer_descriptor_v1 d[8], got[8];
	struct smbdirect_params cp, sp;
	char *a = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *b = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char msg[MSG], want[160];
	struct iovec iov = { b, LEN };
	__u64 id, bytes;
	__u32 n = 8;
	long r;

	ASSERT_NE(MAP_FAILED, a);
	ASSERT_NE(MAP_FAILED, b);
	PAIR(SOCK_SEQPACKET);
	ASSERT_EQ(0, sd_get_params(self->c, &cp));
	ASSERT_EQ(0, sd_get_params(self->s, &sp));

	/* A message of MSG bytes each way. */
	sd_fill(msg, MSG, 1);
	ASSERT_EQ(0, sd_msg_send(self->c, SOCK_SEQPACKET, msg, MSG));
	ASSERT_EQ(MSG, sd_msg_recv(self->s, SOCK_SEQPACKET, msg, MSG));
	ASSERT_EQ(0, sd_msg_send(self->s, SOCK_SEQPACKET, msg, MSG));
	ASSERT_EQ(MSG, sd_msg_recv(self->c, SOCK_SEQPACKET, msg, MSG));

	/* A registers; B writes into it, then reads it back. */
	sd_fill(a, LEN, 2);
	sd_fill(b, LEN, 3);
	ASSERT_EQ(0, sd_register_buf(self->c, SMBDIRECT_ACCESS_PEER_READ |
				     SMBDIRECT_ACCESS_PEER_WRITE, a, LEN, d, 8, &n, &id));
	ASSERT_EQ(0, sd_msg_send(self->c, SOCK_SEQPACKET, d, n * sizeof(d[0])));
	r = sd_msg_recv(self->s, SOCK_SEQPACKET, got, sizeof(got));
	ASSERT_EQ((long)(n * sizeof(d[0])), r);
	ASSERT_EQ(0, sd_rdma(self->s, SMBDIRECT_IOC_RDMA_WRITEV, &iov, 1, got, n, &bytes));
	ASSERT_EQ((__u64)LEN, bytes);
	ASSERT_EQ(0, sd_rdma(self->s, SMBDIRECT_IOC_RDMA_READV, &iov, 1, got, n, &bytes));
	ASSERT_EQ((__u64)LEN, bytes);
	EXPECT_EQ(-1, sd_check(a, LEN, 3));
	ASSERT_EQ(0, sd_deregister(self->c, id, NULL));
	close(self->c);
	close(self->s);
	self->c = self->s = -1;
	/* A close() that drains in the background ends a little later. */
	for (r = 0; r < 200; r++) {
		free(self->log);
		self->log = slurp("trace");
		ASSERT_NE(NULL, self->log);
		if (count(self->log, "af_smbdirect_state", "old=connected new=closed") >= 2)
			break;
		sd_sleep_ms(50);
	}
	ASSERT_EQ(0, put("tracing_on", "0"));
	free(self->log);
	self->log = slurp("trace");
	ASSERT_NE(NULL, self->log);

	print_excerpt(self->log);
	/* Each side's negotiation, with what GET_PARAMS reported. */
	EXPECT_EQ(2, count(self->log, "af_smbdirect_negotiated", "version=0x100"));
	snprintf(want, sizeof(want), "version=0x100 max_send_size=%u max_receive_size=%u "
		 "max_read_write_size=%u", cp.max_send_size, cp.max_receive_size,
		 cp.max_read_write_size);
	EXPECT_LE(1, count(self->log, "af_smbdirect_negotiated", want)) TH_LOG("client: %s", want);
	snprintf(want, sizeof(want), "version=0x100 max_send_size=%u max_receive_size=%u "
		 "max_fragmented_receive_size=%u", sp.max_send_size, sp.max_receive_size,
		 sp.max_fragmented_receive_size);
	EXPECT_LE(1, count(self->log, "af_smbdirect_negotiated", want)) TH_LOG("server: %s", want);
	/* Listener, connecting client, both connected, both closed. */
	EXPECT_LE(1, count(self->log, "af_smbdirect_state", "old=unconnected new=listening"));
	EXPECT_LE(1, count(self->log, "af_smbdirect_state", "old=unconnected new=connecting"));
	EXPECT_LE(2, count(self->log, "af_smbdirect_state", "new=connected"));
	EXPECT_LE(2, count(self->log, "af_smbdirect_state", "old=connected new=closed"));
	EXPECT_LE(2, count(self->log, "af_smbdirect_fail", "err=0"));
	EXPECT_EQ(0, count(self->log, "af_smbdirect_fail", "err=-71"));
	/* Negotiate PDUs, data PDUs carrying every payload byte, whole messages. */
	EXPECT_EQ(1, count(self->log, "af_smbdirect_pdu_send", "kind=1"));
	EXPECT_EQ(1, count(self->log, "af_smbdirect_pdu_send", "kind=2"));
	r = sum(self->log, "af_smbdirect_pdu_send", "kind=3", "data_length");
	EXPECT_EQ(2 * MSG + (long)(n * sizeof(d[0])), r) TH_LOG("payload bytes in data PDUs");
	r = sum(self->log, "af_smbdirect_pdu_recv", "", "data_length");
	EXPECT_EQ(2 * MSG + (long)(n * sizeof(d[0])), r) TH_LOG("payload bytes received");
	snprintf(want, sizeof(want), "length=%d", MSG);
	EXPECT_EQ(2, count(self->log, "af_smbdirect_message", want));
	/* The registration, the two operations against it, its end. */
	snprintf(want, sizeof(want), "id=%llu bytes=%d mrs=%u flags=0x3 err=0",
		 (unsigned long long)id, LEN, n);
	EXPECT_EQ(1, count(self->log, "af_smbdirect_register", want)) TH_LOG("%s", want);
	snprintf(want, sizeof(want), "id=%llu bytes=%d mrs=%u flags=0x0 err=0",
		 (unsigned long long)id, LEN, n);
	EXPECT_EQ(1, count(self->log, "af_smbdirect_deregister", want)) TH_LOG("%s", want);
	snprintf(want, sizeof(want), "op=write bytes=%d descriptors=%u err=0", LEN, n);
	EXPECT_EQ(1, count(self->log, "af_smbdirect_rdma_issue", want)) TH_LOG("%s", want);
	EXPECT_EQ(1, count(self->log, "af_smbdirect_rdma_done", want)) TH_LOG("%s", want);
	snprintf(want, sizeof(want), "op=read bytes=%d descriptors=%u err=0", LEN, n);
	EXPECT_EQ(1, count(self->log, "af_smbdirect_rdma_issue", want)) TH_LOG("%s", want);
	EXPECT_EQ(1, count(self->log, "af_smbdirect_rdma_done", want)) TH_LOG("%s", want);
	munmap(a, LEN);
	munmap(b, LEN);
}

TEST_HARNESS_MAIN
