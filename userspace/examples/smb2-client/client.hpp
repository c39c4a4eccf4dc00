// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The example SMB2 client: one connection, one session, one tree, one
 * request at a time. It speaks over any connected stream socket that
 * frames SMB2 as TCP/445 does; on an AF_SMBDIRECT SOCK_STREAM socket it
 * can also move READ and WRITE data with the RDMA channel:
 *
 *   WRITE: register the source buffer for the peer to read
 *          (SMBDIRECT_ACCESS_PEER_READ), send WRITE with Length 0,
 *          RemainingBytes = the bytes, Channel RDMA_V1[_INVALIDATE] and
 *          the descriptors as WriteChannelInfo; the server RDMA-reads them
 *          and answers; deregister.
 *   READ:  register the destination for the peer to write
 *          (SMBDIRECT_ACCESS_PEER_WRITE), send READ with the descriptors
 *          as ReadChannelInfo; the server RDMA-writes the data and answers
 *          with DataLength 0 and DataRemaining = the bytes; deregister.
 *
 * With _INVALIDATE the registration also carries
 * SMBDIRECT_REG_REMOTE_INVALIDATE and the server's answer arrives with
 * SEND_WITH_INVALIDATE of the first descriptor's token: DEREGISTER then
 * reports SMBDIRECT_REG_STATE_REMOTE_INVALIDATED and skips that local
 * invalidation. Without it the server must not invalidate (our module
 * would end the connection with EPROTO), and DEREGISTER invalidates.
 */
#ifndef SMBDIRECT_EXAMPLES_SMB2_CLIENT_CLIENT_HPP
#define SMBDIRECT_EXAMPLES_SMB2_CLIENT_CLIENT_HPP

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <smbdirect/smbdirect.hpp>

#include "../smb2/ntlmssp.hpp"
#include "../smb2/preauth.hpp"
#include "../smb2/signing.hpp"
#include "../smb2/smb2.hpp"

namespace smb2 {

/* How bind_session() signs its SESSION_SETUP requests: right, or (tests) not or wrongly. */
enum class BindingSignature { valid, none, wrong };

struct ClientConfig {
	uint16_t dialect = dialect_311; /* 3.0.2 or 3.1.1 */
	ntlm::Credentials credentials;
	/* Require signing (SecurityMode SIGNING_REQUIRED) and sign every request of the session. */
	bool sign = false;
	/* Offer SMB2_GLOBAL_CAP_MULTI_CHANNEL. */
	bool multi_channel = false;
	/* The ClientGuid of NEGOTIATE; random when unset. Channels of one session share it. */
	std::optional<std::array<uint8_t, 16>> client_guid;
	BindingSignature binding_signature = BindingSignature::valid;
	/* Credits the client tries to hold (enough for the largest READ). */
	uint16_t credit_target = 512;
	/* Each exchange on stderr. */
	bool verbose = false;
};

struct OpenFile {
	FileId id;
	uint64_t end_of_file = 0;
	uint32_t create_action = 0;
};

/* What one READ or WRITE over the RDMA channel did. */
struct RdmaResult {
	uint32_t bytes = 0;		/* Count (WRITE) / DataRemaining (READ) */
	uint32_t descriptors = 0;	/* sent in the channel info */
	uint32_t deregister_state = 0;	/* SMBDIRECT_REG_STATE_* */
};

class Client {
public:
	/* Takes ownership of a connected stream socket. */
	Client(int fd, ClientConfig config);
	~Client();
	Client(const Client &) = delete;
	Client &operator=(const Client &) = delete;

	std::error_code negotiate();
	std::error_code session_setup();
	/*
	 * Binds this connection to primary's session as a new channel
	 * ([MS-SMB2] 3.2.4.2.3.1): SESSION_SETUP with SMB2_SESSION_FLAG_BINDING
	 * and primary's SessionId, signed with Session.SigningKey. This
	 * connection must have negotiated primary's dialect (and ClientGuid);
	 * afterwards it signs every request with its Channel.SigningKey and
	 * uses primary's tree. primary must outlive nothing here but must stay
	 * connected for the session to stay the one it established.
	 */
	std::error_code bind_session(const Client &primary);
	/* unc: \\server\share (forward slashes are turned around). */
	std::error_code tree_connect(std::string_view unc);
	/* options: create options, a file by default (option_directory_file, 0 for either). */
	Result<OpenFile> create(std::string_view name, uint32_t desired_access,
				uint32_t disposition, uint32_t options = option_non_directory_file);
	std::error_code close(const FileId &file);
	std::error_code tree_disconnect();
	std::error_code logoff();

	/* Inline data: at most max_inline_write() / max_inline_read() bytes. */
	Result<uint32_t> write(const FileId &file, uint64_t offset, ByteView data);
	Result<size_t> read(const FileId &file, uint64_t offset, std::span<uint8_t> out);

