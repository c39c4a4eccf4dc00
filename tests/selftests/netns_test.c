// SPDX-License-Identifier: GPL-2.0
/*
 * An iWARP connect from a network namespace other than init_net never
 * leaves from another namespace (issue #26 item 2). siw makes the TCP
 * socket of a connection in the namespace of whoever calls rdma_connect(),
 * so the module must call it in a context of the socket's own namespace
 * and fail the connect (ECONNABORTED) when it has none: the socket was
 * shut down while rdma_cm's route handler ran, the thread that called
 * connect() exited, or it moved to another namespace (setns()) before the
 * connect could run.
 *
 * Each case forks a child that makes a namespace of its own
 * (unshare(CLONE_NEWNET), no process started): a veth pair sdns0/sdns1,
 * 10.77.0.2/24 on sdns0 (veth1's address in init_net) with a siw link on
 * it, and connects to 10.77.0.1 (veth0's in init_net, nobody's here), on
 * the port of a plain TCP listener the parent holds on 10.77.0.1 in
 * init_net. A connect made from init_net instead binds 10.77.0.2 there and
 * reaches that listener; one made in the namespace goes nowhere. Nobody
 * answers ARP for 10.77.0.1 in the namespace, so rdma_cm's address
 * resolution waits until the child adds the neighbour (SIOCSARP): each
 * case sets up its order of events first (thread exit, setns), then lets
 * the route resolve.
 *
 * The epoll cases let the connect run in the namespace (it goes nowhere:
 * the neighbour's address is nobody's, TCP gives up after one SYN retry)
 * and check that handing it to the task interrupts nothing: epoll_wait()
 * never fails with EINTR, on the socket or on an unrelated descriptor.
 */
#include <net/if.h>
#include <net/if_arp.h>
#include <poll.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <rdma/rdma_netlink.h>

#include "kselftest_harness.h"
#include "sd_test.h"

#define NS_ADDR "10.77.0.2"	/* ours in the namespace (veth1's in init_net) */
#define PEER_ADDR "10.77.0.1"	/* nobody's in the namespace (veth0's in init_net) */
#define NS_DEV "sdns0"
#define NS_PEER_DEV "sdns1"
#define TRACING "/sys/kernel/tracing"
#define CHILD_SKIP 4
#define ROUTE_DELAY_HOOK "/sys/kernel/debug/af_smbdirect/test_route_delay_ms"
#define ROUTE_DELAYED "/sys/kernel/debug/af_smbdirect/test_route_delayed"
#define ROUTE_DELAY_MS 1500

FIXTURE(netns) {
	int l;			/* TCP listener on PEER_ADDR in init_net */
	int port;
	char link[32];		/* the child's siw link */
};

FIXTURE_SETUP(netns)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);

	self->l = -1;
	snprintf(self->link, sizeof(self->link), "siwns%d", getpid());
	ASSERT_LT(0, sd_family()) TH_LOG("af_smbdirect is not loaded");
	inet_pton(AF_INET, PEER_ADDR, &sin.sin_addr);
	self->l = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT_LE(0, self->l);
	ASSERT_EQ(0, bind(self->l, (struct sockaddr *)&sin, sizeof(sin)))
		TH_LOG("bind %s: %s", PEER_ADDR, strerror(errno));
	ASSERT_EQ(0, listen(self->l, 8));
	ASSERT_EQ(0, getsockname(self->l, (struct sockaddr *)&sin, &len));
	self->port = ntohs(sin.sin_port);
}

FIXTURE_TEARDOWN(netns)
{
	if (self->l >= 0)
		close(self->l);
	if (!access(ROUTE_DELAY_HOOK, W_OK))
		sd_write_str(ROUTE_DELAY_HOOK, "0");
}

/* Messages of the child, as TAP comments. */
#define say(...) do {							\
	fprintf(stderr, "# child: " __VA_ARGS__);			\
	fputc('\n', stderr);						\
} while (0)

/* rtnetlink and RDMA netlink: one request, its ack; 0 or -errno. */
union nl_req {
	struct nlmsghdr h;
	char buf[1024];
};

