/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of the AF_SMBDIRECT kselftests: the four transports the
 * guest offers (guest-init.sh: rxe0 on veth0, siw0 on lo), socket set-up
 * with ephemeral ports, framing helpers for SOCK_STREAM, and patterns that
 * let a receiver prove every byte arrived where it belongs.
 *
 * Helpers return -errno (or 0 / a count) and never ASSERT: they run in
 * threads and forked children too, where the harness' longjmp is unsafe.
 */
#ifndef SD_TEST_H
#define SD_TEST_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/smbdirect.h>
#include <linux/sockios.h>

/*
 * The harness' default of 30 s per case is short for the debug kernel
 * under TCG; a case that really hangs still fails, just later.
 */
#ifdef TEST_TIMEOUT_DEFAULT
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 90
#endif

/* How long any single step may take before it counts as a hang. */
#define SD_STEP_MS 20000

/*
 * SD_FAKE_TCP builds run the tests' own plumbing over TCP/IPv6 on a host
 * without the module (a check of the tests, not of the module); they talk
 * to ::1 whatever the target says unless SD_FAKE_LOOPBACK=0.
 */
#ifndef SD_FAKE_LOOPBACK
#ifdef SD_FAKE_TCP
#define SD_FAKE_LOOPBACK 1
#else
#define SD_FAKE_LOOPBACK 0
#endif
#endif

struct sd_target {
	const char *kind;	/* "rxe" or "siw": the RDMA link type */
	const char *netdev;	/* the link's network device */
	int af;			/* AF_INET or AF_INET6 */
	const char *addr;	/* local address of netdev, server and client alike */
	__u32 transport;	/* expected smbdirect_params.transport */
	/*
	 * Entry point of its SOCK_STREAM sockets: 0 AF_SMBDIRECT, 1
	 * socket(af, SOCK_STREAM, IPPROTO_SMBDIRECT). SOCK_SEQPACKET has
	 * only the first.
	 */
	int inet;
};

/*
 * rxe0 on veth0 comes from guest-init.sh. Soft-iWARP cannot use its siw0 on
 * lo: RDMA CM cannot resolve a route for 127.0.0.1 or ::1 on it (rping
 * fails the same way: "rdma_resolve_route: No such device"), so the siw
 * targets use veth1's addresses, and sd_target_unusable() adds a siw link
 * on veth1 when the guest has none.
 */
#define SD_TARGET_RXE4 { "rxe", "veth0", AF_INET, "10.77.0.1", SMBDIRECT_TRANSPORT_ROCE, 0 }
#define SD_TARGET_RXE6 { "rxe", "veth0", AF_INET6, "fd77::1", SMBDIRECT_TRANSPORT_ROCE, 0 }
#define SD_TARGET_SIW4 { "siw", "veth1", AF_INET, "10.77.0.2", SMBDIRECT_TRANSPORT_IWARP, 0 }
#define SD_TARGET_SIW6 { "siw", "veth1", AF_INET6, "fd77::2", SMBDIRECT_TRANSPORT_IWARP, 0 }
#define SD_TARGET_RXE6_INET { "rxe", "veth0", AF_INET6, "fd77::1", SMBDIRECT_TRANSPORT_ROCE, 1 }
#define SD_TARGET_SIW4_INET { "siw", "veth1", AF_INET, "10.77.0.2", SMBDIRECT_TRANSPORT_IWARP, 1 }
#define SD_SIW_LINK "siw1"

/*
 * Every socket test file's fixture variant holds one struct sd_target
 * named t: SD_TARGET_VARIANT declares it, SD_ADD_TARGET_VARIANTS adds the
 * four targets. (The harness macros these expand to come from
 * kselftest_harness.h, included before this file.)
 */
#define SD_TARGET_VARIANT(fixture)					\
	FIXTURE_VARIANT(fixture) {					\
		struct sd_target t;					\
	}

/*
 * Both entry points by variant: SOCK_STREAM sockets are AF_SMBDIRECT ones
 * over rxe4 and siw6, IPPROTO_SMBDIRECT ones over rxe6_inet and siw4_inet,
 * so each entry point meets RoCE and iWARP, IPv4 and IPv6, in every
 * fixture, at no extra guest time. SD_ADD_AF_TARGET_VARIANTS keeps all
 * four on AF_SMBDIRECT (inet_test compares the two entry points itself).
 */
#define SD_ADD_TARGET_VARIANTS(fixture)				\
	FIXTURE_VARIANT_ADD(fixture, rxe4) { .t = SD_TARGET_RXE4 };	\
	FIXTURE_VARIANT_ADD(fixture, rxe6_inet) { .t = SD_TARGET_RXE6_INET }; \
	FIXTURE_VARIANT_ADD(fixture, siw4_inet) { .t = SD_TARGET_SIW4_INET }; \
	FIXTURE_VARIANT_ADD(fixture, siw6) { .t = SD_TARGET_SIW6 }

