/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The af_smbdirect generic netlink family from a selftest, without libnl
 * (the tests are static programs the guest runs as they are): resolve the
 * family, send one request, read one reply, find an attribute.
 */
#ifndef SD_GENL_TEST_H
#define SD_GENL_TEST_H

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/smbdirect_genl.h>

struct sd_genl_msg {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char attrs[1024];
};

/* One request, one reply (or an error) into *m; -errno. */
static inline int sd_genl_talk(int fd, struct sd_genl_msg *m)
{
	ssize_t n;

	if (send(fd, m, m->n.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(fd, m, sizeof(*m), 0);
	if (n < 0)
		return -errno;
	if (n < (ssize_t)sizeof(struct nlmsghdr) || !NLMSG_OK(&m->n, (size_t)n))
		return -EBADMSG;
	if (m->n.nlmsg_type == NLMSG_ERROR)
		return ((struct nlmsgerr *)NLMSG_DATA(&m->n))->error ?: -ENOMSG;
	return 0;
}

/* The attribute of that type among [p, p + len), or NULL. */
static inline struct nlattr *sd_nla_find(void *p, int len, int type)
{
	struct nlattr *a = p;

	while (len >= (int)sizeof(*a) && a->nla_len >= sizeof(*a) && a->nla_len <= len) {
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		len -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	return NULL;
}

/* The family's id through the controller, or -errno. */
static inline int sd_genl_family(int fd)
{
	struct sd_genl_msg m = {};
	struct nlattr *a;
	int ret;

	m.n.nlmsg_type = GENL_ID_CTRL;
	m.n.nlmsg_flags = NLM_F_REQUEST;
	m.g.cmd = CTRL_CMD_GETFAMILY;
	m.g.version = 1;
	a = (struct nlattr *)m.attrs;
	a->nla_type = CTRL_ATTR_FAMILY_NAME;
	a->nla_len = NLA_HDRLEN + sizeof(SMBDIRECT_GENL_NAME);
	memcpy((char *)a + NLA_HDRLEN, SMBDIRECT_GENL_NAME, sizeof(SMBDIRECT_GENL_NAME));
	m.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN + NLA_ALIGN(a->nla_len));
	ret = sd_genl_talk(fd, &m);
	if (ret)
		return ret;
	a = sd_nla_find(m.attrs, m.n.nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), CTRL_ATTR_FAMILY_ID);
	return a ? *(__u16 *)((char *)a + NLA_HDRLEN) : -ENOENT;
}

/* A request of cmd without attributes, into *m (not sent). */
static inline void sd_genl_request(struct sd_genl_msg *m, int family, int cmd, int flags)
{
	memset(m, 0, sizeof(*m));
	m->n.nlmsg_type = family;
	m->n.nlmsg_flags = NLM_F_REQUEST | flags;
	m->n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m->g.cmd = cmd;
	m->g.version = SMBDIRECT_GENL_VERSION;
}

/*
 * Counter attr of the caller's namespace's totals (STATS_GET); -ENOENT if
 * the module does not send it, or -errno.
 */
static inline int sd_stats_get(int attr, __u64 *v)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	struct sd_genl_msg m;
	struct nlattr *a;
	int ret, family;

	if (fd < 0)
		return -errno;
	family = sd_genl_family(fd);
	ret = family;
	if (family < 0)
		goto out;
	sd_genl_request(&m, family, SMBDIRECT_CMD_STATS_GET, 0);
	ret = sd_genl_talk(fd, &m);
	if (ret)
		goto out;
	a = sd_nla_find(m.attrs, m.n.nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN),
			SMBDIRECT_A_STATS_TOP_MODULE);
	if (a)
		a = sd_nla_find((char *)a + NLA_HDRLEN, a->nla_len - NLA_HDRLEN, attr);
	ret = -ENOENT;
	if (a && a->nla_len == NLA_HDRLEN + sizeof(__u64)) {
		memcpy(v, (char *)a + NLA_HDRLEN, sizeof(*v));
		ret = 0;
	}
out:
	close(fd);
	return ret;
}

/* STATS_RESET of the caller's namespace: 0 or -errno (EPERM). */
static inline int sd_stats_reset(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	struct sd_genl_msg m;
	int ret, family;

	if (fd < 0)
		return -errno;
	family = sd_genl_family(fd);
	ret = family;
	if (family >= 0) {
		sd_genl_request(&m, family, SMBDIRECT_CMD_STATS_RESET, NLM_F_ACK);
		ret = sd_genl_talk(fd, &m);
		/* The ack of a success is an NLMSG_ERROR with error 0. */
		if (ret == -ENOMSG)
			ret = 0;
	}
	close(fd);
	return ret;
}

/*
 * The SOCK_GET dump as the caller sees it: how many sockets, and how many
 * of them owned by uid (as the caller's user namespace maps it).
 */
static inline int sd_sock_dump_count(__u32 uid, int *mine)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	static struct sd_genl_msg r[16];
	struct sd_genl_msg m;
	struct nlmsghdr *h;
	int family, n = 0, left;
	ssize_t got;

	*mine = 0;
	if (fd < 0)
		return -errno;
	family = sd_genl_family(fd);
	if (family < 0) {
		close(fd);
		return family;
	}
	sd_genl_request(&m, family, SMBDIRECT_CMD_SOCK_GET, NLM_F_DUMP);
	if (send(fd, &m, m.n.nlmsg_len, 0) < 0)
		goto err;
	for (;;) {
		got = recv(fd, r, sizeof(r), 0);
		if (got < 0)
			goto err;
		left = (int)got;
		for (h = &r[0].n; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			struct nlattr *a;

			if (h->nlmsg_type == NLMSG_DONE) {
				close(fd);
				return n;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				close(fd);
				return ((struct nlmsgerr *)NLMSG_DATA(h))->error;
			}
			n++;
			a = sd_nla_find((char *)NLMSG_DATA(h) + GENL_HDRLEN,
					h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN), SMBDIRECT_A_SOCK_UID);
			if (a && *(__u32 *)((char *)a + NLA_HDRLEN) == uid)
				(*mine)++;
		}
	}
err:
	n = -errno;
	close(fd);
	return n;
}

#endif /* SD_GENL_TEST_H */