static struct rtattr *nl_put(union nl_req *r, int type, const void *data, int len)
{
	struct rtattr *rta = (struct rtattr *)(r->buf + NLMSG_ALIGN(r->h.nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(rta), data, len);
	r->h.nlmsg_len = NLMSG_ALIGN(r->h.nlmsg_len) + RTA_ALIGN(rta->rta_len);
	return rta;
}

static void nl_put_str(union nl_req *r, int type, const char *s)
{
	nl_put(r, type, s, strlen(s) + 1);
}

static void nl_nest_end(union nl_req *r, struct rtattr *nest)
{
	nest->rta_len = r->buf + r->h.nlmsg_len - (char *)nest;
}

static int nl_do(int fd, union nl_req *r)
{
	char buf[4096];
	struct nlmsghdr *a = (struct nlmsghdr *)buf;
	ssize_t n;

	r->h.nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	if (send(fd, r->buf, r->h.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	if (!NLMSG_OK(a, (size_t)n) || a->nlmsg_type != NLMSG_ERROR)
		return -EPROTO;
	return ((struct nlmsgerr *)NLMSG_DATA(a))->error;
}

/* The child's namespace: its sockets stay there whatever the task does. */
struct ns_env {
	int ctl;	/* AF_INET datagram socket: interface and ARP ioctls */
	int rtnl;	/* NETLINK_ROUTE */
	int init_ns;	/* init_net, for setns() */
	const char *link;
	int port;
};

static int if_set(int ctl, const char *dev, const char *addr)
{
	struct ifreq ifr = {};
	struct sockaddr_in *sin = (struct sockaddr_in *)&ifr.ifr_addr;

	strncpy(ifr.ifr_name, dev, IFNAMSIZ - 1);
	if (addr) {
		sin->sin_family = AF_INET;
		inet_pton(AF_INET, addr, &sin->sin_addr);
		if (ioctl(ctl, SIOCSIFADDR, &ifr))
			return -errno;
		inet_pton(AF_INET, "255.255.255.0", &sin->sin_addr);
		if (ioctl(ctl, SIOCSIFNETMASK, &ifr))
			return -errno;
	}
	if (ioctl(ctl, SIOCGIFFLAGS, &ifr))
		return -errno;
	ifr.ifr_flags |= IFF_UP;
	return ioctl(ctl, SIOCSIFFLAGS, &ifr) ? -errno : 0;
}

static int veth_add(int rtnl)
{
	union nl_req r;
	struct ifinfomsg peer = {};
	struct rtattr *info, *data, *p;

	memset(&r, 0, sizeof(r));
	r.h.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
	r.h.nlmsg_type = RTM_NEWLINK;
	r.h.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL;
	nl_put_str(&r, IFLA_IFNAME, NS_DEV);
	info = nl_put(&r, IFLA_LINKINFO, NULL, 0);
	nl_put_str(&r, IFLA_INFO_KIND, "veth");
	data = nl_put(&r, IFLA_INFO_DATA, NULL, 0);
	p = nl_put(&r, VETH_INFO_PEER, &peer, sizeof(peer));
	nl_put_str(&r, IFLA_IFNAME, NS_PEER_DEV);
	nl_nest_end(&r, p);
	nl_nest_end(&r, data);
	nl_nest_end(&r, info);
	return nl_do(rtnl, &r);
}

static int veth_del(int rtnl)
{
	union nl_req r;

	memset(&r, 0, sizeof(r));
	r.h.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
	r.h.nlmsg_type = RTM_DELLINK;
	nl_put_str(&r, IFLA_IFNAME, NS_DEV);
	return nl_do(rtnl, &r);
}

/* "rdma link add LINK type siw netdev NS_DEV", in this namespace. */
static int siw_add(const char *link)
{
	union nl_req r;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA), ret;

	if (fd < 0)
		return -errno;
	memset(&r, 0, sizeof(r));
	r.h.nlmsg_len = NLMSG_HDRLEN;
	r.h.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_NEWLINK);
	nl_put_str(&r, RDMA_NLDEV_ATTR_DEV_NAME, link);
	nl_put_str(&r, RDMA_NLDEV_ATTR_LINK_TYPE, "siw");
	nl_put_str(&r, RDMA_NLDEV_ATTR_NDEV_NAME, NS_DEV);
	ret = nl_do(fd, &r);
	close(fd);
	return ret;
}

/* The neighbour nobody answers for: address resolution completes now. */
static int neigh_add(int ctl)
{
	static const unsigned char mac[6] = { 0x02, 0x00, 0x00, 0x77, 0x00, 0x01 };
	struct arpreq r = {};
	struct sockaddr_in *pa = (struct sockaddr_in *)&r.arp_pa;

	pa->sin_family = AF_INET;
	inet_pton(AF_INET, PEER_ADDR, &pa->sin_addr);
	r.arp_ha.sa_family = ARPHRD_ETHER;
	memcpy(r.arp_ha.sa_data, mac, sizeof(mac));
	r.arp_flags = ATF_PERM | ATF_COM;
	strncpy(r.arp_dev, NS_DEV, sizeof(r.arp_dev) - 1);
	return ioctl(ctl, SIOCSARP, &r) ? -errno : 0;
}

/* 0, or CHILD_SKIP when this kernel cannot make the namespace's link. */
static int ns_enter(struct ns_env *env)
{
	int ret;

	env->init_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (env->init_ns < 0 || unshare(CLONE_NEWNET)) {
		say("unshare(CLONE_NEWNET): %s", strerror(errno));
		return 1;
	}
	env->ctl = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	env->rtnl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (env->ctl < 0 || env->rtnl < 0) {
		say("socket: %s", strerror(errno));
		return 1;
	}
	ret = veth_add(env->rtnl);
	if (ret) {
		say("veth: %s", strerror(-ret));
		return ret == -EOPNOTSUPP ? CHILD_SKIP : 1;
	}
	ret = if_set(env->ctl, "lo", NULL) ?: if_set(env->ctl, NS_PEER_DEV, NULL) ?:
	      if_set(env->ctl, NS_DEV, NS_ADDR);
	if (ret) {
		say("interfaces: %s", strerror(-ret));
		return 1;
	}
	ret = siw_add(env->link);
	if (ret) {
		say("rdma link add %s type siw netdev %s: %s", env->link, NS_DEV,
		    strerror(-ret));
		return ret == -EOPNOTSUPP ? CHILD_SKIP : 1;
	}
	return 0;
}

/* Starts a non-blocking connect to the parent's port; the fd or -1. */
static int ns_connect(const struct ns_env *env)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(env->port) };
	int fd = sd_socket(SOCK_STREAM | SOCK_NONBLOCK);

	if (fd < 0) {
		say("socket: %s", strerror(-fd));
		return -1;
	}
	inet_pton(AF_INET, PEER_ADDR, &sin.sin_addr);
	if (!connect(fd, (struct sockaddr *)&sin, sizeof(sin)) || errno != EINPROGRESS) {
		say("connect: %s, wanted EINPROGRESS", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The error the connect ended with (SO_ERROR, 0 if it connected), or -1. */
static int connect_end(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	socklen_t len = sizeof(int);
	int err = 0, n;

	n = poll(&p, 1, SD_STEP_MS / 2);
	if (n <= 0) {
		say("poll: %s", n ? strerror(errno) : "no end of the connect in 10 s");
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len)) {
		say("SO_ERROR: %s", strerror(errno));
		return -1;
	}
	return err;
}

/*
 * The end of a connect whose rdma_connect() must not run: the socket
 * fails with ECONNABORTED (the connector's poll() fails it, as does its
 * task work if it returns to user space first). 0 if so.
 */
static int wait_aborted(int fd)
{
	int err = connect_end(fd);

	if (err < 0)
		return 1;
	if (err != ECONNABORTED) {
		say("the connect ended with %s, wanted ECONNABORTED", err ? strerror(err) : "success");
		return 1;
	}
	return 0;
}

/*
 * A tracefs instance with rdma_cm's cm_event_handler and cm_event_done:
 * when rdma_cm called our handler for an event, and when it returned.
 */
static int trace_put(const char *inst, const char *file, const char *s)
{
	char path[256];
	int fd, ok;

	snprintf(path, sizeof(path), TRACING "/instances/%s/%s", inst, file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -EIO;
}

static int trace_start(char *inst, size_t len)
{
	char path[256];

	if (access(TRACING "/instances", F_OK))
		mount("nodev", TRACING, "tracefs", 0, NULL);
	snprintf(inst, len, "sdnetns%d", getpid());
	snprintf(path, sizeof(path), TRACING "/instances/%s", inst);
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	return trace_put(inst, "events/rdma_cma/cm_event_handler/enable", "1") ?:
	       trace_put(inst, "events/rdma_cma/cm_event_done/enable", "1");
}

static void trace_stop(const char *inst)
{
	char path[256];

	snprintf(path, sizeof(path), TRACING "/instances/%s", inst);
	trace_put(inst, "events/rdma_cma/cm_event_handler/enable", "0");
	trace_put(inst, "events/rdma_cma/cm_event_done/enable", "0");
	rmdir(path);
}

/*
 * Waits for a line of tracepoint ev ("cm_event_handler", "cm_event_done")
 * with rdma_cm event name for our destination port; on a timeout, shows
 * the lines of that port.
 */
static int trace_wait(const char *inst, const char *ev, const char *name, int port, int ms)
{
	char path[256], want[64], buf[16384];
	long until = sd_now_ms() + ms;
	bool last = false;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), TRACING "/instances/%s/trace", inst);
	snprintf(want, sizeof(want), "dst=" PEER_ADDR ":%d ", port);
	for (;;) {
		char *line, *end;

		last = sd_now_ms() >= until;
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = 0;
		for (line = buf; line && *line; line = end ? end + 1 : NULL) {
			end = strchr(line, '\n');
			if (end)
				*end = 0;
			if (!strstr(line, want))
				continue;
			if (last)
				say("trace: %s", line);
			else if (strstr(line, ev) && strstr(line, name))
				return 0;
		}
		if (last)
			return -ETIMEDOUT;
		sd_sleep_ms(20);
	}
}