#define SD_ADD_AF_TARGET_VARIANTS(fixture)				\
	FIXTURE_VARIANT_ADD(fixture, rxe4) { .t = SD_TARGET_RXE4 };	\
	FIXTURE_VARIANT_ADD(fixture, rxe6) { .t = SD_TARGET_RXE6 };	\
	FIXTURE_VARIANT_ADD(fixture, siw4) { .t = SD_TARGET_SIW4 };	\
	FIXTURE_VARIANT_ADD(fixture, siw6) { .t = SD_TARGET_SIW6 }

/*
 * In FIXTURE_SETUP, once the fixture's descriptors are at -1: skips a
 * target this guest lacks and requires the module.
 */
#define SD_SETUP_TARGET() do {						\
	const char *_why = sd_target_unusable(&variant->t);		\
									\
	if (_why)							\
		SKIP(return, "%s", _why);				\
	ASSERT_LT(0, sd_family()) TH_LOG("af_smbdirect is not loaded");	\
	sd_use_entry(&variant->t);					\
	ASSERT_LT(0, sd_stream_domain())				\
		TH_LOG("the IPPROTO_SMBDIRECT entry point is not served");	\
} while (0)

/*
 * Connects self->c (connect) and self->s (accept) over the variant's
 * target with the given socket type, or fails the test saying which step
 * failed; both get SD_STEP_MS timeouts as a safety net against hangs.
 */
#define PAIR(type) do {							\
	const char *_why = "";						\
	int _r = sd_pair_type(&variant->t, (type), &self->c, &self->s, &_why); \
	ASSERT_EQ(0, _r) TH_LOG("%s over %s %s: %s", _why, variant->t.kind, \
				variant->t.addr, strerror(-_r));	\
	sd_set_timeouts(self->c, SD_STEP_MS);				\
	sd_set_timeouts(self->s, SD_STEP_MS);				\
} while (0)

static inline long sd_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

static inline void sd_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Writes the string s to the file at path (sysfs, debugfs, procfs). */
static inline int sd_write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -EIO;
}

static inline int sd_read_long(const char *path, long *value)
{
	char buf[64] = {};
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	*value = strtol(buf, NULL, 0);
	return 0;
}

/* The family number the module took; -errno if it is not loaded. */
static inline int sd_family(void)
{
#ifdef SD_FAKE_TCP
	return AF_INET6;
#endif
	long family = -1;
	int ret = sd_read_long(SMBDIRECT_FAMILY_SYSFS, &family);

	return ret ? ret : (int)family;
}

/*
 * The entry point sd_socket() uses for SOCK_STREAM in this test (each
 * test runs in a process of its own): set from the variant by
 * SD_SETUP_TARGET(); AF_SMBDIRECT until then.
 */
static int sd_inet_af;	/* 0, or AF_INET/AF_INET6 with IPPROTO_SMBDIRECT */

static inline void sd_use_entry(const struct sd_target *t)
{
	sd_inet_af = t->inet ? t->af : 0;
}

/* The module's IPPROTO_SMBDIRECT number; -errno if it serves none. */
static inline int sd_inet_protocol(void)
{
	long proto = 0;
	int ret = sd_read_long(SMBDIRECT_INET_PROTOCOL_SYSFS, &proto);

	if (ret)
		return ret;
	return proto > 0 ? (int)proto : -EPROTONOSUPPORT;
}

/* SO_DOMAIN of this test's SOCK_STREAM sockets; -errno. */
static inline int sd_stream_domain(void)
{
#ifndef SD_FAKE_TCP
	if (sd_inet_af) {
		int proto = sd_inet_protocol();

		return proto < 0 ? proto : sd_inet_af;
	}
#endif
	return sd_family();
}

static inline int sd_socket(int type)
{
	int family = sd_family();
	int fd;

	if (family < 0)
		return family;
#ifndef SD_FAKE_TCP
	if (sd_inet_af && (type & 0xf) == SOCK_STREAM) {
		int proto = sd_inet_protocol();

		if (proto < 0)
			return proto;
		fd = socket(sd_inet_af, type, proto);
		return fd < 0 ? -errno : fd;
	}
#endif
	fd = socket(family, type, 0);
	return fd < 0 ? -errno : fd;
}

static inline socklen_t sd_addr(const struct sd_target *t, int port,
				struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (t->af == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		inet_pton(AF_INET, t->addr, &sin->sin_addr);
		return sizeof(*sin);
	}
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	if (inet_pton(AF_INET6, t->addr, &sin6->sin6_addr) != 1 || SD_FAKE_LOOPBACK)
		sin6->sin6_addr = in6addr_loopback;
	return sizeof(*sin6);
}

