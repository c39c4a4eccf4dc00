// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The facts about this machine's interfaces and RDMA ports (see
// interface_probe.h).
#include "interface_probe.h"
#include "internal.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <linux/if_addr.h>
#include <linux/smbdirect.h>
#include <memory>
#include <netinet/in.h>
#include <pthread.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/socket.h>
#include <dlfcn.h>
#include <rdma/rdma_netlink.h>
#include <unistd.h>

namespace sd::detail
{

namespace
{

// --- libnl, loaded on first use ------------------------------------------------
// libsmbdirect.so needs libc only: the C API's callers (Samba's smbd, the
// preload's hosts) do not load libnl unless they list interfaces. The
// probe reaches libnl-3 and libnl-route-3 through dlopen() by their
// sonames (Debian: libnl-3-200, libnl-route-3-200) and a table of the
// functions it calls, each typed by libnl's own declaration.
#define SD_LIBNL_CORE(X)                                                                       \
	X(nl_socket_alloc)                                                                     \
	X(nl_socket_free)                                                                      \
	X(nl_connect)                                                                          \
	X(nl_socket_modify_cb)                                                                 \
	X(nl_send_auto)                                                                        \
	X(nl_recvmsgs_default)                                                                 \
	X(nl_cache_free)                                                                       \
	X(nl_cache_get_first)                                                                  \
	X(nl_cache_get_next)                                                                   \
	X(nl_addr_get_binary_addr)                                                             \
	X(nl_addr_get_len)                                                                     \
	X(nla_data)                                                                            \
	X(nla_len)                                                                             \
	X(nla_get_u8)                                                                          \
	X(nla_get_u32)                                                                         \
	X(nla_put_u32)                                                                         \
	X(nlmsg_alloc_simple)                                                                  \
	X(nlmsg_free)                                                                          \
	X(nlmsg_hdr)                                                                           \
	X(nlmsg_parse)
#define SD_LIBNL_ROUTE(X)                                                                      \
	X(rtnl_link_alloc_cache)                                                               \
	X(rtnl_link_get_ifindex)                                                               \
	X(rtnl_link_get_name)                                                                  \
	X(rtnl_link_get_type)                                                                  \
	X(rtnl_link_get_arptype)                                                               \
	X(rtnl_link_get_flags)                                                                 \
	X(rtnl_link_get_link)                                                                  \
	X(rtnl_link_get_master)                                                                \
	X(rtnl_link_get_addr)                                                                  \
	X(rtnl_addr_alloc_cache)                                                               \
	X(rtnl_addr_get_flags)                                                                 \
	X(rtnl_addr_get_local)                                                                 \
	X(rtnl_addr_get_ifindex)                                                               \
	X(rtnl_addr_get_family)

struct Libnl {
#define SD_LIBNL_MEMBER(f) decltype(&::f) f = nullptr;
	SD_LIBNL_CORE(SD_LIBNL_MEMBER)
	SD_LIBNL_ROUTE(SD_LIBNL_MEMBER)
#undef SD_LIBNL_MEMBER
	int error = 0; // 0, or -ELIBACC when a library or a function is missing
};

constexpr const char libnl_core_soname[] = "libnl-3.so.200";
constexpr const char libnl_route_soname[] = "libnl-route-3.so.200";

// dlopen() once; the handles stay open for the life of the process.
Libnl load_libnl()
{
	Libnl l;
	void *core = ::dlopen(libnl_core_soname, RTLD_NOW | RTLD_LOCAL);
	void *route = core ? ::dlopen(libnl_route_soname, RTLD_NOW | RTLD_LOCAL) : nullptr;
	if (!core || !route) {
		l.error = -ELIBACC;
		return l;
	}
#define SD_LIBNL_LOAD(lib, f)                                                                  \
	l.f = reinterpret_cast<decltype(&::f)>(::dlsym(lib, #f));                              \
	if (!l.f)                                                                              \
		l.error = -ELIBACC;
#define SD_LIBNL_LOAD_CORE(f) SD_LIBNL_LOAD(core, f)
#define SD_LIBNL_LOAD_ROUTE(f) SD_LIBNL_LOAD(route, f)
	SD_LIBNL_CORE(SD_LIBNL_LOAD_CORE)
	SD_LIBNL_ROUTE(SD_LIBNL_LOAD_ROUTE)
#undef SD_LIBNL_LOAD_ROUTE
#undef SD_LIBNL_LOAD_CORE
#undef SD_LIBNL_LOAD
	return l;
}

// Constant-initialized, and written once under pthread_once(): no
// function-local static, whose guard would need the C++ runtime.
constinit Libnl loaded_libnl;
pthread_once_t libnl_once = PTHREAD_ONCE_INIT;

const Libnl &libnl()
{
	::pthread_once(&libnl_once, [] { loaded_libnl = load_libnl(); });
	return loaded_libnl;
}

// libnl's error numbers are its own; callers get -errno.
int nl_to_errno(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_PERM:
		return -EPERM;
	case NLE_NOACCESS:
		return -EACCES;
	case NLE_INVAL:
		return -EINVAL;
	case NLE_OBJ_NOTFOUND:
		return -ENOENT;
	case NLE_NODEV:
		return -ENODEV;
	case NLE_AGAIN:
		return -EAGAIN;
	case NLE_INTR:
		return -EINTR;
	case NLE_BAD_SOCK:
		return -EBADF;
	case NLE_OPNOTSUPP:
		return -EOPNOTSUPP;
	case NLE_AF_NOSUPPORT:
		return -EAFNOSUPPORT;
	case NLE_PROTO_MISMATCH:
		return -EPROTONOSUPPORT;
	case NLE_BUSY:
		return -EBUSY;
	case NLE_RANGE:
		return -ERANGE;
	case NLE_MSGSIZE:
		return -EMSGSIZE;
	default:
		return -EIO;
	}
}

struct SockFree {
	void operator()(struct nl_sock *s) const
	{
		libnl().nl_socket_free(s);
	}
};
struct CacheFree {
	void operator()(struct nl_cache *c) const
	{
		libnl().nl_cache_free(c);
	}
};
struct MsgFree {
	void operator()(struct nl_msg *m) const
	{
		libnl().nlmsg_free(m);
	}
};
using NlSock = std::unique_ptr<struct nl_sock, SockFree>;
using NlCache = std::unique_ptr<struct nl_cache, CacheFree>;
using NlMsg = std::unique_ptr<struct nl_msg, MsgFree>;

// A path below sysfs, built up from parts; one too long for PATH_MAX
// is never opened.
using Path = FixedString<PATH_MAX>;
// What read_text() returns: sysfs attributes the probe reads are short.
using Text = FixedString<256>;

// The whole (small) file, without the trailing newline; false if unreadable.
bool read_text(const Path &path, Text &out)
{
	if (path.truncated())
		return false;
	int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	char buf[256];
	ssize_t n;
	do {
		n = ::read(fd, buf, sizeof(buf) - 1);
	} while (n < 0 && errno == EINTR);
	close_quietly(fd);
	if (n < 0)
		return false;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	out = std::string_view(buf, static_cast<size_t>(n));
	return true;
}

// Calls f(name) for each entry of a directory, without "." and "..", until
// f returns non-zero; that, or 0.
template <class F> int for_each_entry(const Path &path, F f)
{
	if (path.truncated())
		return 0;
	DIR *d = ::opendir(path.c_str());
	if (!d)
		return 0;
	int err = 0;
	while (struct dirent *e = ::readdir(d))
		if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..") &&
		    (err = f(std::string_view(e->d_name))))
			break;
	::closedir(d);
	return err;
}

// --- rtnetlink ---------------------------------------------------------------

int read_links(struct nl_sock *sk, SystemFacts &facts)
{
	struct nl_cache *raw = nullptr;
	int err = libnl().rtnl_link_alloc_cache(sk, AF_UNSPEC, &raw);
	if (err < 0)
		return nl_to_errno(err);
	NlCache cache(raw);
	for (struct nl_object *o = libnl().nl_cache_get_first(raw); o; o = libnl().nl_cache_get_next(o)) {
		auto *link = reinterpret_cast<struct rtnl_link *>(o);
		NetdevFacts n;
		n.ifindex = libnl().rtnl_link_get_ifindex(link);
		if (const char *name = libnl().rtnl_link_get_name(link))
			n.name = name;
		if (const char *kind = libnl().rtnl_link_get_type(link))
			n.kind = kind;
		n.arptype = libnl().rtnl_link_get_arptype(link);
		n.flags = libnl().rtnl_link_get_flags(link);
		n.link = libnl().rtnl_link_get_link(link);
		n.master = libnl().rtnl_link_get_master(link);
		if (struct nl_addr *a = libnl().rtnl_link_get_addr(link)) {
			n.hwaddr_len =
				std::min<size_t>(libnl().nl_addr_get_len(a), n.hwaddr.size());
			std::memcpy(n.hwaddr.data(), libnl().nl_addr_get_binary_addr(a),
				    n.hwaddr_len);
		}
		if (!facts.netdevs.push_back(n))
			return -ENOMEM;
	}
	return 0;
}

int read_addresses(struct nl_sock *sk, SystemFacts &facts)
{
	struct nl_cache *raw = nullptr;
	int err = libnl().rtnl_addr_alloc_cache(sk, &raw);
	if (err < 0)
		return nl_to_errno(err);
	NlCache cache(raw);
	for (struct nl_object *o = libnl().nl_cache_get_first(raw); o; o = libnl().nl_cache_get_next(o)) {
		auto *addr = reinterpret_cast<struct rtnl_addr *>(o);
		if (libnl().rtnl_addr_get_flags(addr) & (IFA_F_TENTATIVE | IFA_F_DADFAILED))
			continue;
		struct nl_addr *local = libnl().rtnl_addr_get_local(addr);
		if (!local)
			continue;
		InterfaceAddress ia;
		ia.ifindex = libnl().rtnl_addr_get_ifindex(addr);
		const void *bytes = libnl().nl_addr_get_binary_addr(local);
		unsigned len = libnl().nl_addr_get_len(local);
		int family = libnl().rtnl_addr_get_family(addr);
		if (family == AF_INET && len == 4) {
			auto *sin = reinterpret_cast<struct sockaddr_in *>(&ia.addr);
			sin->sin_family = AF_INET;
			std::memcpy(&sin->sin_addr, bytes, 4);
		} else if (family == AF_INET6 && len == 16) {
			auto *sin6 = reinterpret_cast<struct sockaddr_in6 *>(&ia.addr);
			sin6->sin6_family = AF_INET6;
			std::memcpy(&sin6->sin6_addr, bytes, 16);
			if (IN6_IS_ADDR_LINKLOCAL(&sin6->sin6_addr))
				sin6->sin6_scope_id = static_cast<uint32_t>(ia.ifindex);
		} else {
			continue;
		}
		if (!facts.addresses.push_back(ia))
			return -ENOMEM;
	}
	return 0;
}

// --- RDMA netlink ------------------------------------------------------------

struct RdmaDevice {
	uint32_t index = 0;
	RdmaDeviceName name;
	uint32_t node_type = 0;
};

struct DumpContext {
	Vector<RdmaDevice> *devices = nullptr;
	Vector<RdmaPortLink> *ports = nullptr;
	const RdmaDevice *device = nullptr; // whose ports are dumped
	int error = 0;			    // -ENOMEM when an answer could not be kept
};

bool get_u32(struct nlattr *a, uint32_t &v)
{
	if (!a || libnl().nla_len(a) < 4)
		return false;
	v = libnl().nla_get_u32(a);
	return true;
}

std::string_view get_string(struct nlattr *a)
{
	if (!a || libnl().nla_len(a) <= 0)
		return {};
	const char *s = static_cast<const char *>(libnl().nla_data(a));
	return { s, strnlen(s, static_cast<size_t>(libnl().nla_len(a))) };
}

int on_device(struct nl_msg *msg, void *arg)
{
	auto *ctx = static_cast<DumpContext *>(arg);
	struct nlattr *tb[RDMA_NLDEV_ATTR_MAX] = {};
	if (libnl().nlmsg_parse(libnl().nlmsg_hdr(msg), 0, tb, RDMA_NLDEV_ATTR_MAX - 1, nullptr) < 0)
		return NL_SKIP;
	RdmaDevice d;
	if (!get_u32(tb[RDMA_NLDEV_ATTR_DEV_INDEX], d.index))
		return NL_SKIP;
	d.name = get_string(tb[RDMA_NLDEV_ATTR_DEV_NAME]);
	if (tb[RDMA_NLDEV_ATTR_DEV_NODE_TYPE] && libnl().nla_len(tb[RDMA_NLDEV_ATTR_DEV_NODE_TYPE]) >= 1)
		d.node_type = libnl().nla_get_u8(tb[RDMA_NLDEV_ATTR_DEV_NODE_TYPE]);
	if (!d.name.empty() && !ctx->devices->push_back(d)) {
		ctx->error = -ENOMEM;
		return NL_STOP;
	}
	return NL_OK;
}

int on_port(struct nl_msg *msg, void *arg)
{
	auto *ctx = static_cast<DumpContext *>(arg);
	struct nlattr *tb[RDMA_NLDEV_ATTR_MAX] = {};
	if (libnl().nlmsg_parse(libnl().nlmsg_hdr(msg), 0, tb, RDMA_NLDEV_ATTR_MAX - 1, nullptr) < 0)
		return NL_SKIP;
	RdmaPortLink p;
	uint32_t v = 0;
	if (!get_u32(tb[RDMA_NLDEV_ATTR_PORT_INDEX], p.port))
		return NL_SKIP;
	if (get_u32(tb[RDMA_NLDEV_ATTR_NDEV_INDEX], v))
		p.netdev = static_cast<int>(v);
	p.device = ctx->device->name;
	p.node_type = ctx->device->node_type;
	if (!ctx->ports->push_back(p)) {
		ctx->error = -ENOMEM;
		return NL_STOP;
	}
	return NL_OK;
}

// One dump request of RDMA_NL_NLDEV command cmd, its answers handed to cb.
// dev_index (when given) names the device: RDMA device indexes start at 0.
int rdma_dump(struct nl_sock *sk, int cmd, const uint32_t *dev_index, nl_recvmsg_msg_cb_t cb,
	      DumpContext &ctx)
{
	NlMsg msg(libnl().nlmsg_alloc_simple(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd),
				     NLM_F_REQUEST | NLM_F_DUMP));
	if (!msg)
		return -ENOMEM;
	if (dev_index && libnl().nla_put_u32(msg.get(), RDMA_NLDEV_ATTR_DEV_INDEX, *dev_index) < 0)
		return -ENOMEM;
	int err = libnl().nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, cb, &ctx);
	if (err < 0)
		return nl_to_errno(err);
	err = libnl().nl_send_auto(sk, msg.get());
	if (err < 0)
		return nl_to_errno(err);
	err = libnl().nl_recvmsgs_default(sk);
	if (ctx.error)
		return ctx.error;
	return err < 0 ? nl_to_errno(err) : 0;
}