enum order { SHUTDOWN_FIRST, THREAD_EXITS, SETNS_BACK, EPOLL_SOCKET, EPOLL_ELSEWHERE };

struct connect_job {
	const struct ns_env *env;
	int fd;
	pid_t tid;
};

static void *connect_and_exit(void *arg)
{
	struct connect_job *job = arg;

	job->tid = syscall(SYS_gettid);
	job->fd = ns_connect(job->env);
	return NULL;
}

/* Until the thread is gone, its task work with it (task_work_add() fails). */
static int thread_gone(pid_t tid)
{
	char path[64];
	long until = sd_now_ms() + SD_STEP_MS;

	snprintf(path, sizeof(path), "/proc/self/task/%d", tid);
	while (!access(path, F_OK)) {
		if (sd_now_ms() > until)
			return -ETIMEDOUT;
		sd_sleep_ms(5);
	}
	return 0;
}

static long read_delayed(void)
{
	long n = -1;

	return sd_read_long(ROUTE_DELAYED, &n) ? -1 : n;
}

/*
 * Shuts fd down while rdma_cm's ROUTE_RESOLVED handler waits in the test
 * hook (its QP made, its connect not yet), then lets it finish. before:
 * the hook's count of waits before the route could resolve. 0 if
 * nothing else went wrong.
 */