static inline int sd_port_of(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return -1;
}

/*
 * The name of the RDMA link of the target's kind on its netdev, from
 * "rdma link show" ("link rxe0/1 state ACTIVE ... netdev veth0"), in name
 * (room len); 0 when found, -ENODEV when there is none.
 */
static inline int sd_link_in(FILE *f, const struct sd_target *t, char *name, size_t len)
{
	char line[256], dev[64], nd[64];
	int found = -ENODEV;

	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, " netdev ");

		if (sscanf(line, "link %63[^/]", dev) != 1 || !p ||
		    sscanf(p, " netdev %63s", nd) != 1)
			continue;
		if (!strncmp(dev, t->kind, strlen(t->kind)) && !strcmp(nd, t->netdev) &&
		    found) {
			snprintf(name, len, "%s", dev);
			found = 0;
		}
	}
	return found;
}

static inline int sd_target_link(const struct sd_target *t, char *name, size_t len)
{
	FILE *f = popen("rdma link show 2>/dev/null", "r");
	int found;

	if (!f)
		return -errno;
	found = sd_link_in(f, t, name, len);
	pclose(f);
	return found;
}

/*
 * "rdma link show" as it was when the test binary started. Running the
 * tool costs a third of a second in the TCG guest, and the harness forks
 * every case from the process that read this, so each case's set-up looks
 * here first and asks the tool again only when its link is not listed.
 */
static char sd_links_at_start[4096];

static void __attribute__((constructor)) sd_read_links_at_start(void)
{
	FILE *f = popen("rdma link show 2>/dev/null", "r");
	size_t n;

	if (!f)
		return;
	n = fread(sd_links_at_start, 1, sizeof(sd_links_at_start) - 1, f);
	sd_links_at_start[n] = 0;
	pclose(f);
}

static inline int sd_target_link_at_start(const struct sd_target *t, char *name, size_t len)
{
	FILE *f = fmemopen(sd_links_at_start, strlen(sd_links_at_start) + 1, "r");
	int found;

	if (!f)
		return -errno;
	found = sd_link_in(f, t, name, len);
	fclose(f);
	return found;
}

static inline int sd_have_device(const struct sd_target *t)
{
	char name[64];

	return sd_target_link(t, name, sizeof(name)) == 0;
}

/* A listener on ss; *port says which port it got (0 on failure). */
static inline int sd_listen_at(struct sockaddr_storage *ss, socklen_t len,
			       int type, int backlog, int *port)
{
	int fd = sd_socket(type), ret;

	*port = 0;
	if (fd < 0)
		return fd;
	if (bind(fd, (struct sockaddr *)ss, len) || listen(fd, backlog))
		goto fail;
	len = sizeof(*ss);
	if (getsockname(fd, (struct sockaddr *)ss, &len))
		goto fail;
	*port = sd_port_of(ss);
	if (*port <= 0) {
		close(fd);
		return -EADDRNOTAVAIL;
	}
	return fd;
fail:
	ret = -errno;
	close(fd);
	return ret;
}

/*
 * A listener on the target's address with an ephemeral port (bind port 0,
 * read it back with getsockname). Returns the fd or -errno; *port is set.
 */
static inline int sd_listen_type(const struct sd_target *t, int type,
				 int backlog, int *port)
{
	struct sockaddr_storage ss;
	socklen_t len = sd_addr(t, 0, &ss);

	return sd_listen_at(&ss, len, type, backlog, port);
}

static inline int sd_connect_type(const struct sd_target *t, int type, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = sd_addr(t, port, &ss);
	int fd = sd_socket(type), ret;

	if (fd < 0)
		return fd;
	if (connect(fd, (struct sockaddr *)&ss, len)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/* accept() that gives up after ms milliseconds (-ETIMEDOUT). */
static inline int sd_accept_ms(int lfd, int ms)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };
	int ret = poll(&p, 1, ms), fd;

	if (ret < 0)
		return -errno;
	if (ret == 0)
		return -ETIMEDOUT;
	fd = accept(lfd, NULL, NULL);
	return fd < 0 ? -errno : fd;
}

struct sd_connect_job {
	const struct sd_target *t;
	int type, port, fd;
	int preset;		/* connect j->fd itself, leave it open on error */
	int err;		/* out: -errno of connect() with preset */
	pthread_t thread;
};

static inline void *sd_connect_thread(void *arg)
{
	struct sd_connect_job *j = arg;
	struct sockaddr_storage ss;
	socklen_t len;

	if (!j->preset) {
		j->fd = sd_connect_type(j->t, j->type, j->port);
		return NULL;
	}
	len = sd_addr(j->t, j->port, &ss);
	j->err = connect(j->fd, (struct sockaddr *)&ss, len) ? -errno : 0;
	return NULL;
}

