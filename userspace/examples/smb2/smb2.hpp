// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A small SMB2 wire codec ([MS-SMB2] 2.2): the 64-byte header and the
 * messages the example client and server exchange, each with an encoder
 * and a bounds-checked decoder for both directions.
 *
 * Conventions:
 *  - A message is the SMB2 header plus its body, as it travels inside the
 *    4-byte length prefix of SMB over TCP/445 (and over our SOCK_STREAM
 *    SMB-Direct socket). Offsets inside bodies count from the header's
 *    first byte, so every decoder takes the whole message.
 *  - encode_*() appends a body to a Writer that holds exactly the 64-byte
 *    header (offsets are computed from the Writer's size).
 *  - decode_*() checks StructureSize, that every offset/length pair lies
 *    inside the message, and the values the protocol constrains; views it
 *    returns point into the message, which must outlive them.
 */
#ifndef SMBDIRECT_EXAMPLES_SMB2_SMB2_HPP
#define SMBDIRECT_EXAMPLES_SMB2_SMB2_HPP

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "status.hpp"
#include "wire.hpp"

namespace smb2 {

constexpr size_t header_size = 64;
/* SMB2 messages never exceed this here (the largest inline I/O plus room). */
constexpr size_t max_message_size = 16u << 20;

enum class Command : uint16_t {
	negotiate = 0x0000,
	session_setup = 0x0001,
	logoff = 0x0002,
	tree_connect = 0x0003,
	tree_disconnect = 0x0004,
	create = 0x0005,
	close = 0x0006,
	flush = 0x0007,
	read = 0x0008,
	write = 0x0009,
	lock = 0x000A,
	ioctl = 0x000B,
	cancel = 0x000C,
	echo = 0x000D,
	query_directory = 0x000E,
	change_notify = 0x000F,
	query_info = 0x0010,
	set_info = 0x0011,
	oplock_break = 0x0012,
};
const char *command_name(Command c);

/* Header Flags. */
constexpr uint32_t flag_server_to_redir = 0x00000001;
constexpr uint32_t flag_async_command = 0x00000002;
constexpr uint32_t flag_related_operations = 0x00000004;
constexpr uint32_t flag_signed = 0x00000008;

/* Dialects. */
constexpr uint16_t dialect_202 = 0x0202;
constexpr uint16_t dialect_210 = 0x0210;
constexpr uint16_t dialect_300 = 0x0300;
constexpr uint16_t dialect_302 = 0x0302;
constexpr uint16_t dialect_311 = 0x0311;
constexpr uint16_t dialect_wildcard = 0x02FF;
/* "3.1.1" for 0x0311. */
std::string dialect_name(uint16_t dialect);

/* SecurityMode. */
constexpr uint16_t signing_enabled = 0x0001;
constexpr uint16_t signing_required = 0x0002;

/* Global capabilities. */
constexpr uint32_t cap_dfs = 0x00000001;
constexpr uint32_t cap_leasing = 0x00000002;
constexpr uint32_t cap_large_mtu = 0x00000004;
constexpr uint32_t cap_multi_channel = 0x00000008;
constexpr uint32_t cap_persistent_handles = 0x00000010;
constexpr uint32_t cap_directory_leasing = 0x00000020;
constexpr uint32_t cap_encryption = 0x00000040;

/* Negotiate context types and the preauth hash algorithm. */
constexpr uint16_t context_preauth_integrity = 0x0001;
constexpr uint16_t context_encryption = 0x0002;
constexpr uint16_t context_compression = 0x0003;
constexpr uint16_t context_netname = 0x0005;
constexpr uint16_t context_transport = 0x0006;
constexpr uint16_t context_rdma_transform = 0x0007;
constexpr uint16_t context_signing = 0x0008;
constexpr uint16_t hash_sha512 = 0x0001;

/* Flags of SESSION_SETUP requests. */
constexpr uint8_t session_setup_flag_binding = 0x01;

/* SessionFlags of SESSION_SETUP responses. */
constexpr uint16_t session_flag_is_guest = 0x0001;
constexpr uint16_t session_flag_is_null = 0x0002;
constexpr uint16_t session_flag_encrypt_data = 0x0004;

/* Share types. */
constexpr uint8_t share_type_disk = 0x01;
constexpr uint8_t share_type_pipe = 0x02;

/* Access mask bits. */
constexpr uint32_t file_read_data = 0x00000001;
constexpr uint32_t file_write_data = 0x00000002;
constexpr uint32_t file_append_data = 0x00000004;
constexpr uint32_t file_read_ea = 0x00000008;
constexpr uint32_t file_write_ea = 0x00000010;
constexpr uint32_t file_execute = 0x00000020;
constexpr uint32_t file_read_attributes = 0x00000080;
constexpr uint32_t file_write_attributes = 0x00000100;
constexpr uint32_t access_delete = 0x00010000;
constexpr uint32_t read_control = 0x00020000;
constexpr uint32_t synchronize = 0x00100000;
constexpr uint32_t maximum_allowed = 0x02000000;
constexpr uint32_t generic_all = 0x10000000;
constexpr uint32_t generic_execute = 0x20000000;
constexpr uint32_t generic_write = 0x40000000;
constexpr uint32_t generic_read = 0x80000000;

/* Share access. */
constexpr uint32_t share_read = 0x1;
constexpr uint32_t share_write = 0x2;
constexpr uint32_t share_delete = 0x4;

/* Create dispositions. */
constexpr uint32_t disposition_supersede = 0;
constexpr uint32_t disposition_open = 1;
constexpr uint32_t disposition_create = 2;
constexpr uint32_t disposition_open_if = 3;
constexpr uint32_t disposition_overwrite = 4;
constexpr uint32_t disposition_overwrite_if = 5;

/* Create actions (responses). */
constexpr uint32_t action_superseded = 0;
constexpr uint32_t action_opened = 1;
constexpr uint32_t action_created = 2;
constexpr uint32_t action_overwritten = 3;

/* Create options. */
constexpr uint32_t option_directory_file = 0x00000001;
constexpr uint32_t option_write_through = 0x00000002;
constexpr uint32_t option_non_directory_file = 0x00000040;
constexpr uint32_t option_delete_on_close = 0x00001000;

/* File attributes. */
constexpr uint32_t attribute_readonly = 0x00000001;
constexpr uint32_t attribute_hidden = 0x00000002;
constexpr uint32_t attribute_system = 0x00000004;
constexpr uint32_t attribute_directory = 0x00000010;
constexpr uint32_t attribute_archive = 0x00000020;
constexpr uint32_t attribute_normal = 0x00000080;

constexpr uint32_t impersonation_impersonation = 2;

/* READ/WRITE Channel ([MS-SMB2] 2.2.19, 2.2.21). */
enum class Channel : uint32_t {
	none = 0,
	rdma_v1 = 1,
	rdma_v1_invalidate = 2,
	rdma_transform = 3,
};
const char *channel_name(Channel c);

/* CLOSE flags. */
constexpr uint16_t close_flag_postquery_attrib = 0x0001;

struct Header {
	uint16_t credit_charge = 0;
	/* Status in responses; ChannelSequence/Reserved in requests. */
	uint32_t status = 0;
	Command command = Command::negotiate;
	/* CreditRequest in requests, CreditResponse in responses. */
	uint16_t credits = 0;
	uint32_t flags = 0;
	uint32_t next_command = 0;
	uint64_t message_id = 0;
	/* flag_async_command: async_id; else tree_id (and process id 0). */
	uint64_t async_id = 0;
	uint32_t tree_id = 0;
	uint64_t session_id = 0;
	std::array<uint8_t, 16> signature{};

	bool is_response() const
	{
		return flags & flag_server_to_redir;
	}
	bool is_async() const
	{
		return flags & flag_async_command;
	}
};

void encode_header(Writer &w, const Header &h);
/* Checks ProtocolId and StructureSize (64). */
Result<Header> decode_header(ByteView message);

struct FileId {
	uint64_t persistent = 0;
	uint64_t volatile_ = 0;

	bool operator==(const FileId &) const = default;
};

/* Buffer Descriptor V1 ([MS-SMBD] 2.2.3.1), in host order. */
struct BufferDescriptor {
	uint64_t offset = 0;
	uint32_t token = 0;
	uint32_t length = 0;

	bool operator==(const BufferDescriptor &) const = default;
};
constexpr size_t buffer_descriptor_size = 16;

void encode_descriptors(Writer &w, const std::vector<BufferDescriptor> &descriptors);
/* A ReadChannelInfo/WriteChannelInfo blob: a whole number of descriptors. */
Result<std::vector<BufferDescriptor>> decode_descriptors(ByteView blob);

/* --- NEGOTIATE (2.2.3, 2.2.4) --------------------------------------------- */

struct NegotiateContext {
	uint16_t type = 0;
	Bytes data;
};

struct PreauthIntegrity {
	std::vector<uint16_t> hash_algorithms;
	Bytes salt;
};
NegotiateContext encode_preauth_context(const PreauthIntegrity &p);
Result<PreauthIntegrity> decode_preauth_context(ByteView data);

struct NegotiateRequest {
	uint16_t security_mode = signing_enabled;
	uint32_t capabilities = 0;
	std::array<uint8_t, 16> client_guid{};
	std::vector<uint16_t> dialects;
	/* Sent only when dialects include 3.1.1. */
	std::vector<NegotiateContext> contexts;
};

struct NegotiateResponse {
	uint16_t security_mode = 0;
	uint16_t dialect = 0;
	std::array<uint8_t, 16> server_guid{};
	uint32_t capabilities = 0;
	uint32_t max_transact_size = 0;
	uint32_t max_read_size = 0;
	uint32_t max_write_size = 0;
	uint64_t system_time = 0;
	uint64_t server_start_time = 0;
	Bytes security_buffer;
	/* 3.1.1 only. */
	std::vector<NegotiateContext> contexts;
};

void encode_negotiate_request(Writer &w, const NegotiateRequest &r);
Result<NegotiateRequest> decode_negotiate_request(ByteView message);
void encode_negotiate_response(Writer &w, const NegotiateResponse &r);
Result<NegotiateResponse> decode_negotiate_response(ByteView message);

/* --- SESSION_SETUP (2.2.5, 2.2.6) ----------------------------------------- */

struct SessionSetupRequest {
	uint8_t flags = 0;
	uint8_t security_mode = signing_enabled;
	uint32_t capabilities = 0;
	uint32_t channel = 0;
	uint64_t previous_session_id = 0;
	Bytes security_buffer;
};

struct SessionSetupResponse {
	uint16_t session_flags = 0;
	Bytes security_buffer;
};

void encode_session_setup_request(Writer &w, const SessionSetupRequest &r);
Result<SessionSetupRequest> decode_session_setup_request(ByteView message);
void encode_session_setup_response(Writer &w, const SessionSetupResponse &r);
Result<SessionSetupResponse> decode_session_setup_response(ByteView message);

/*
 * LOGOFF, TREE_DISCONNECT, ECHO (requests and responses) and FLUSH
 * responses: StructureSize 4 and two reserved bytes.
 */
void encode_empty(Writer &w);
std::error_code decode_empty(ByteView message);

/* --- TREE_CONNECT (2.2.9, 2.2.10) ----------------------------------------- */

struct TreeConnectRequest {
	uint16_t flags = 0;
	std::string path; /* \\server\share, UTF-8 here, UTF-16LE on the wire */
};

struct TreeConnectResponse {
	uint8_t share_type = share_type_disk;
	uint32_t share_flags = 0;
	uint32_t capabilities = 0;
	uint32_t maximal_access = 0;
};

std::error_code encode_tree_connect_request(Writer &w, const TreeConnectRequest &r);
Result<TreeConnectRequest> decode_tree_connect_request(ByteView message);
void encode_tree_connect_response(Writer &w, const TreeConnectResponse &r);
Result<TreeConnectResponse> decode_tree_connect_response(ByteView message);

/* --- CREATE (2.2.13, 2.2.14) ---------------------------------------------- */

struct CreateRequest {
	uint8_t requested_oplock_level = 0;
	uint32_t impersonation_level = impersonation_impersonation;
	uint32_t desired_access = 0;
	uint32_t file_attributes = 0;
	uint32_t share_access = share_read | share_write | share_delete;
	uint32_t create_disposition = disposition_open;
	uint32_t create_options = 0;
	std::string name; /* relative to the share, '\' separated; "" the root */
	Bytes create_contexts;
};

struct FileTimes {
	uint64_t creation = 0;
	uint64_t last_access = 0;
	uint64_t last_write = 0;
	uint64_t change = 0;
};

struct CreateResponse {
	uint8_t oplock_level = 0;
	uint8_t flags = 0;
	uint32_t create_action = 0;
	FileTimes times;
	uint64_t allocation_size = 0;
	uint64_t end_of_file = 0;
	uint32_t file_attributes = 0;
	FileId file_id;
	Bytes create_contexts;
};

std::error_code encode_create_request(Writer &w, const CreateRequest &r);
Result<CreateRequest> decode_create_request(ByteView message);
void encode_create_response(Writer &w, const CreateResponse &r);
Result<CreateResponse> decode_create_response(ByteView message);

/* --- CLOSE (2.2.15, 2.2.16) ------------------------------------------------ */

struct CloseRequest {
	uint16_t flags = 0;
	FileId file_id;
};

struct CloseResponse {
	uint16_t flags = 0;
	FileTimes times;
	uint64_t allocation_size = 0;
	uint64_t end_of_file = 0;
	uint32_t file_attributes = 0;
};

void encode_close_request(Writer &w, const CloseRequest &r);
Result<CloseRequest> decode_close_request(ByteView message);
void encode_close_response(Writer &w, const CloseResponse &r);
Result<CloseResponse> decode_close_response(ByteView message);

/* --- FLUSH (2.2.17) --------------------------------------------------------- */

struct FlushRequest {
	FileId file_id;
};
void encode_flush_request(Writer &w, const FlushRequest &r);
Result<FlushRequest> decode_flush_request(ByteView message);

/* --- READ (2.2.19, 2.2.20) ------------------------------------------------- */

struct ReadRequest {
	uint8_t padding = 0x50; /* where the client would like the data */
	uint8_t flags = 0;
	uint32_t length = 0;
	uint64_t offset = 0;
	FileId file_id;
	uint32_t minimum_count = 0;
	Channel channel = Channel::none;
	uint32_t remaining_bytes = 0;
	/* ReadChannelInfo: the client's registered buffers. */
	std::vector<BufferDescriptor> channel_info;
};

struct ReadResponse {
	uint8_t data_offset = 0;
	uint32_t data_length = 0;
	/* Over the RDMA channel: the bytes the server RDMA-wrote. */
	uint32_t data_remaining = 0;
	uint32_t flags = 0;
	ByteView data; /* inline data, inside the decoded message */
};

void encode_read_request(Writer &w, const ReadRequest &r);
Result<ReadRequest> decode_read_request(ByteView message);
/* Appends data inline (empty over the RDMA channel). */
void encode_read_response(Writer &w, const ReadResponse &r);
Result<ReadResponse> decode_read_response(ByteView message);

/* --- WRITE (2.2.21, 2.2.22) ------------------------------------------------ */

struct WriteRequest {
	uint64_t offset = 0;
	FileId file_id;
	Channel channel = Channel::none;
	/* Over the RDMA channel: the bytes to RDMA-read (Length is 0 then). */
	uint32_t remaining_bytes = 0;
	uint32_t flags = 0;
	/* WriteChannelInfo: the client's registered buffers. */
	std::vector<BufferDescriptor> channel_info;
	ByteView data; /* inline data */
};

struct WriteResponse {
	uint32_t count = 0;
	uint32_t remaining = 0;
};

void encode_write_request(Writer &w, const WriteRequest &r);
Result<WriteRequest> decode_write_request(ByteView message);
void encode_write_response(Writer &w, const WriteResponse &r);
Result<WriteResponse> decode_write_response(ByteView message);

/* --- QUERY_DIRECTORY (2.2.33, 2.2.34) ------------------------------------------ */

constexpr uint8_t query_directory_restart_scans = 0x01;
constexpr uint8_t query_directory_return_single_entry = 0x02;
constexpr uint8_t query_directory_index_specified = 0x04;
constexpr uint8_t query_directory_reopen = 0x10;

struct QueryDirectoryRequest {
	uint8_t info_class = 0;
	uint8_t flags = 0;
	uint32_t file_index = 0;
	FileId file_id;
	std::string pattern; /* "*" when the client sends none */
	uint32_t output_buffer_length = 0;
};

void encode_query_directory_request(Writer &w, const QueryDirectoryRequest &r);
Result<QueryDirectoryRequest> decode_query_directory_request(ByteView message);
/* QUERY_INFO and QUERY_DIRECTORY responses: StructureSize 9 and a buffer. */
void encode_buffer_response(Writer &w, ByteView output);
Result<ByteView> decode_buffer_response(ByteView message);

/* --- QUERY_INFO (2.2.37, 2.2.38) ------------------------------------------------- */

constexpr uint8_t info_type_file = 1;
constexpr uint8_t info_type_filesystem = 2;
constexpr uint8_t info_type_security = 3;
constexpr uint8_t info_type_quota = 4;

struct QueryInfoRequest {
	uint8_t info_type = 0;
	uint8_t info_class = 0;
	uint32_t output_buffer_length = 0;
	ByteView input;
	uint32_t additional_information = 0;
	uint32_t flags = 0;
	FileId file_id;
};

void encode_query_info_request(Writer &w, const QueryInfoRequest &r);
Result<QueryInfoRequest> decode_query_info_request(ByteView message);

/* --- SET_INFO (2.2.39, 2.2.40) ----------------------------------------------------- */

struct SetInfoRequest {
	uint8_t info_type = 0;
	uint8_t info_class = 0;
	ByteView buffer;
	uint32_t additional_information = 0;
	FileId file_id;
};

void encode_set_info_request(Writer &w, const SetInfoRequest &r);
Result<SetInfoRequest> decode_set_info_request(ByteView message);
void encode_set_info_response(Writer &w);

/* --- IOCTL (2.2.31, 2.2.32) --------------------------------------------------------- */

constexpr uint32_t fsctl_dfs_get_referrals = 0x00060194;
constexpr uint32_t fsctl_validate_negotiate_info = 0x00140204;
constexpr uint32_t fsctl_query_network_interface_info = 0x001401FC;
constexpr uint32_t ioctl_flag_is_fsctl = 0x00000001;

struct IoctlRequest {
	uint32_t ctl_code = 0;
	FileId file_id;
	ByteView input;
	uint32_t max_input_response = 0;
	uint32_t max_output_response = 0;
	uint32_t flags = 0;
};

struct IoctlResponse {
	uint32_t ctl_code = 0;
	FileId file_id;
	ByteView output;
};

void encode_ioctl_request(Writer &w, const IoctlRequest &r);
Result<IoctlRequest> decode_ioctl_request(ByteView message);
void encode_ioctl_response(Writer &w, const IoctlResponse &r);
Result<IoctlResponse> decode_ioctl_response(ByteView message);

/* --- compounds (3.2.4.1.4, 3.3.5.2.7) --------------------------------------------------- */

/*
 * The messages of a (possibly) compounded message: each NextCommand must
 * be 8-byte aligned, at least a header long and inside the message.
 */
Result<std::vector<ByteView>> split_compound(ByteView message);

/* --- ERROR (2.2.2) ------------------------------------------------------------ */

void encode_error_response(Writer &w);
/* Any non-success status with StructureSize 9 (the body is not needed). */
std::error_code decode_error_response(ByteView message);

/* Credits a READ or WRITE of n bytes is charged ([MS-SMB2] 3.1.5.2). */
uint16_t credit_charge_for(uint64_t bytes);

} // namespace smb2

#endif
