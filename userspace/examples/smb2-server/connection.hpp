// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One client connection of the example server (a forked process per
 * client, as Samba does): SMB2 requests as they come, one share, guest
 * sessions, and READ/WRITE over the RDMA channel on the asynchronous RDMA
 * interface, many of them in flight (the client holds as many credits as
 * it asks for, up to ServerConfig::credit_limit):
 *
 *   READ  with Channel RDMA_V1[_INVALIDATE]: one sendmsg carries an RDMA
 *         WRITE straight from the file's page cache into the client's
 *         ReadChannelInfo descriptors (smbdirect_rdma_prep_write_file) and
 *         the response behind it (DataLength 0, DataRemaining = the bytes),
 *         with SEND_WITH_INVALIDATE for _INVALIDATE: RC ordering places the
 *         data before the response, so nothing waits for the transfer.
 *         Its completion is only counted.
 *   WRITE with Channel RDMA_V1[_INVALIDATE]: an RDMA READ of
 *         RemainingBytes from the client's WriteChannelInfo descriptors
 *         into a pooled buffer is submitted and the server goes on serving;
 *         at its completion (the error queue, POLLPRI) the data is pwritten
 *         and the response sent, with SEND_WITH_INVALIDATE for _INVALIDATE.
 *   Inside a compound (no client sends one with RDMA, but it is legal)
 *   the same transfers are made, and a WRITE's is waited for.
 *
 * The client owns the registrations: it deregisters after the response.
 *
 * The socket is set up with SMBDIRECT_OPT_RDMA_EVENTS: completions raise
 * POLLPRI, so POLLERR is only ever the connection's error, and POLLWRBAND
 * tells of a free transfer slot. Every wait is one poll() for what is
 * missing (a slot, room for the message, a completion): nothing spins or
 * sleeps on a timer.
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
	/* READ over RDMA: RDMA WRITE transfers from the file, bytes moved. */
	uint64_t rdma_write_transfers = 0, rdma_write_bytes = 0;
	/* Of those, the ones whose range was not cached: read, then sent from memory. */
	uint64_t rdma_write_read_first = 0;
	/* WRITE over RDMA: RDMA READ transfers into a buffer, bytes moved. */
	uint64_t rdma_read_transfers = 0, rdma_read_bytes = 0;
	/* READ responses that went in the same sendmsg as their RDMA WRITE. */
	uint64_t responses_with_transfer = 0;
	uint64_t send_with_invalidate = 0;
	uint64_t inline_reads = 0, inline_read_bytes = 0;
	uint64_t inline_writes = 0, inline_write_bytes = 0;
	uint64_t requests = 0, compounds = 0;
	uint32_t max_descriptors = 0;
	/* The most transfers in flight at once, and WRITEs awaiting their data. */
	uint32_t max_transfers_in_flight = 0;
	uint32_t max_writes_in_flight = 0;
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
	struct FileTransfer {
		int fd = -1;
		uint64_t offset = 0;
		uint64_t length = 0;
		std::vector<smbdirect_buffer_descriptor_v1> descriptors;
	};
	/* A WRITE whose data is being RDMA-read; answered at the completion. */
	struct PendingWrite {
		Header request;
		uint64_t open = 0; /* opens_ key */
		uint64_t offset = 0;
		Bytes data;
		std::optional<uint32_t> invalidate_token;
	};
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
		/* READ over RDMA: the file's bytes to write before the response. */
		std::optional<FileTransfer> transfer;
		/* WRITE over RDMA outside a compound: answered at the completion. */
		bool deferred = false;
	};

	std::error_code handle(ByteView message);
	Reply dispatch(const Header &h, ByteView request, bool in_compound);
	/* The response's header filled in (credits granted), ready to chain or send. */
	Bytes finish(const Header &h, Reply &r, bool related);

	/* The asynchronous RDMA side. */
	uint64_t next_cookie(bool is_write_data);
	/* Completions waiting, handled; *count (if given) grows by their number. */
	std::error_code reap(unsigned *count = nullptr);
	std::error_code on_completion(const smbdirect_rdma_completion &c);
	std::error_code answer_write(PendingWrite &w, int status, uint64_t bytes);
	/*
	 * Waits in poll() until a transfer slot (POLLWRBAND) and, with
	 * message, room for it (POLLOUT) are there, reaping the completions
	 * that come meanwhile (POLLPRI); returns at once on the connection's
	 * end, which the next call reports.
	 */
	std::error_code wait_room(bool message);
	/* Submits (retrying while the socket's in-flight limit is full). */
	std::error_code submit(const smbdirect_rdma_args *args, unsigned count);
	std::error_code submit_with_message(const smbdirect_rdma_args &args, ByteView message,
					    std::optional<uint32_t> invalidate_token);
	/*
	 * A READ's RDMA WRITE from the file's page cache, or, when the kernel
	 * says the range is not cached (ENODATA) or the file has no page
	 * cache of its own (EOPNOTSUPP), from memory the file was read into.
	 */
	std::error_code submit_file(const FileTransfer &t, const ByteView *message,
				    std::optional<uint32_t> invalidate_token);
	/* A transfer submitted inside a compound, waited for. */
	Result<smbdirect_rdma_completion> wait_for(uint64_t cookie);
	void transfer_started();

	Reply negotiate(ByteView request);
	Reply session_setup(const Header &h, ByteView request);
	Reply tree_connect(ByteView request);
	Reply create(ByteView request);
	Reply close(ByteView request);
	Reply flush(ByteView request);
	Reply read(ByteView request);
	Reply read(const ReadRequest *q);
	Reply write(const Header &h, ByteView request, bool in_compound);
	Reply write(const Header &h, const WriteRequest *q, bool in_compound,
		    std::optional<uint32_t> invalidate_token);
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
	/* Transfers submitted, not yet reaped; WRITEs by cookie. */
	uint32_t transfers_in_flight_ = 0;
	uint64_t cookie_serial_ = 0;
	std::map<uint64_t, PendingWrite> pending_writes_;
	/* Completions reaped while waiting for another (wait_for). */
	std::vector<smbdirect_rdma_completion> stashed_;
	/* Memory of READs' RDMA WRITEs from memory, by cookie, until reaped. */
	std::map<uint64_t, Bytes> read_buffers_;
	/* Buffers of finished WRITEs, for the next ones. */
	std::vector<Bytes> spare_buffers_;
};

} // namespace smb2

#endif
