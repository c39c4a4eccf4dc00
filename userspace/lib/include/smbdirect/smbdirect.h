/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libsmbdirect: the C API over af_smbdirect.ko's socket UAPI
 * (<smbdirect/linux/smbdirect.h>, the kernel module's uapi/linux/smbdirect.h
 * installed under the library's own directory), for SMB servers and
 * clients written in C.
 *
 * Conventions (those of liburing):
 *  - every call returns 0 or a non-negative result on success and -errno
 *    on failure; errno is never the error channel;
 *  - the library never hides the kernel's errors: an error the kernel
 *    returned is passed on as it is;
 *  - no hidden global state beyond one cached number, the address family
 *    af_smbdirect.ko took (re-read when the module was reloaded);
 *  - every function has a man page, smbdirect_<name>(3).
 */
#ifndef SMBDIRECT_SMBDIRECT_H
#define SMBDIRECT_SMBDIRECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <smbdirect/linux/smbdirect.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The version of this header (and of the library built with it; the
 * library's CMake build reads it from here). Within one major version
 * the ABI only grows: a function added in MAJOR.MINOR sits in symbol
 * version SMBDIRECT_MAJOR.MINOR, so a program using it does not load with
 * an older library. SMBDIRECT_CHECK_VERSION(0, 2, 0) is 1 when the header
 * is 0.2.0 or newer, usable in #if. pkg-config: smbdirect >= 0.2.0;
 * CMake: find_package(smbdirect 0.2).
 */
#define SMBDIRECT_VERSION_MAJOR 0
#define SMBDIRECT_VERSION_MINOR 2
#define SMBDIRECT_VERSION_PATCH 0
#define SMBDIRECT_VERSION_STRING "0.2.0"
#define SMBDIRECT_CHECK_VERSION(major, minor, patch)                              \
	(SMBDIRECT_VERSION_MAJOR > (major) ||                                     \
	 (SMBDIRECT_VERSION_MAJOR == (major) &&                                   \
	  (SMBDIRECT_VERSION_MINOR > (minor) ||                                   \
	   (SMBDIRECT_VERSION_MINOR == (minor) && SMBDIRECT_VERSION_PATCH >= (patch)))))
/* The names of 0.1. */
#define SMBDIRECT_LIB_VERSION_MAJOR SMBDIRECT_VERSION_MAJOR
#define SMBDIRECT_LIB_VERSION_MINOR SMBDIRECT_VERSION_MINOR

/*
 * The running library's version, "MAJOR.MINOR.PATCH" ("0.1" before 0.2),
 * which may be newer than the header's.
 */
const char *smbdirect_version(void);

/* --- is the module there? ------------------------------------------------ */

/*
 * The address family af_smbdirect.ko registered (read from
 * SMBDIRECT_FAMILY_SYSFS), or -ENOENT when the module is not loaded.
 */
int smbdirect_family(void);

/*
 * 0 when SMB-Direct sockets can be created; else -errno and, if why is not
 * NULL, a sentence a person can act on ("af_smbdirect is not loaded:
 * modprobe af_smbdirect") written to why (always NUL-terminated).
 */
int smbdirect_available(char *why, size_t why_len);

/* --- sockets -------------------------------------------------------------- */

/*
 * A flag of smbdirect_socket(), smbdirect_connect() and smbdirect_listen():
 * make the socket through upstream's proposed entry point,
 * socket(AF_INET or AF_INET6, SOCK_STREAM, IPPROTO_SMBDIRECT), instead of
 * AF_SMBDIRECT. The same socket (options, ioctls, RDMA) that is an inet
 * stream socket to security modules and seccomp; SOCK_STREAM only.
 * -EPROTONOSUPPORT when the module runs without that entry point.
 */
#define SMBDIRECT_SOCKET_IPPROTO 0x40000000

/*
 * A new SMB-Direct socket. domain: AF_INET, AF_INET6 or AF_UNSPEC (the
 * addresses passed to bind/connect decide; with SMBDIRECT_SOCKET_IPPROTO,
 * AF_UNSPEC is AF_INET6, which takes IPv4 too); type: SOCK_STREAM or
 * SOCK_SEQPACKET, optionally or'ed with SOCK_CLOEXEC / SOCK_NONBLOCK;
 * flags: SOCK_CLOEXEC | SOCK_NONBLOCK | SMBDIRECT_SOCKET_IPPROTO. Returns
 * the fd.
 */
int smbdirect_socket(int domain, int type, int flags);

/*
 * socket + connect in one call. With SOCK_NONBLOCK in flags the fd is
 * returned while the connection is still being made (poll for POLLOUT,
 * then SO_ERROR). Returns the fd.
 */
int smbdirect_connect(const struct sockaddr *addr, socklen_t addr_len, int type,
		      int flags);

/* socket + bind + listen in one call. Returns the listening fd. */
int smbdirect_listen(const struct sockaddr *addr, socklen_t addr_len, int type,
		     int flags, int backlog);

/* accept4() on a listening SMB-Direct socket. Returns the new fd. */
int smbdirect_accept(int listen_fd, struct sockaddr *addr, socklen_t *addr_len,
		     int flags);

/*
 * Numeric host ("10.0.0.1", "fd00::1", "::") and port ("445") to a
 * sockaddr_in/sockaddr_in6. host NULL means the wildcard of AF_INET6.
 */
int smbdirect_parse_address(const char *host, const char *port,
			    struct sockaddr_storage *addr, socklen_t *addr_len);

/* The connection's negotiated parameters (SMBDIRECT_IOC_GET_PARAMS). */
int smbdirect_connection_get_parameters(int fd, struct smbdirect_params *params);

/*
 * SOL_SMBDIRECT options: set before connect() or listen(). The generic pair
 * takes an SMBDIRECT_OPT_* name; the typed ones name the option.
 */
int smbdirect_set_option(int fd, int option, uint32_t value);
int smbdirect_get_option(int fd, int option, uint32_t *value);
int smbdirect_set_receive_credit_max(int fd, uint32_t value);
int smbdirect_get_receive_credit_max(int fd, uint32_t *value);
int smbdirect_set_send_credit_target(int fd, uint32_t value);
int smbdirect_get_send_credit_target(int fd, uint32_t *value);
int smbdirect_set_max_send_size(int fd, uint32_t value);
int smbdirect_get_max_send_size(int fd, uint32_t *value);
int smbdirect_set_max_receive_size(int fd, uint32_t value);
int smbdirect_get_max_receive_size(int fd, uint32_t *value);
int smbdirect_set_max_fragmented_size(int fd, uint32_t value);
int smbdirect_get_max_fragmented_size(int fd, uint32_t *value);
int smbdirect_set_max_read_write_size(int fd, uint32_t value);
int smbdirect_get_max_read_write_size(int fd, uint32_t *value);
int smbdirect_set_keepalive_interval(int fd, uint32_t seconds);
int smbdirect_get_keepalive_interval(int fd, uint32_t *seconds);

/* "InfiniBand", "RoCE", "iWARP" or "unknown" for SMBDIRECT_TRANSPORT_*. */
const char *smbdirect_transport_name(uint32_t transport);

/* --- RDMA: buffer descriptors V1 (the SMB3 READ/WRITE offload) ------------ */

/*
 * A live registration: the descriptors to put into SMB2 READ/WRITE
 * (ReadChannelInfo / WriteChannelInfo, little-endian as on the wire) and
 * the id the kernel knows it by. desc is allocated by the library and
 * freed by smbdirect_rdma_v1_deregister().
 */
struct smbdirect_rdma_v1_registration {
	uint64_t id;
	struct smbdirect_buffer_descriptor_v1 *desc;
	uint32_t desc_count;
	uint32_t flags;		/* as registered */
};

/*
 * Registers iov for the peer with flags SMBDIRECT_ACCESS_PEER_READ and/or
 * _PEER_WRITE, optionally SMBDIRECT_REG_REMOTE_INVALIDATE. The descriptor
 * array is sized by the library (it retries with the count the kernel asks
 * for on ENOSPC). On failure *reg is zeroed.
 */
int smbdirect_rdma_v1_register(int fd, const struct iovec *iov, int iov_count,
			       uint32_t flags,
			       struct smbdirect_rdma_v1_registration *reg);

/*
 * Invalidates and unpins. Returns the SMBDIRECT_REG_STATE_* bits (>= 0):
 * SMBDIRECT_REG_STATE_REMOTE_INVALIDATED when the peer had invalidated the
 * token with send-with-invalidate. *reg stays the caller's until the
 * kernel has taken the registration: on success, and on -ENOENT (the
 * kernel has none by that id: deregistered already, or released with the
 * RDMA device), the descriptor array is freed and *reg zeroed; on any
 * other error (-ENOMEM, -EFAULT, -EINTR, -EBADF, -ENOTTY, ...) the kernel
 * did not take it, it is still registered, *reg is left as it was, and
 * the call may be retried. To give up instead, free(reg->desc): the
 * registration then lasts until the socket's last close().
 */
int smbdirect_rdma_v1_deregister(int fd,
				 struct smbdirect_rdma_v1_registration *reg);

/*
 * RDMA READ from the peer's descriptors into iov (an SMB2 WRITE on a
 * server), RDMA WRITE from iov into them (an SMB2 READ). Return the bytes
 * moved: min(local bytes, descriptor bytes).
 */
ssize_t smbdirect_rdma_v1_readv(int fd, const struct iovec *iov, int iov_count,
				const struct smbdirect_buffer_descriptor_v1 *desc,
				uint32_t desc_count);
ssize_t smbdirect_rdma_v1_writev(int fd, const struct iovec *iov, int iov_count,
				 const struct smbdirect_buffer_descriptor_v1 *desc,
				 uint32_t desc_count);

/* --- send with remote invalidation ---------------------------------------- */

/*
 * Room for the control message: CMSG_SPACE(sizeof(uint32_t)), 24 bytes on
 * 64-bit ABIs, 16 on 32-bit ones (i386, armhf).
 */
#define SMBDIRECT_CMSG_INVALIDATE_SPACE CMSG_SPACE(sizeof(uint32_t))

/*
 * Writes the SMBDIRECT_CMSG_SEND_INVALIDATE control message for token into
 * control (control_len >= SMBDIRECT_CMSG_INVALIDATE_SPACE) and points
 * msg->msg_control/msg_controllen at it.
 */
int smbdirect_cmsg_invalidate(struct msghdr *msg, void *control,
			      size_t control_len, uint32_t token);

/*
 * sendmsg of iov that invalidates the peer's token (host order of the
 * descriptor's __le32) with its last PDU. Returns the bytes taken.
 */
ssize_t smbdirect_send_with_invalidate(int fd, const struct iovec *iov,
				       int iov_count, uint32_t token,
				       int msg_flags);

/* --- asynchronous RDMA (SMBDIRECT_CMSG_RDMA) ------------------------------- */

/*
 * Many transfers in flight on one socket, none blocking (see "Asynchronous
 * RDMA" in <linux/smbdirect.h>). A transfer is described by a struct
 * smbdirect_rdma_args (prepared by the smbdirect_rdma_prep_*() calls),
 * submitted with sendmsg() control messages, and completes exactly once
 * with its cookie: a struct smbdirect_rdma_completion on the socket's
 * error queue (poll reports POLLERR while one waits; POLLPRI instead after
 * smbdirect_set_option(fd, SMBDIRECT_OPT_RDMA_EVENTS,
 * SMBDIRECT_RDMA_EVENTS_PRI), which leaves POLLERR to the connection's
 * error, and SMBDIRECT_RDMA_EVENTS_WRBAND adds POLLWRBAND while a slot is
 * free), reaped with smbdirect_rdma_reap(). The memory (or file range) of a transfer must stay
 * as it is until its completion has been reaped. io_uring users build the
 * sendmsg with smbdirect_rdma_prep_msghdr() and parse what a recvmsg with
 * MSG_ERRQUEUE returned with smbdirect_rdma_completions().
 */

/*
 * Fill *a for an RDMA WRITE of the local segments iov into the peer's
 * descriptors desc (an SMB2 READ on a server), an RDMA READ of them into
 * iov (an SMB2 WRITE), or an RDMA WRITE of length bytes at offset of the
 * regular file open for reading at fd (SMBDIRECT_RDMA_F_FILE: from its page
 * cache, no copy through user space). Only pointers are stored: iov, desc
 * (and the file) must stay valid until submission, the memory they name
 * until the completion. Nothing is checked here; submission checks.
 */
void smbdirect_rdma_prep_write(struct smbdirect_rdma_args *a, uint64_t cookie,
			       const struct iovec *iov, unsigned int iov_count,
			       const struct smbdirect_buffer_descriptor_v1 *desc,
			       uint32_t desc_count);
void smbdirect_rdma_prep_read(struct smbdirect_rdma_args *a, uint64_t cookie,
			      const struct iovec *iov, unsigned int iov_count,
			      const struct smbdirect_buffer_descriptor_v1 *desc,
			      uint32_t desc_count);
void smbdirect_rdma_prep_write_file(struct smbdirect_rdma_args *a, uint64_t cookie,
				    int fd, uint64_t offset, uint64_t length,
				    const struct smbdirect_buffer_descriptor_v1 *desc,
				    uint32_t desc_count);

/*
 * Submit nr (1 .. SMBDIRECT_RDMA_CMSG_MAX) transfers in one sendmsg(), all
 * or none. flags: sendmsg flags, MSG_DONTWAIT (-EAGAIN instead of waiting
 * for a slot of SMBDIRECT_OPT_RDMA_INFLIGHT) and MSG_NOSIGNAL (no SIGPIPE
 * with -EPIPE). Returns 0.
 */
int smbdirect_rdma_submit(int fd, const struct smbdirect_rdma_args *args,
			  unsigned int nr, int flags);

/*
 * nr transfers (0 .. SMBDIRECT_RDMA_CMSG_MAX) and then one message, the
 * msg_iovcnt segments at msg, in one sendmsg(): every RDMA WRITE reaches
 * the peer's memory before the message (an SMB2 READ response right behind
 * its data). invalidate_token, if not NULL, sends the message with
 * SEND_WITH_INVALIDATE of that token of the peer (host order,
 * le32toh(desc.token)). Returns the message bytes taken, as send() does.
 */
ssize_t smbdirect_rdma_submit_msg(int fd, const struct smbdirect_rdma_args *args,
				  unsigned int nr, const struct iovec *msg,
				  int msg_iovcnt, const uint32_t *invalidate_token,
				  int flags);

/*
 * Reap up to max waiting completions (at most 256 per call) into c;
 * never blocks. Returns how many (0 when none waits).
 */
int smbdirect_rdma_reap(int fd, struct smbdirect_rdma_completion *c,
			unsigned int max);

/*
 * For event loops that watch a descriptor only for reading (Samba's
 * tevent, libevent): sets SMBDIRECT_RDMA_EVENTS_PRI on fd (keeping its
 * other SMBDIRECT_OPT_RDMA_EVENTS flags) and returns a new descriptor
 * (an epoll instance, close-on-exec) that is readable while completions
 * wait on fd: watch it for reading and call smbdirect_rdma_reap(fd, ...)
 * when it is; nothing is read from it. It is also readable once fd's
 * connection is over (epoll passes EPOLLERR and EPOLLHUP on whatever is
 * asked): a handler that finds nothing to reap stops watching it, and
 * fd's own events report the end. The caller closes it. Returns the
 * descriptor or -errno (ENOPROTOOPT: a module without the option).
 */
int smbdirect_rdma_completion_fd(int fd);

/*
 * For io_uring (IORING_OP_SENDMSG): bytes of msg_control that nr
 * transfers take, nr * CMSG_SPACE(sizeof(struct smbdirect_rdma_args)) (0
 * for nr above SMBDIRECT_RDMA_CMSG_MAX), and the control messages of nr
 * transfers written to control (aligned for struct cmsghdr), with
 * msg->msg_control and msg_controllen pointed at them; msg_iov is left
 * alone. The transfers are checked as smbdirect_rdma_submit() checks
 * them. Returns 0.
 */
size_t smbdirect_rdma_control_space(unsigned int nr);
int smbdirect_rdma_prep_msghdr(struct msghdr *msg, void *control,
			       size_t control_len,
			       const struct smbdirect_rdma_args *args,
			       unsigned int nr);

/*
 * For io_uring (IORING_OP_RECVMSG with MSG_ERRQUEUE): the msg_controllen
 * that lets the kernel return up to max completions (a 32-bit process
 * needs a little more than CMSG_SPACE()), and the completions in the
 * control messages of a msghdr such a recvmsg filled in, copied to c.
 * Returns how many; -ENOSPC (nothing copied) if more than max are there.
 */
size_t smbdirect_rdma_completion_space(unsigned int max);
int smbdirect_rdma_completions(const struct msghdr *msg,
			       struct smbdirect_rdma_completion *c,
			       unsigned int max);

/*
 * smbdirect_rdma_v1_deregister() without waiting for the invalidation
 * (SMBDIRECT_DEREG_ASYNC): the id is gone at once; one completion with
 * cookie (bytes the registered length; status 0, or the connection's
 * error when it ended first) reaches the error queue when the peer's
 * access has ended, and only then may the memory be reused. Returns the
 * SMBDIRECT_REG_STATE_* bits. *reg as with smbdirect_rdma_v1_deregister():
 * freed and zeroed once the kernel took the registration (or on -ENOENT),
 * left for a retry on any other error (-ENOMEM: no room for the
 * completion).
 */
int smbdirect_rdma_v1_deregister_async(int fd,
				       struct smbdirect_rdma_v1_registration *reg,
				       uint64_t cookie);

/* --- RDMA-capable interfaces (SMB3 multichannel) ---------------------------- */

#define SMBDIRECT_IF_RDMA_CAPABLE 0x1 /* announce with RDMA_CAPABLE */
#define SMBDIRECT_IF_UP 0x2	      /* IFF_UP and carrier */

/* smbdirect_interfaces() flags */
#define SMBDIRECT_IF_LIST_ALL 0x1 /* also interfaces without an RDMA device */

/*
 * One interface. Extensible as the kernel's ioctl structs are: it starts
 * with its size, and fields are only ever added at the end. The caller
 * says how large its struct is (smbdirect_interfaces() passes the sizeof
 * it was compiled with); the library lays the array out with that stride,
 * fills what it knows of each entry (a larger caller's tail stays zero)
 * and sets size to the bytes it filled, so a field added later is there
 * when size >= offsetof(field) + sizeof(field). (0.1's struct had no
 * size; programs built with it keep getting that layout from the symbol
 * smbdirect_interfaces@SMBDIRECT_0.1.)
 */
struct smbdirect_interface {
	uint32_t size;			/* bytes of this entry filled in */
	int ifindex;
	char name[16];			/* IFNAMSIZ */
	char rdma_device[64];		/* "" when none */
	uint32_t rdma_port;
	uint32_t transport;		/* SMBDIRECT_TRANSPORT_*, 0 none */
	uint32_t flags;			/* SMBDIRECT_IF_* */
	uint64_t speed_bps;		/* link speed, 0 unknown */
	char reason[96];		/* why it is (not) RDMA-capable */
	uint32_t addr_count;
	struct sockaddr_storage *addrs;	/* IPv4 and IPv6 addresses */
};

/*
 * The interfaces that carry an RDMA device (all of them with
 * SMBDIRECT_IF_LIST_ALL), with addresses, speed and transport: what a
 * server needs for FSCTL_QUERY_NETWORK_INTERFACE_INFO, entry_size bytes
 * apart (at least the size of 0.2's struct, a multiple of its alignment,
 * at most 4096; -EINVAL otherwise). *list is freed with
 * smbdirect_interfaces_free(). Returns the number of entries.
 */
int smbdirect_interfaces_sized(struct smbdirect_interface **list, uint32_t flags,
			       size_t entry_size);
static inline int smbdirect_interfaces(struct smbdirect_interface **list, uint32_t flags)
{
	return smbdirect_interfaces_sized(list, flags, sizeof(struct smbdirect_interface));
}
void smbdirect_interfaces_free(struct smbdirect_interface *list, int count);

#ifdef __cplusplus
}
#endif

#endif /* SMBDIRECT_SMBDIRECT_H */