static int shutdown_in_route_handler(const char *inst, int port, int fd, long before)
{
	long until = sd_now_ms() + SD_STEP_MS, waiting, t;

	/* The wait began after the last look that did not see it. */
	for (waiting = sd_now_ms(); read_delayed() == before; waiting = sd_now_ms()) {
		if (waiting > until) {
			say("the ROUTE_RESOLVED handler did not reach the hook in 20 s");
			trace_wait(inst, "", "", port, 0);
			return 1;
		}
		sd_sleep_ms(10);
	}
	if (shutdown(fd, SHUT_RDWR)) {
		say("shutdown: %s", strerror(errno));
		return 1;
	}
	t = sd_now_ms() - waiting;
	if (t >= ROUTE_DELAY_MS) {
		say("shutdown() returned %ld ms into the handler's %d ms wait: maybe after its connect, which proves nothing",
		    t, ROUTE_DELAY_MS);
		return 1;
	}
	if (trace_wait(inst, "cm_event_done", " ROUTE_RESOLVED ", port, SD_STEP_MS)) {
		say("the ROUTE_RESOLVED handler for port %d did not return in 20 s", port);
		return 1;
	}
	/* As TCP: the failed attempt's error, once. */
	if (!connect(fd, (struct sockaddr *)&(struct sockaddr_in){ .sin_family = AF_INET },
		     sizeof(struct sockaddr_in)) || errno == EINPROGRESS) {
		say("connect() after shutdown: %s, wanted an error", strerror(errno));
		return 1;
	}
	return 0;
}