#ifdef __i386__
/*
 * The 32-bit build (rdma_abuse_test32) makes its pairs without a thread:
 * pthread_join() there waits with the 32-bit-time futex call, which the
 * test kernels do not build (CONFIG_COMPAT_32BIT_TIME, left out by
 * tinyconfig), and glibc aborts on its ENOSYS. A non-blocking connect(),
 * the accept(), then POLLOUT and SO_ERROR on the client, which is made
 * blocking again.
 */
static inline int sd_pair_type(const struct sd_target *t, int type,
			       int *client, int *server, const char **why)
{
	struct sockaddr_storage ss;
	struct pollfd p = { .events = POLLOUT };
	socklen_t len, elen = sizeof(int);
	int lfd, cfd, sfd, port, err = 0;

	*client = *server = -1;
	lfd = sd_listen_type(t, type, 4, &port);
	if (lfd < 0) {
		*why = "listen";
		return lfd;
	}
	cfd = sd_socket(type | SOCK_NONBLOCK);
	if (cfd < 0) {
		close(lfd);
		*why = "socket";
		return cfd;
	}
	len = sd_addr(t, port, &ss);
	if (connect(cfd, (struct sockaddr *)&ss, len) && errno != EINPROGRESS) {
		err = -errno;
		*why = "connect";
		goto fail;
	}
	sfd = sd_accept_ms(lfd, SD_STEP_MS);
	if (sfd < 0) {
		err = sfd;
		*why = "accept";
		goto fail;
	}
	p.fd = cfd;
	if (poll(&p, 1, SD_STEP_MS) != 1 ||
	    getsockopt(cfd, SOL_SOCKET, SO_ERROR, &err, &elen) || err ||
	    fcntl(cfd, F_SETFL, fcntl(cfd, F_GETFL) & ~O_NONBLOCK)) {
		err = err ? -err : -ETIMEDOUT;
		close(sfd);
		*why = "connect";
		goto fail;
	}
	close(lfd);
	*client = cfd;
	*server = sfd;
	return 0;
fail:
	close(cfd);
	close(lfd);
	return err;
}
#else
/*
 * A connected pair over the target: *client from connect(), *server from
 * accept() on a listener that is closed again. Connect runs in a thread so
 * that an implementation whose connect waits for accept cannot deadlock the
 * test. Returns 0 or -errno; on error *why says which step.
 */
static inline int sd_pair_type(const struct sd_target *t, int type,
			       int *client, int *server, const char **why)
{
	struct sd_connect_job j = { .t = t, .type = type };
	int lfd, sfd;

	*client = *server = -1;
	lfd = sd_listen_type(t, type, 4, &j.port);
	if (lfd < 0) {
		*why = "listen";
		return lfd;
	}
	if (pthread_create(&j.thread, NULL, sd_connect_thread, &j)) {
		close(lfd);
		*why = "pthread_create";
		return -EAGAIN;
	}
	sfd = sd_accept_ms(lfd, SD_STEP_MS);
	pthread_join(j.thread, NULL);
	close(lfd);
	if (j.fd < 0 || sfd < 0) {
		if (j.fd >= 0)
			close(j.fd);
		if (sfd >= 0)
			close(sfd);
		*why = j.fd < 0 ? "connect" : "accept";
		return j.fd < 0 ? j.fd : sfd;
	}
	*client = j.fd;
	*server = sfd;
	return 0;
}
#endif

/* SO_RCVTIMEO / SO_SNDTIMEO as a safety net against hangs. */
static inline void sd_set_timeouts(int fd, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/*
 * A fixture's teardown: kills and reaps its helper process (child > 0)
 * and closes its two ends (those not at -1).
 */
static inline void sd_teardown_pair(int c, int s, pid_t child)
{
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (c >= 0)
		close(c);
	if (s >= 0)
		close(s);
}

/* Waits for events on fd; returns revents, 0 on timeout, -errno. */
static inline int sd_poll(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int ret = poll(&p, 1, ms);

	if (ret < 0)
		return -errno;
	return ret ? p.revents : 0;
}

/* SMBDIRECT_OPT_INFO of fd into *info; 0 or -errno. */
static inline int sd_info(int fd, struct smbdirect_info *info)
{
	socklen_t len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	if (getsockopt(fd, SOL_SMBDIRECT, SMBDIRECT_OPT_INFO, info, &len))
		return -errno;
	return len == sizeof(*info) ? 0 : -EPROTO;
}

/*
 * The state in which a writer cannot go on until its reader reads: the
 * reader holds receive buffers back (its queue reached SO_RCVBUF) and has
 * nothing left to grant (every posted receive is promised but the one the
 * core keeps in reserve for its keepalive probes), nothing is in
 * flight between the two (the credits the reader granted are exactly those
 * the writer holds, no send is outstanding), and the writer holds at most
 * the one credit it may spend only on a PDU that grants (and it has none
 * to grant: the reader sends nothing). Nothing then changes until the
 * reader reads: no POLLOUT may come.
 */
static inline bool sd_starved(int writer, int reader)
{
	struct smbdirect_info w, r;

	if (sd_info(writer, &w) || sd_info(reader, &r))
		return false;
	return r.receives_held > 0 && r.receives_posted <= r.peer_credits + 1 &&
	       r.peer_credits == w.send_credits && w.send_credits <= 1 &&
	       !w.sends_in_flight && w.tx_queued > 0;
}

/* Writes all of buf; returns 0 or -errno. */
static inline int sd_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (sd_poll(fd, POLLOUT, SD_STEP_MS) <= 0)
				return -ETIMEDOUT;
			continue;
		}
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= n;
	}
	return 0;
}