	/*
	 * The RDMA channel (Channel::rdma_v1 or rdma_v1_invalidate): at most
	 * max_rdma_write() / max_rdma_read() bytes over the iovec.
	 */
	Result<RdmaResult> write_rdma(const FileId &file, uint64_t offset,
				      std::span<const iovec> iov, Channel channel);
	Result<RdmaResult> read_rdma(const FileId &file, uint64_t offset,
				     std::span<const iovec> iov, Channel channel);

	int fd() const
	{
		return fd_;
	}
	const NegotiateResponse &negotiated() const
	{
		return negotiated_;
	}
	uint16_t session_flags() const
	{
		return session_flags_;
	}
	const PreauthHash &preauth() const
	{
		return preauth_;
	}
	uint64_t session_id() const
	{
		return session_id_;
	}
	const std::array<uint8_t, 16> &client_guid() const
	{
		return client_guid_;
	}
	/* Whether requests are signed (after SESSION_SETUP), and whether this is a bound channel. */
	bool signs() const
	{
		return sign_requests_;
	}
	bool bound_channel() const
	{
		return bound_channel_;
	}
	/* GET_PARAMS of the SMB-Direct connection; nothing over TCP. */
	const std::optional<smbdirect_params> &transport() const
	{
		return transport_;
	}
	uint32_t max_inline_read() const;
	uint32_t max_inline_write() const;
	uint32_t max_rdma_read() const;
	uint32_t max_rdma_write() const;
	uint32_t credits() const
	{
		return credits_;
	}

	struct Exchange {
		Header header;
		Bytes request;
		Bytes response;
	};
	using BodyEncoder = std::function<std::error_code(Writer &)>;

	/*
	 * Sends one request of this session and tree (the header is filled
	 * in; body appends the rest) and returns its final response (interim
	 * STATUS_PENDING responses are skipped). Statuses other than success
	 * and the ones in also_ok come back as errors. The commands above are
	 * built on it; it is public for requests they do not cover.
	 */
	Result<Exchange> exchange(Command command, uint16_t credit_charge, const BodyEncoder &body,
				  std::initializer_list<Status> also_ok = {});

	/*
	 * Many requests outstanding (the --depth pipeline): send_request()
	 * sends one (the copy of its bytes into *request if asked) and returns
	 * its MessageId; receive_response() returns the next final response,
	 * whichever request it answers; status_of() is exchange()'s verdict on
	 * a status. exchange() refuses to run while requests are outstanding.
	 */
	struct Response {
		Header header;
		Bytes message;
	};
	Result<uint64_t> send_request(Command command, uint16_t credit_charge,
				      const BodyEncoder &body, Bytes *request = nullptr);
	Result<Response> receive_response();
	static std::error_code status_of(const Response &r,
					 std::initializer_list<Status> also_ok = {});
	uint32_t outstanding() const
	{
		return outstanding_;
	}

	/*
	 * Tests: the parts as one compound message (unrelated requests, each
	 * 8-byte aligned and signed if the session signs; the responses'
	 * signatures are not checked) and their final
	 * responses, whatever their status, in the order of the parts, whether
	 * the server answered in one message or several (*messages: how
	 * many). A part may name a tree id other than ours.
	 */
	struct CompoundPart {
		Command command = Command::negotiate;
		uint16_t credit_charge = 1;
		BodyEncoder body;
		std::optional<uint32_t> tree_id;
	};
	Result<std::vector<Response>> exchange_compound(std::span<const CompoundPart> parts,
							unsigned *messages = nullptr);
	uint32_t tree_id() const
	{
		return tree_id_;
	}
	/* Tests: an SMB2 CANCEL of message_id (no response comes). */
	std::error_code send_cancel(uint64_t message_id);

private:
	std::error_code authenticate(uint8_t flags);
	/* A response's signature, where this connection has a key. */
	std::error_code check_signature(const Header &h, ByteView message) const;
	Result<RdmaResult> rdma_io(Command command, const FileId &file, uint64_t offset,
				   std::span<const iovec> iov, Channel channel);

	int fd_;
	ClientConfig config_;
	uint64_t next_message_id_ = 0;
	uint32_t credits_ = 1; /* a connection starts with one */
	uint32_t outstanding_ = 0;
	uint64_t session_id_ = 0;
	uint32_t tree_id_ = 0;
	uint16_t session_flags_ = 0;
	std::array<uint8_t, 16> client_guid_{};
	/* Session.SigningKey (the first channel's) and this connection's key. */
	std::optional<SigningKey> session_signing_key_;
	std::optional<SigningKey> signing_key_;
	bool sign_requests_ = false;
	/* Off while a response is signed with a key not known yet (the binding's last). */
	bool verify_responses_ = true;
	bool bound_channel_ = false;
	NegotiateResponse negotiated_;
	PreauthHash preauth_;
	std::optional<smbdirect_params> transport_;
};

/* Sum of the iovec lengths. */
uint64_t iov_bytes(std::span<const iovec> iov);

/* A registration's descriptors in host order: READ/WRITE channel info. */
std::vector<BufferDescriptor> channel_info(const sd::Registration &reg);

} // namespace smb2

#endif
