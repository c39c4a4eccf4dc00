// SPDX-License-Identifier: LGPL-2.1-or-later
#include "genl.hpp"

#include <cerrno>
#include <cstdlib>
#include <memory>

#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

namespace sd::tool::genl
{

std::error_code from_nl(int nl_error)
{
	int e;

	switch (std::abs(nl_error)) {
	case NLE_SUCCESS:
		return {};
	case NLE_INTR:
	case NLE_DUMP_INTR:
		e = EINTR;
		break;
	case NLE_BAD_SOCK:
		e = EBADF;
		break;
	case NLE_AGAIN:
		e = EAGAIN;
		break;
	case NLE_NOMEM:
		e = ENOMEM;
		break;
	case NLE_EXIST:
		e = EEXIST;
		break;
	case NLE_INVAL:
	case NLE_MISSING_ATTR:
		e = EINVAL;
		break;
	case NLE_RANGE:
	case NLE_ATTRSIZE:
		e = ERANGE;
		break;
	case NLE_MSGSIZE:
	case NLE_MSG_OVERFLOW:
	case NLE_MSG_TRUNC:
		e = EMSGSIZE;
		break;
	case NLE_OPNOTSUPP:
	case NLE_MSGTYPE_NOSUPPORT:
		e = EOPNOTSUPP;
		break;
	case NLE_AF_NOSUPPORT:
		e = EAFNOSUPPORT;
		break;
	case NLE_OBJ_NOTFOUND:
		e = ENOENT;
		break;
	case NLE_NOADDR:
		e = EADDRNOTAVAIL;
		break;
	case NLE_BUSY:
		e = EBUSY;
		break;
	case NLE_PROTO_MISMATCH:
		e = EPROTONOSUPPORT;
		break;
	case NLE_NOACCESS:
		e = EACCES;
		break;
	case NLE_PERM:
		e = EPERM;
		break;
	case NLE_NODEV:
		e = ENODEV;
		break;
	case NLE_SEQ_MISMATCH:
	case NLE_MSG_TOOSHORT:
		e = EPROTO;
		break;
	default:
		e = EIO;
	}
	return { e, std::system_category() };
}

Message &Message::operator=(Message &&o) noexcept
{
	if (this != &o) {
		if (msg_)
			nlmsg_free(msg_);
		msg_ = std::exchange(o.msg_, nullptr);
	}
	return *this;
}

Message::~Message()
{
	if (msg_)
		nlmsg_free(msg_);
}

std::error_code Message::make(int family, uint8_t cmd, uint8_t version, int flags, Message &out)
{
	Message m;
	m.msg_ = nlmsg_alloc();
	if (!m.msg_)
		return std::make_error_code(std::errc::not_enough_memory);
	if (!genlmsg_put(m.msg_, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, flags, cmd, version))
		return std::make_error_code(std::errc::not_enough_memory);
	out = std::move(m);
	return {};
}

std::error_code Message::put_u32(int type, uint32_t value)
{
	return from_nl(nla_put_u32(msg_, type, value));
}

std::error_code Message::put_string(int type, const std::string &value)
{
	return from_nl(nla_put_string(msg_, type, value.c_str()));
}

Socket &Socket::operator=(Socket &&o) noexcept
{
	if (this != &o) {
		if (sk_)
			nl_socket_free(sk_);
		sk_ = std::exchange(o.sk_, nullptr);
	}
	return *this;
}

Socket::~Socket()
{
	if (sk_)
		nl_socket_free(sk_);
}

std::error_code Socket::open()
{
	nl_sock *sk = nl_socket_alloc();
	if (!sk)
		return std::make_error_code(std::errc::not_enough_memory);
	Socket s;
	s.sk_ = sk;
	int rc = genl_connect(sk);
	if (rc < 0)
		return from_nl(rc);
	/* ACKs only where a request asks for one; replies of any size. */
	nl_socket_disable_auto_ack(sk);
	nl_socket_enable_msg_peek(sk);
	*this = std::move(s);
	return {};
}

std::error_code Socket::resolve(const char *family, int &id)
{
	int rc = genl_ctrl_resolve(sk_, family);
	if (rc < 0)
		return from_nl(rc);
	id = rc;
	return {};
}

namespace
{

struct Exchange {
	const ReplyFn *fn = nullptr;
	std::error_code error; /* the kernel's or fn's */
	bool done = false;
	bool interrupted = false;
};

int on_valid(nl_msg *msg, void *arg)
{
	auto *x = static_cast<Exchange *>(arg);
	std::error_code ec = (*x->fn)(nlmsg_hdr(msg));
	if (ec) {
		x->error = ec;
		x->done = true;
		return NL_STOP;
	}
	return NL_OK;
}

int on_done(nl_msg *, void *arg)
{
	static_cast<Exchange *>(arg)->done = true;
	return NL_STOP;
}

int on_dump_intr(nl_msg *, void *arg)
{
	static_cast<Exchange *>(arg)->interrupted = true;
	return NL_OK;
}

int on_error(sockaddr_nl *, nlmsgerr *e, void *arg)
{
	auto *x = static_cast<Exchange *>(arg);
	x->error = { e->error < 0 ? -e->error : EIO, std::system_category() };
	x->done = true;
	return NL_STOP;
}

struct CbFree {
	void operator()(nl_cb *cb) const
	{
		nl_cb_put(cb);
	}
};

} // namespace

std::error_code Socket::transact(const Message &msg, const ReplyFn &fn)
{
	std::unique_ptr<nl_cb, CbFree> cb(nl_cb_alloc(NL_CB_DEFAULT));
	if (!cb)
		return std::make_error_code(std::errc::not_enough_memory);
	Exchange x;
	x.fn = &fn;
	nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, on_valid, &x);
	nl_cb_set(cb.get(), NL_CB_FINISH, NL_CB_CUSTOM, on_done, &x);
	nl_cb_set(cb.get(), NL_CB_ACK, NL_CB_CUSTOM, on_done, &x);
	nl_cb_set(cb.get(), NL_CB_DUMP_INTR, NL_CB_CUSTOM, on_dump_intr, &x);
	nl_cb_err(cb.get(), NL_CB_CUSTOM, on_error, &x);

	int rc = nl_send_auto(sk_, msg.get());
	if (rc < 0)
		return from_nl(rc);
	while (!x.done) {
		rc = nl_recvmsgs(sk_, cb.get());
		if (x.error)
			return x.error;
		if (rc < 0)
			return from_nl(rc);
	}
	if (x.interrupted)
		return std::make_error_code(std::errc::interrupted);
	return {};
}

} // namespace sd::tool::genl