/* Reads exactly len bytes; returns 0, -ENODATA on early EOF, or -errno. */
static inline int sd_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (sd_poll(fd, POLLIN, SD_STEP_MS) <= 0)
				return -ETIMEDOUT;
			continue;
		}
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;
		p += n;
		len -= n;
	}
	return 0;
}

/* The pattern byte at offset i of message seed. */
static inline unsigned char sd_pattern(uint32_t seed, size_t i)
{
	uint32_t x = seed * 2654435761u + (uint32_t)i * 40503u + (uint32_t)(i >> 13);

	return (unsigned char)(x ^ (x >> 11) ^ (x >> 19));
}

static inline void sd_fill(void *buf, size_t len, uint32_t seed)
{
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = sd_pattern(seed, i);
}

/* Offset of the first wrong byte, or -1 when all of buf is right. */
static inline long sd_check(const void *buf, size_t len, uint32_t seed)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != sd_pattern(seed, i))
			return (long)i;
	return -1;
}

/* SOCK_STREAM framing: 4-byte big-endian length, then the message. */
static inline int sd_stream_send(int fd, const void *msg, uint32_t len)
{
	uint32_t be = htonl(len);
	struct iovec iov[2] = {
		{ &be, 4 }, { (void *)msg, len },
	};
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
	size_t want = 4 + (size_t)len, done = 0;

	while (done < want) {
		ssize_t n = sendmsg(fd, &mh, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (sd_poll(fd, POLLOUT, SD_STEP_MS) <= 0)
				return -ETIMEDOUT;
			continue;
		}
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		done += n;
		/* Advance the iovecs past what was taken. */
		while (n && mh.msg_iovlen) {
			if ((size_t)n >= mh.msg_iov->iov_len) {
				n -= mh.msg_iov->iov_len;
				mh.msg_iov++;
				mh.msg_iovlen--;
			} else {
				mh.msg_iov->iov_base = (char *)mh.msg_iov->iov_base + n;
				mh.msg_iov->iov_len -= n;
				n = 0;
			}
		}
	}
	return 0;
}

/*
 * Reads one framed message into buf (room cap); returns its length,
 * -EMSGSIZE if it does not fit (the stream is then out of sync), -ENODATA
 * on EOF at a message boundary, or -errno.
 */
static inline long sd_stream_recv(int fd, void *buf, size_t cap)
{
	uint32_t be;
	int ret = sd_read_all(fd, &be, 4);

	if (ret)
		return ret;
	if (ntohl(be) > cap)
		return -EMSGSIZE;
	ret = sd_read_all(fd, buf, ntohl(be));
	return ret ? ret : (long)ntohl(be);
}

/* One message of either type: framed for SOCK_STREAM, as is otherwise. */
static inline int sd_msg_send(int fd, int type, const void *msg, uint32_t len)
{
	ssize_t n;

	if (type == SOCK_STREAM)
		return sd_stream_send(fd, msg, len);
	for (;;) {
		n = send(fd, msg, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (sd_poll(fd, POLLOUT, SD_STEP_MS) <= 0)
				return -ETIMEDOUT;
			continue;
		}
		if (n < 0)
			return -errno;
		return (size_t)n == len ? 0 : -EIO;
	}
}

static inline long sd_msg_recv(int fd, int type, void *buf, size_t cap)
{
	ssize_t n;

	if (type == SOCK_STREAM)
		return sd_stream_recv(fd, buf, cap);
	for (;;) {
		n = recv(fd, buf, cap, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (sd_poll(fd, POLLIN, SD_STEP_MS) <= 0)
				return -ETIMEDOUT;
			continue;
		}
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;
		return n;
	}
}