int read_rdma_ports(Vector<RdmaPortLink> &ports)
{
	NlSock sk(libnl().nl_socket_alloc());
	if (!sk)
		return -ENOMEM;
	// Without ib_core there is no NETLINK_RDMA, and no RDMA device either.
	if (libnl().nl_connect(sk.get(), NETLINK_RDMA) < 0)
		return 0;
	Vector<RdmaDevice> devices;
	DumpContext ctx;
	ctx.devices = &devices;
	ctx.ports = &ports;
	int err = rdma_dump(sk.get(), RDMA_NLDEV_CMD_GET, nullptr, on_device, ctx);
	if (err)
		return err;
	for (const RdmaDevice &d : devices) {
		ctx.device = &d;
		err = rdma_dump(sk.get(), RDMA_NLDEV_CMD_PORT_GET, &d.index, on_port, ctx);
		// A device can go away between the two dumps.
		if (err && err != -EINVAL && err != -ENODEV)
			return err;
	}
	return 0;
}

int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

} // namespace

// --- sysfs -------------------------------------------------------------------

uint64_t parse_port_rate(std::string_view text)
{
	// "<number> Gb/sec (...)", the number possibly with a fraction: "2.5".
	Text nul_terminated;
	nul_terminated = text;
	const char *start = nul_terminated.c_str();
	char *end = nullptr;
	double gbps = std::strtod(start, &end);
	if (end == start || gbps <= 0 || std::strncmp(end, " Gb/sec", 7) != 0)
		return 0;
	return static_cast<uint64_t>(gbps * 1e9 + 0.5);
}