/*
 * epoll_wait() while the route resolves and the connect is handed to this
 * task: it must not fail with EINTR (the hand-over was a TWA_SIGNAL task
 * work, which interrupts whatever the task waits in). on_socket: the set
 * holds the socket, whose poll runs the connect and reports its end; else
 * an eventfd nobody writes: epoll_wait() times out, and the connect runs
 * when the task returns to user space. Either way the connect, made in
 * the namespace, ends in an error (nobody at PEER_ADDR). 0 if so.
 */
static int epoll_case(const char *inst, int port, int fd, bool on_socket)
{
	struct epoll_event ev = { .events = EPOLLOUT, .data.fd = fd }, got;
	int ep, efd = -1, n, err, ret = 1, ms = on_socket ? SD_STEP_MS / 2 : 1500;
	long t0 = sd_now_ms();

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (!on_socket) {
		efd = eventfd(0, EFD_CLOEXEC);
		ev.events = EPOLLIN;
		ev.data.fd = efd;
	}
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, on_socket ? fd : efd, &ev)) {
		say("epoll: %s", strerror(errno));
		goto out;
	}
	n = epoll_wait(ep, &got, 1, ms);
	if (n < 0) {
		say("epoll_wait on %s: %s after %ld ms", on_socket ? "the socket" : "an eventfd",
		    strerror(errno), sd_now_ms() - t0);
		goto out;
	}
	if (n != (on_socket ? 1 : 0)) {
		say("epoll_wait: %d events in %d ms, wanted %d", n, ms, on_socket ? 1 : 0);
		goto out;
	}
	if (trace_wait(inst, "cm_event_done", " ROUTE_RESOLVED ", port, 200)) {
		say("the route did not resolve during epoll_wait(): the case proves nothing");
		goto out;
	}
	err = connect_end(fd);
	if (err < 0)
		goto out;
	if (!err) {
		say("connected to nobody");
		goto out;
	}
	ret = 0;
out:
	if (efd >= 0)
		close(efd);
	if (ep >= 0)
		close(ep);
	return ret;
}

static int child_run(struct ns_env *env, enum order order)
{
	struct connect_job job = { .env = env, .fd = -1 };
	pthread_t th;
	char inst[64] = "";
	int ret, fd = -1;
	long before;

	ret = ns_enter(env);
	if (ret)
		return ret;
	switch (order) {
	case EPOLL_SOCKET:
	case EPOLL_ELSEWHERE:
		/* siw_connect() waits for the TCP handshake: 3 s, not 127. */
		ret = sd_write_str("/proc/sys/net/ipv4/tcp_syn_retries", "1");
		if (ret) {
			say("tcp_syn_retries: %s", strerror(-ret));
			return 1;
		}
		/* fall through */
	case SHUTDOWN_FIRST:
		ret = trace_start(inst, sizeof(inst));
		if (ret) {
			say("tracefs instance with rdma_cma's events: %s", strerror(-ret));
			return CHILD_SKIP;
		}
		fd = ns_connect(env);
		if (fd < 0)
			return 1;
		break;
	case THREAD_EXITS:
		if (pthread_create(&th, NULL, connect_and_exit, &job) ||
		    pthread_join(th, NULL))
			return 1;
		fd = job.fd;
		if (fd < 0)
			return 1;
		if (thread_gone(job.tid)) {
			say("thread %d still there", job.tid);
			return 1;
		}
		break;
	case SETNS_BACK:
		fd = ns_connect(env);
		if (fd < 0)
			return 1;
		if (setns(env->init_ns, CLONE_NEWNET)) {
			say("setns: %s", strerror(errno));
			return 1;
		}
		break;
	}
	before = read_delayed();
	ret = neigh_add(env->ctl);
	if (ret) {
		say("SIOCSARP: %s", strerror(-ret));
		return 1;
	}
	if (order == SHUTDOWN_FIRST) {
		ret = shutdown_in_route_handler(inst, env->port, fd, before);
		trace_stop(inst);
	} else if (order == EPOLL_SOCKET || order == EPOLL_ELSEWHERE) {
		ret = epoll_case(inst, env->port, fd, order == EPOLL_SOCKET);
		trace_stop(inst);
	} else {
		ret = wait_aborted(fd);
	}
	close(fd);
	return ret;
}