/*
 * A client connects to lfd's port on t, lfd accepts it, and msg (at most
 * 64 bytes) crosses as one STREAM message; both ends are closed after.
 * 0 or -errno.
 */
static inline int sd_stream_pair_once(const struct sd_target *t, int lfd,
				      int port, const char *msg)
{
	uint32_t len = strlen(msg);
	char buf[64];
	int c, s, ret;

	c = sd_connect_type(t, SOCK_STREAM, port);
	if (c < 0)
		return c;
	s = sd_accept_ms(lfd, SD_STEP_MS);
	if (s < 0) {
		close(c);
		return s;
	}
	sd_set_timeouts(c, SD_STEP_MS);
	sd_set_timeouts(s, SD_STEP_MS);
	ret = sd_stream_send(c, msg, len);
	if (!ret)
		ret = sd_stream_recv(s, buf, sizeof(buf)) == (long)len ? 0 : -EPROTO;
	close(c);
	close(s);
	return ret;
}

static inline int sd_get_params(int fd, struct smbdirect_params *p)
{
	memset(p, 0, sizeof(*p));
	p->size = sizeof(*p);
#ifdef SD_FAKE_TCP
	p->version = 0x100;
	return 0;
#endif
	return ioctl(fd, SMBDIRECT_IOC_GET_PARAMS, p) ? -errno : 0;
}

/*
 * The interop peers: SD_EXPECT_RD_DEPTHS="I/R" is the initiator depth and
 * responder resources GET_PARAMS must show after the connection manager's
 * exchange with a real peer (cifs.ko asks 32 responder resources and
 * initiator depth 1, so our server must end at 8/1; ksmbd answers 1/8, so
 * our client must end at 1/8). Prints why and returns -1 on a mismatch.
 */
static inline int sd_check_rd_depths(const struct smbdirect_params *p)
{
	const char *want = getenv("SD_EXPECT_RD_DEPTHS");
	unsigned int ird, rr;

	if (!want || !*want)
		return 0;
	if (sscanf(want, "%u/%u", &ird, &rr) != 2) {
		fprintf(stderr, "SD_EXPECT_RD_DEPTHS=%s is not I/R\n", want);
		return -1;
	}
	if (p->initiator_depth != ird || p->responder_resources != rr) {
		fprintf(stderr, "RDMA read depths: initiator_depth %u responder_resources %u, "
			"expected %u/%u\n", p->initiator_depth, p->responder_resources, ird, rr);
		return -1;
	}
	return 0;
}

static inline int sd_setopt(int fd, int opt, int value)
{
	return setsockopt(fd, SOL_SMBDIRECT, opt, &value, sizeof(value)) ? -errno : 0;
}

static inline int sd_getopt(int fd, int opt, int *value)
{
	socklen_t len = sizeof(*value);

	return getsockopt(fd, SOL_SMBDIRECT, opt, value, &len) ? -errno : 0;
}

/*
 * Why this target cannot be tested in this guest, or NULL when it can.
 * Only the environment is judged here (an RDMA link of the right kind on
 * the right netdev), never the module.
 */
static inline const char *sd_target_unusable(const struct sd_target *t)
{
	static char why[200];
	char name[64];

#ifdef SD_FAKE_TCP
	return t->af == AF_INET6 ? NULL : "SD_FAKE_TCP: IPv6 targets only";
#endif
	if (sd_target_link_at_start(t, name, sizeof(name)) == 0 ||
	    sd_target_link(t, name, sizeof(name)) == 0)
		return NULL;
	if (!strcmp(t->kind, "siw")) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rdma link add %s type siw netdev %s 2>/dev/null",
			 SD_SIW_LINK, t->netdev);
		if (system(cmd) == 0 && sd_target_link(t, name, sizeof(name)) == 0)
			return NULL;
	}
	snprintf(why, sizeof(why), "no %s link on %s in this guest (rdma link show)",
		 t->kind, t->netdev);
	return why;
}

#include <endian.h>
#include <sys/mman.h>

/*
 * RDMA ioctls (SMBDIRECT_IOC_REGISTER and friends). Each returns 0 or
 * -errno; the out fields are filled whatever the result, so a caller can
 * look at desc_count after ENOSPC.
 */
static inline int sd_register(int fd, __u32 flags, const struct iovec *iov, __u32 iov_count,
			      struct smbdirect_buffer_descriptor_v1 *desc, __u32 *desc_count,
			      __u64 *id)
{
	struct smbdirect_register r = {
		.size = sizeof(r), .flags = flags,
		.iov = (__u64)(uintptr_t)iov, .iov_count = iov_count,
		.desc_count = *desc_count, .desc = (__u64)(uintptr_t)desc,
	};
	int ret = ioctl(fd, SMBDIRECT_IOC_REGISTER, &r) ? -errno : 0;

	*desc_count = r.desc_count;
	if (id)
		*id = r.id;
	return ret;
}