bool parse_gid(std::string_view text, std::array<uint8_t, 16> &gid)
{
	// Eight groups of four hex digits separated by ':'.
	if (text.size() != 39)
		return false;
	size_t at = 0;
	for (int group = 0; group < 8; group++) {
		for (int half = 0; half < 2; half++) {
			int hi = hex_digit(text[at]), lo = hex_digit(text[at + 1]);
			if (hi < 0 || lo < 0)
				return false;
			gid[static_cast<size_t>(group * 2 + half)] =
				static_cast<uint8_t>(hi << 4 | lo);
			at += 2;
		}
		if (group < 7 && text[at++] != ':')
			return false;
	}
	return true;
}

int64_t read_netdev_speed(std::string_view sys_root, std::string_view name)
{
	Path path;
	path.append_all(sys_root, "/class/net/", name, "/speed");
	Text text;
	if (!read_text(path, text) || text.empty())
		return -1;
	char *end = nullptr;
	long long v = std::strtoll(text.c_str(), &end, 10);
	return (*end || v <= 0) ? -1 : v;
}

namespace
{

// RoCE: each GID entry's netdev, once; unused entries cannot be read.
int read_gid_netdevs(const Path &dir, std::span<const NetdevFacts> netdevs, RdmaPortFacts &p)
{
	Path ndevs = dir;
	ndevs.append("/gid_attrs/ndevs");
	if (ndevs.truncated() || ::access(ndevs.c_str(), R_OK | X_OK) != 0)
		return 0;
	p.gid_table_known = true;
	return for_each_entry(ndevs, [&](std::string_view entry) {
		Path path = ndevs;
		path.append_all("/", entry);
		Text text;
		if (!read_text(path, text) || text.empty())
			return 0;
		for (const NetdevFacts &n : netdevs)
			if (n.name == text.view() && !p.gid_netdevs.contains(n.ifindex) &&
			    !p.gid_netdevs.push_back(n.ifindex))
				return -ENOMEM;
		return 0;
	});
}

// InfiniBand: the port's GIDs, the unused (all-zero) entries left out.
int read_gids(const Path &dir, RdmaPortFacts &p)
{
	Path gids = dir;
	gids.append("/gids");
	return for_each_entry(gids, [&](std::string_view entry) {
		Path path = gids;
		path.append_all("/", entry);
		Text text;
		std::array<uint8_t, 16> gid;
		if (!read_text(path, text) || !parse_gid(text, gid))
			return 0;
		bool zero = std::all_of(gid.begin(), gid.end(), [](uint8_t b) { return !b; });
		return zero || p.gids.push_back(gid) ? 0 : -ENOMEM;
	});
}

} // namespace

