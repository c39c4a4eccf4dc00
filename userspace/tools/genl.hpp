// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Generic netlink for the smbdirect subcommands, on libnl-3 and
 * libnl-genl-3: an owned nl_sock, family resolution, and one request with
 * its replies (a dump's messages, or a "do" command's reply and ACK)
 * handed to a callback. Errors are std::error_code in the system category:
 * the kernel's own errno when it answered with one, libnl's errors
 * translated otherwise. No exceptions, no global state: the callbacks'
 * context lives on the caller's stack.
 */
#ifndef SMBDIRECT_TOOLS_GENL_HPP
#define SMBDIRECT_TOOLS_GENL_HPP

#include <cstdint>
#include <functional>
#include <string>
#include <system_error>
#include <utility>

struct nl_sock;
struct nl_msg;
struct nlmsghdr;

namespace sd::tool::genl
{

/* libnl's error (-NLE_* or NLE_*) as the errno it stands for (EIO if none). */
std::error_code from_nl(int nl_error);

/* An nl_msg of our own, freed when it goes out of scope. */
class Message {
    public:
	Message() = default;
	Message(Message &&o) noexcept : msg_(std::exchange(o.msg_, nullptr))
	{
	}
	Message &operator=(Message &&o) noexcept;
	Message(const Message &) = delete;
	Message &operator=(const Message &) = delete;
	~Message();

	/*
	 * A generic netlink request: family id, command, version, and
	 * NLM_F_* flags beyond NLM_F_REQUEST (NLM_F_DUMP, NLM_F_ACK).
	 * ENOMEM when libnl cannot allocate it.
	 */
	static std::error_code make(int family, uint8_t cmd, uint8_t version, int flags,
				    Message &out);

	std::error_code put_u32(int type, uint32_t value);
	std::error_code put_string(int type, const std::string &value);

	nl_msg *get() const
	{
		return msg_;
	}

    private:
	nl_msg *msg_ = nullptr;
};

/*
 * Called for each reply message of the request (not for NLMSG_DONE,
 * NLMSG_ERROR or ACKs). A returned error ends the exchange with it.
 */
using ReplyFn = std::function<std::error_code(const nlmsghdr *)>;

class Socket {
    public:
	Socket() = default;
	Socket(Socket &&o) noexcept : sk_(std::exchange(o.sk_, nullptr))
	{
	}
	Socket &operator=(Socket &&o) noexcept;
	Socket(const Socket &) = delete;
	Socket &operator=(const Socket &) = delete;
	~Socket();

	/* A NETLINK_GENERIC socket, connected. */
	std::error_code open();
	/* The family's id; ENOENT when no such family is registered. */
	std::error_code resolve(const char *family, int &id);
	/*
	 * Sends msg and feeds its replies to fn until the dump's
	 * NLMSG_DONE, the ACK (requests made with NLM_F_ACK), or an error:
	 * the kernel's errno (EPERM, EINVAL...), fn's, or EINTR when the
	 * kernel flagged a dump as interrupted (NLM_F_DUMP_INTR: the set
	 * changed under it; fn has seen an inconsistent set and the caller
	 * may dump again).
	 */
	std::error_code transact(const Message &msg, const ReplyFn &fn);

	nl_sock *get() const
	{
		return sk_;
	}

    private:
	nl_sock *sk_ = nullptr;
};

} // namespace sd::tool::genl

#endif