/* One contiguous buffer; desc has room for max descriptors. */
static inline int sd_register_buf(int fd, __u32 flags, void *buf, size_t len,
				  struct smbdirect_buffer_descriptor_v1 *desc, __u32 max,
				  __u32 *desc_count, __u64 *id)
{
	struct iovec iov = { buf, len };

	*desc_count = max;
	return sd_register(fd, flags, &iov, 1, desc, desc_count, id);
}

static inline int sd_deregister(int fd, __u64 id, __u32 *state)
{
	struct smbdirect_deregister d = { .size = sizeof(d), .id = id, .state = 0xdead };
	int ret = ioctl(fd, SMBDIRECT_IOC_DEREGISTER, &d) ? -errno : 0;

	if (state)
		*state = d.state;
	return ret;
}

/* cmd: SMBDIRECT_IOC_RDMA_READV or SMBDIRECT_IOC_RDMA_WRITEV. */
static inline int sd_rdma(int fd, unsigned long cmd, const struct iovec *iov, __u32 iov_count,
			  const struct smbdirect_buffer_descriptor_v1 *desc, __u32 desc_count,
			  __u64 *bytes)
{
	struct smbdirect_rdma r = {
		.size = sizeof(r),
		.iov = (__u64)(uintptr_t)iov, .iov_count = iov_count,
		.desc = (__u64)(uintptr_t)desc, .desc_count = desc_count,
		.bytes = 0xdeadbeef,
	};
	int ret = ioctl(fd, cmd, &r) ? -errno : 0;

	if (bytes)
		*bytes = r.bytes;
	return ret;
}

/* Sum of the lengths of n descriptors. */
static inline __u64 sd_desc_bytes(const struct smbdirect_buffer_descriptor_v1 *desc, __u32 n)
{
	__u64 sum = 0;
	__u32 i;

	for (i = 0; i < n; i++)
		sum += le32toh(desc[i].length);
	return sum;
}

/*
 * One message with SMBDIRECT_CMSG_SEND_INVALIDATE of token. SOCK_STREAM:
 * msg is framed here, and only the first sendmsg carries the control
 * message (the others continue the same message). Returns 0 or -errno.
 */
static inline int sd_send_invalidate(int fd, int type, const void *msg, uint32_t len,
				     __u32 token)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(__u32))];
	} ctl;
	uint32_t be = htonl(len);
	struct iovec iov[2] = { { &be, 4 }, { (void *)msg, len } };
	struct msghdr mh = {
		.msg_iov = type == SOCK_STREAM ? iov : iov + 1,
		.msg_iovlen = type == SOCK_STREAM ? 2 : 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	size_t want = len + (type == SOCK_STREAM ? 4 : 0), done = 0;
	ssize_t n;

	memset(&ctl, 0, sizeof(ctl));
	c->cmsg_level = SOL_SMBDIRECT;
	c->cmsg_type = SMBDIRECT_CMSG_SEND_INVALIDATE;
	c->cmsg_len = CMSG_LEN(sizeof(__u32));
	memcpy(CMSG_DATA(c), &token, sizeof(token));
	n = sendmsg(fd, &mh, MSG_NOSIGNAL);
	if (n < 0)
		return -errno;
	if (type != SOCK_STREAM)
		return (size_t)n == len ? 0 : -EIO;
	done = n;
	if (done < 4) {
		int ret = sd_write_all(fd, (char *)&be + done, 4 - done);

		return ret ? ret : sd_write_all(fd, msg, len);
	}
	return sd_write_all(fd, (const char *)msg + (done - 4), want - done);
}

/* Patterns over iovec segments, as one stream of bytes. */
static inline void sd_fill_iov(const struct iovec *iov, int n, uint32_t seed)
{
	size_t off = 0, i;
	int k;

	for (k = 0; k < n; k++)
		for (i = 0; i < iov[k].iov_len; i++, off++)
			((unsigned char *)iov[k].iov_base)[i] = sd_pattern(seed, off);
}

/* Stream offset of the first wrong byte, or -1. */
static inline long sd_check_iov(const struct iovec *iov, int n, uint32_t seed)
{
	size_t off = 0, i;
	int k;

	for (k = 0; k < n; k++)
		for (i = 0; i < iov[k].iov_len; i++, off++)
			if (((unsigned char *)iov[k].iov_base)[i] != sd_pattern(seed, off))
				return (long)off;
	return -1;
}

/*
 * RLIMIT_MEMLOCK to limit, then uid and gid 65534 without groups (and so
 * without CAP_IPC_LOCK): 0, or nonzero when a step failed.
 */