int read_port_sysfs(std::string_view sys_root, const RdmaPortLink &link,
		    std::span<const NetdevFacts> netdevs, bool read_gids_too, RdmaPortFacts &p)
{
	p = RdmaPortFacts();
	p.device = link.device;
	p.port = link.port;
	p.netdev = link.netdev;
	Path device;
	device.append_all(sys_root, "/class/infiniband/", link.device);
	Path dir = device;
	dir.append_all("/ports/", link.port);

	uint32_t node_type = link.node_type;
	Text text;
	Path path = device;
	if (!node_type && read_text(path.append("/node_type"), text))
		node_type = static_cast<uint32_t>(std::strtoul(text.c_str(), nullptr, 10));
	if (node_type == RDMA_NODE_RNIC) {
		p.transport = SMBDIRECT_TRANSPORT_IWARP;
	} else if (node_type == RDMA_NODE_IB_CA || node_type == 0) {
		path = dir;
		if (read_text(path.append("/link_layer"), text))
			p.transport = text == "Ethernet"     ? SMBDIRECT_TRANSPORT_ROCE
				      : text == "InfiniBand" ? SMBDIRECT_TRANSPORT_IB
							     : 0;
		else
			p.transport =
				link.netdev > 0 ? SMBDIRECT_TRANSPORT_ROCE : SMBDIRECT_TRANSPORT_IB;
	}

	path = dir;
	if (read_text(path.append("/rate"), text))
		p.rate_bps = parse_port_rate(text);

	// Without the GIDs, the rules do without (gid_table_decides(), have_ipoib()).
	if (read_gids_too && p.transport == SMBDIRECT_TRANSPORT_ROCE)
		return read_gid_netdevs(dir, netdevs, p);
	if (read_gids_too && p.transport == SMBDIRECT_TRANSPORT_IB)
		return read_gids(dir, p);
	return 0;
}