/*
 * Runs the case in a child and checks what reached the listener in
 * init_net: nothing may.
 */
static void run_case(struct __test_metadata *_metadata,
		     FIXTURE_DATA(netns) *self, enum order order)
{
	struct ns_env env = { .link = self->link, .port = self->port };
	struct sockaddr_in from = {};
	socklen_t len = sizeof(from);
	char path[128], addr[INET_ADDRSTRLEN] = "?";
	int status, c, i;
	pid_t pid;

	if (order == SHUTDOWN_FIRST) {
		char ms[16];

		if (access(ROUTE_DELAY_HOOK, W_OK))
			SKIP(return, "needs the test build's %s", ROUTE_DELAY_HOOK);
		snprintf(ms, sizeof(ms), "%d", ROUTE_DELAY_MS);
		ASSERT_EQ(0, sd_write_str(ROUTE_DELAY_HOOK, ms));
	}
	fflush(stderr);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int ret = child_run(&env, order);

		if (env.rtnl > 0)
			veth_del(env.rtnl);
		_exit(ret);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (order == SHUTDOWN_FIRST)
		sd_write_str(ROUTE_DELAY_HOOK, "0");
	c = sd_accept_ms(self->l, 200);
	if (c >= 0) {
		getpeername(c, (struct sockaddr *)&from, &len);
		inet_ntop(AF_INET, &from.sin_addr, addr, sizeof(addr));
		close(c);
	}
	/* The link goes with its netdev (siw unregisters it in a work). */
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s", self->link);
	for (i = 0; i < 200 && !access(path, F_OK); i++)
		sd_sleep_ms(50);
	EXPECT_NE(0, access(path, F_OK)) TH_LOG("%s still there 10 s after its netdev went",
						 self->link);
	EXPECT_GT(0, c) TH_LOG("a connection from init_net (%s:%d) reached %s:%d",
			       addr, ntohs(from.sin_port), PEER_ADDR, self->port);
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == CHILD_SKIP)
		SKIP(return, "see the child's message");
	ASSERT_EQ(0, WEXITSTATUS(status));
}

/*
 * connect() (non-blocking), then shutdown(SHUT_RDWR) while rdma_cm's
 * ROUTE_RESOLVED handler runs, its QP made and its connect not yet (the
 * test hook holds it there; a shutdown before the handler leaves it no
 * QP, so no connect): the failed socket's connect goes nowhere, and not
 * from rdma_cm's kworker in init_net.
 */
TEST_F(netns, shutdown_in_route_handler)
{
	run_case(_metadata, self, SHUTDOWN_FIRST);
}

/*
 * The thread that called connect() exits before the route resolves: no
 * task of the namespace to connect from, the connect is aborted.
 */
TEST_F(netns, connecting_thread_exits)
{
	run_case(_metadata, self, THREAD_EXITS);
}

/*
 * The task that called connect() moves to init_net (setns()) before the
 * route resolves: its task work refuses to connect from there.
 */
TEST_F(netns, setns_to_init_net_before_route_resolved)
{
	run_case(_metadata, self, SETNS_BACK);
}

/*
 * epoll_wait() on the connecting socket: its poll runs the connect in
 * the namespace and reports the end; never EINTR.
 */
TEST_F(netns, epoll_on_socket_runs_connect_uninterrupted)
{
	run_case(_metadata, self, EPOLL_SOCKET);
}

/*
 * epoll_wait() on an unrelated descriptor while the connect is handed to
 * the task: not interrupted (it times out); the connect runs on the way
 * back to user space.
 */
TEST_F(netns, epoll_elsewhere_not_interrupted)
{
	run_case(_metadata, self, EPOLL_ELSEWHERE);
}

TEST_HARNESS_MAIN