static inline int sd_become_nobody(rlim_t limit)
{
	struct rlimit rl = { limit, limit };

	return setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) ||
	       setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534);
}

/* VmPin of /proc/<pid>/status in kB, or -errno. */
static inline long sd_vm_pin_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmPin: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * FOLL_PIN pins held system-wide: nr_foll_pin_acquired -
 * nr_foll_pin_released of /proc/vmstat, after folding the per-CPU
 * counters (vm.stat_refresh). 0 or -errno.
 */
static inline int sd_foll_pins(long *held)
{
	long acq = -1, rel = -1, v;
	char name[64];
	FILE *f;
	int fd = open("/proc/sys/vm/stat_refresh", O_WRONLY);

	if (fd >= 0) {
		/* Best effort: without it the counters may lag by a per-CPU batch. */
		if (write(fd, "1\n", 2) != 2) {
		}
		close(fd);
	}
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -errno;
	while (fscanf(f, "%63s %ld", name, &v) == 2) {
		if (!strcmp(name, "nr_foll_pin_acquired"))
			acq = v;
		else if (!strcmp(name, "nr_foll_pin_released"))
			rel = v;
	}
	fclose(f);
	if (acq < 0 || rel < 0)
		return -ENOENT;
	*held = acq - rel;
	return 0;
}

/*
 * Waits up to ms for VmPin of pid to be kb (unpinning may finish after
 * close() returns); returns the last value seen.
 */
static inline long sd_wait_vm_pin_kb(pid_t pid, long kb, int ms)
{
	long end = sd_now_ms() + ms, v;

	for (;;) {
		v = sd_vm_pin_kb(pid);
		if (v == kb || sd_now_ms() >= end)
			return v;
		sd_sleep_ms(20);
	}
}

/* Waits up to ms for the system's FOLL_PIN count to be held; returns the last one. */
static inline long sd_wait_foll_pins(long held, int ms)
{
	long end = sd_now_ms() + ms, v = LONG_MIN;

	for (;;) {
		if (sd_foll_pins(&v))
			return LONG_MIN;
		if (v == held || sd_now_ms() >= end)
			return v;
		sd_sleep_ms(50);
	}
}

/* Pages spanned by [p, p + len). */
static inline size_t sd_pages_spanned(const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p, ps = (uintptr_t)sysconf(_SC_PAGESIZE);

	if (!len)
		return 0;
	return ((a + len + ps - 1) / ps) - (a / ps);
}

/* A module parameter of af_smbdirect, or -errno. */
static inline long sd_module_param(const char *name)
{
	char path[128];
	long v = -1;
	int ret;

	snprintf(path, sizeof(path), "/sys/module/af_smbdirect/parameters/%s", name);
	ret = sd_read_long(path, &v);
	return ret ? ret : v;
}

/*
 * True when the running kernel is older than major.minor (uname's release),
 * for a case that meets a bug of the layers below that a later kernel
 * fixed. An unreadable release counts as not older.
 */
static inline bool sd_kernel_before(int major, int minor)
{
	struct utsname u;
	int ma, mi;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma < major || (ma == major && mi < minor);
}

/*
 * The control messages of n transfers (SMBDIRECT_CMSG_RDMA) and a token
 * (SMBDIRECT_CMSG_SEND_INVALIDATE, if not NULL) into ctl; their length.
 */
static inline size_t sd_rdma_ctl(char *ctl, size_t room, const struct smbdirect_rdma_args *a,
				 unsigned int n, const __u32 *token)
{
	struct msghdr mh = { .msg_control = ctl, .msg_controllen = room };
	struct cmsghdr *cm;
	size_t used = 0;
	unsigned int i;

	memset(ctl, 0, room);
	cm = CMSG_FIRSTHDR(&mh);
	for (i = 0; i < n; i++) {
		cm->cmsg_level = SOL_SMBDIRECT;
		cm->cmsg_type = SMBDIRECT_CMSG_RDMA;
		cm->cmsg_len = CMSG_LEN(sizeof(*a));
		memcpy(CMSG_DATA(cm), &a[i], sizeof(*a));
		used += CMSG_SPACE(sizeof(*a));
		cm = CMSG_NXTHDR(&mh, cm);
	}
	if (token) {
		cm->cmsg_level = SOL_SMBDIRECT;
		cm->cmsg_type = SMBDIRECT_CMSG_SEND_INVALIDATE;
		cm->cmsg_len = CMSG_LEN(sizeof(*token));
		memcpy(CMSG_DATA(cm), token, sizeof(*token));
		used += CMSG_SPACE(sizeof(*token));
	}
	return used;
}

#endif /* SD_TEST_H */