int probe_system(SystemFacts &facts)
{
	if (int err = libnl().error)
		return err;
	NlSock sk(libnl().nl_socket_alloc());
	if (!sk)
		return -ENOMEM;
	int err = libnl().nl_connect(sk.get(), NETLINK_ROUTE);
	if (err < 0)
		return nl_to_errno(err);
	err = read_links(sk.get(), facts);
	if (!err)
		err = read_addresses(sk.get(), facts);
	if (err)
		return err;

	Vector<RdmaPortLink> links;
	err = read_rdma_ports(links);
	if (err)
		return err;
	bool ipoib = have_ipoib(facts.netdevs);
	for (const RdmaPortLink &l : links) {
		// Whether the GIDs are needed depends on the transport, known
		// once the port is read: read it again only if they are.
		RdmaPortFacts p;
		err = read_port_sysfs("/sys", l, facts.netdevs, false, p);
		if (!err && ((p.transport == SMBDIRECT_TRANSPORT_ROCE &&
			      gid_table_decides(facts.netdevs, p.netdev)) ||
			     (p.transport == SMBDIRECT_TRANSPORT_IB && ipoib)))
			err = read_port_sysfs("/sys", l, facts.netdevs, true, p);
		if (err)
			return err;
		if (!facts.ports.push_back(std::move(p)))
			return -ENOMEM;
	}
	for (NetdevFacts &n : facts.netdevs)
		n.speed_mbps = read_netdev_speed("/sys", n.name);
	return 0;
}

} // namespace sd::detail
