// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One client connection of the example server (a forked process per
 * client, as Samba does): SMB2 requests in order, one share, guest
 * sessions, and READ/WRITE over the RDMA channel:
 *
 *   READ  with Channel RDMA_V1[_INVALIDATE]: pread the file, then
 *         smbdirect_rdma_v1_writev() the bytes into the client's
 *         ReadChannelInfo descriptors; answer DataLength 0,
 *         DataRemaining = the bytes.
 *   WRITE with Channel RDMA_V1[_INVALIDATE]: smbdirect_rdma_v1_readv()
 *         RemainingBytes from the client's WriteChannelInfo descriptors,
 *         then pwrite them.
 *   With _INVALIDATE the response goes out with
 *   smbdirect_send_with_invalidate() of the first descriptor's token, so
 *   the client finds its registration invalidated when the answer arrives.
 *
 * The client owns the registrations: it deregisters after the response.
 */
#ifndef SMBDIRECT_EXAMPLES_SMB2_SERVER_CONNECTION_HPP
#define SMBDIRECT_EXAMPLES_SMB2_SERVER_CONNECTION_HPP

#include <array>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <vector>

#include <smbdirect/smbdirect.h>

#include "../smb2/smb2.hpp"
#include "share.hpp"

namespace smb2 {

struct ServerConfig {
	std::string share_name = "share";
	uint32_t max_io = 8u << 20; /* MaxRead/Write/TransactSize offered */
	uint16_t credit_limit = 512;
	bool verbose = false;
};

/* What moved how, for the log line at the end of a connection. */
struct IoCounters {
	uint64_t rdma_writev_calls = 0, rdma_writev_bytes = 0; /* READ over RDMA */
	uint64_t rdma_readv_calls = 0, rdma_readv_bytes = 0;   /* WRITE over RDMA */
	uint64_t send_with_invalidate = 0;
	uint64_t inline_reads = 0, inline_read_bytes = 0;
	uint64_t inline_writes = 0, inline_write_bytes = 0;
	uint64_t requests = 0, compounds = 0;
	uint32_t max_descriptors = 0;
};

class Connection {
public:
	Connection(int fd, const Share &share, const ServerConfig &config, std::FILE *log);
	~Connection();
	Connection(const Connection &) = delete;
	Connection &operator=(const Connection &) = delete;

	/* Serves until the client closes; the error that ended it, if any. */
	std::error_code serve();
	const IoCounters &counters() const
	{
		return io_;
	}

private:
	struct Open {
		int fd = -1;
		std::string path; /* relative to the share, "." for the root */
		bool directory = false;
		bool delete_on_close = false;
		uint32_t access = 0;
		/* QUERY_DIRECTORY state */
		bool listed = false;
		std::vector<std::string> names;
		size_t next = 0;
	};
	/*
	 * One request's answer. message starts with room for the 64-byte
	 * header (the codec's encoders count offsets from the header), which
	 * handle() fills in; without a body an error response is sent.
	 */
	struct Reply {
		Reply();
		explicit Reply(Status s);
		uint32_t status = 0;
		Writer message;
		bool has_body = false;
		uint32_t tree_id = 0;
		std::optional<uint32_t> invalidate_token;
		bool no_response = false; /* CANCEL */
		FileId created;		  /* CREATE: for related operations */
	};

	std::error_code handle(ByteView message);
	Reply dispatch(const Header &h, ByteView request);

	Reply negotiate(ByteView request);
	Reply session_setup(const Header &h, ByteView request);
	Reply tree_connect(ByteView request);
	Reply create(ByteView request);
	Reply close(ByteView request);
	Reply flush(ByteView request);
	Reply read(ByteView request);
	Reply read(const ReadRequest *q);
	Reply write(ByteView request);
	Reply write(const WriteRequest *q);
	Reply query_info(ByteView request);
	Reply set_info(ByteView request);
	Reply query_directory(ByteView request);
	Reply ioctl(ByteView request);

	Open *find(const FileId &id);
	void close_open(uint64_t id);
	uint16_t grant(const Header &h);
	std::error_code send(ByteView message, std::optional<uint32_t> invalidate_token);
	void log(const char *fmt, ...) __attribute__((format(printf, 2, 3)));

	int fd_;
	const Share &share_;
	ServerConfig config_;
	std::FILE *log_;
	std::optional<smbdirect_params> transport_;
	uint16_t dialect_ = 0;
	std::array<uint8_t, 16> server_guid_{};
	std::array<uint8_t, 16> client_guid_{};
	uint16_t client_security_mode_ = 0;
	uint32_t client_capabilities_ = 0;
	uint64_t session_id_ = 0;
	bool authenticated_ = false;
	bool tree_connected_ = false;
	uint32_t credits_held_ = 1;
	uint64_t next_file_id_ = 1;
	std::map<uint64_t, Open> opens_;
	/* Related operations in a compound use the FileId CREATE returned. */
	FileId compound_file_id_;
	IoCounters io_;
	Bytes io_buffer_;
};

} // namespace smb2

#endif
